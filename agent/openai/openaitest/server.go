// Package openaitest is an OpenAI-compatible chat completions server for
// tests, as net/http/httptest is an HTTP server: a host's test points the
// agent/openai driver (or any OpenAI-compatible client) at it and gets
// scripted turns back over the real wire. It speaks the real wire format
// (streamed chat.completion.chunk events with tool calls in fragments or
// whole, a usage chunk on request, "[DONE]", error bodies, 429 with
// Retry-After), replays scripted turns in order, and records the requests
// it gets, for assertions. Its Dialect makes it read structured-output
// requests and shape its answers as OpenAI, llama-server or Ollama's /v1
// does.
//
// To test an agent's loop without a wire, package agent/agenttest has a
// scripted Model that runs in process.
package openaitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"git.rickub.com/bots-garden/mini-me/internal/chunks"
)

// Turn is one scripted answer: an assistant turn, or an error.
type Turn struct {
	// Text and Reasoning are the answer and the reasoning, streamed in
	// pieces of ChunkSize bytes; the Dialect names the reasoning member.
	Text, Reasoning string
	// ToolCalls are the calls the turn asks for, streamed as the Dialect
	// streams them.
	ToolCalls []ToolCall
	// Finish is the finish reason; "" means the Dialect's: "tool_calls"
	// when there are calls (streamed by DialectOllama: "stop"), else
	// "stop".
	Finish string
	// Usage is reported when the client asks for it (always in a whole
	// response); nil means a count derived from the sizes of the request
	// and the answer.
	Usage *Usage

	// Status, if not 0, makes the turn an error answer with this HTTP
	// status and an OpenAI-style error body carrying Error.
	Status int
	// Error is the error message. With Status 0, it is sent inside the
	// stream, after the text, instead of finishing the turn.
	Error string
	// ErrorBody, if set with Status, is sent as the error answer's body
	// instead of the one made from Error: a server's own error shape,
	// such as llama-server's exceed_context_size_error.
	ErrorBody string
	// RetryAfter is the Retry-After header of an error answer.
	RetryAfter string
	// Hang holds the response open, after the text in a stream, until the
	// client goes away.
	Hang bool
}

// ToolCall is a tool call of a scripted turn.
type ToolCall struct {
	// ID is the call's id, Name the tool's name and Arguments the JSON
	// object of arguments, as text.
	ID, Name, Arguments string
}

// Usage is a token count, as sent on the wire.
type Usage struct {
	// PromptTokens is the size of the request, in tokens.
	PromptTokens int `json:"prompt_tokens"`
	// CompletionTokens is the size of the answer, in tokens.
	CompletionTokens int `json:"completion_tokens"`
	// TotalTokens is the total, normally the sum of the two.
	TotalTokens int `json:"total_tokens"`
}

// Request is a request the server got, decoded.
type Request struct {
	// Header is the request's HTTP header.
	Header http.Header
	// Body is the raw request body.
	Body []byte
	// Model is the model asked for.
	Model string
	// Stream is true when a streamed answer was asked for.
	Stream bool
	// IncludeUsage is stream_options.include_usage: a usage chunk was asked for.
	IncludeUsage bool
	// Messages are the conversation sent, in order.
	Messages []Message
	// Tools are the tools offered to the model.
	Tools []Tool
	// ToolChoice is the tool_choice member, raw; nil when absent.
	ToolChoice json.RawMessage
	// ResponseFormat is the response_format member, raw; nil when absent.
	ResponseFormat json.RawMessage
	// Schema is the JSON Schema the server's Dialect would hold the reply
	// to, taken from the request as that server takes it; nil when none.
	Schema json.RawMessage
	// Strict is response_format.json_schema.strict, in DialectOpenAI.
	Strict bool
}

// Dialect is the server the Server copies: how it reads a request's
// structured-output members and how it shapes its answers, streamed and
// whole. All three send usage in a stream only when
// stream_options.include_usage asks for it, in a last chunk with no
// choices, and end a stream with "[DONE]".
type Dialect string

// Dialects.
const (
	// DialectOpenAI reads response_format as OpenAI does: type "text",
	// "json_object" (no schema) or "json_schema", whose json_schema needs
	// a name of 1 to 64 letters, digits, '_' or '-' and an object schema;
	// with strict true, every object in it must require all its
	// properties and allow no other. Anything else is a 400 error.
	//
	// It answers as OpenAI does: a first chunk with the role and content
	// "", deltas with only what changed, each tool call as a fragment
	// with index, id, type and name (arguments "") then fragments of
	// arguments with the index only, "usage": null in every chunk but
	// the usage chunk when usage is asked for, and a whole answer whose
	// content is null when it only calls tools. Reasoning is sent as
	// reasoning_content, as vLLM and DeepSeek do (OpenAI sends none).
	DialectOpenAI Dialect = "openai"
	// DialectLlamaCpp reads them as llama-server does: a top-level
	// json_schema, overridden by response_format of type "json_object"
	// (its own schema member) or "json_schema" (json_schema.schema); any
	// other type but "text" is a 400 error.
	//
	// It answers as llama-server (tools/server) does: an SSE comment
	// ping first (sent while a long prompt is processed), a first chunk
	// with the role and content null, reasoning_content deltas, a tool
	// call's first fragment carrying id, type, name and the first piece
	// of arguments; a name longer than ChunkSize arrives in two
	// fragments, the second repeating the id and carrying the whole name
	// (its diff of a growing parse sends the new name whole); then
	// fragments of arguments with the index only. The last chunk and a
	// whole answer carry "timings"; a whole answer's content is "" when
	// it only calls tools.
	DialectLlamaCpp Dialect = "llama.cpp"
	// DialectOllama reads them as Ollama's /v1 does: response_format of
	// type "json_schema" gives json_schema.schema; "json_object" plain
	// JSON mode, no schema; any other type is ignored.
	//
	// It answers as Ollama's /v1 does: every delta carries the role and
	// content, reasoning is sent as "reasoning", each tool call comes
	// whole in a chunk of its own (index, id, name and all its
	// arguments, as compact JSON when they are an object), and a stream
	// that called tools ends with finish_reason "stop", as Ollama's did
	// until its pull request 7963 (2025); a whole answer says
	// "tool_calls", and its tool calls carry their index.
	DialectOllama Dialect = "ollama"
)

// Dialects returns every Dialect, for tests run in each; the slice is the
// caller's.
func Dialects() []Dialect { return []Dialect{DialectOpenAI, DialectLlamaCpp, DialectOllama} }

// Message is a message of a request.
type Message struct {
	// Role is "system", "user", "assistant" or "tool".
	Role string
	// Content is the text; empty when the message had none. A content
	// given as parts gives the text of its text parts, joined.
	Content string
	// Media are the images (their url) and files (their file_data) of a
	// content given as parts, in order.
	Media []string
	// Reasoning is the reasoning an assistant message gives back, in
	// reasoning_content or reasoning.
	Reasoning string
	// ToolCalls are the calls of an assistant message.
	ToolCalls []ToolCall
	// ToolCallID is the id of the call a tool message answers.
	ToolCallID string
}

// Tool is a tool definition of a request.
type Tool struct {
	// Name and Description are the function's name and description.
	Name, Description string
	// Parameters is the function's JSON Schema, raw.
	Parameters json.RawMessage
}

// Server is the test server. Set Turns (and ChunkSize) before Start; it is
// safe for concurrent use after. It also works as a plain http.Handler,
// for a listener of the test's own (a unix socket, say).
type Server struct {
	// Turns are answered in order, one per request; a request beyond the
	// last turn gets a 500 error.
	Turns []Turn
	// ChunkSize is the size in bytes of the pieces text and arguments are
	// streamed in; 0 means 4. Pieces never split a UTF-8 character.
	ChunkSize int
	// Dialect says how requests' structured-output members are read
	// (Request.Schema) and how answers are shaped; "" means
	// DialectOpenAI.
	Dialect Dialect

	mu       sync.Mutex
	next     int
	requests []Request
	srv      *httptest.Server
}

// Start serves on 127.0.0.1 and returns the API's base URL, ending in /v1.
func (s *Server) Start() string {
	s.srv = httptest.NewServer(s)
	return s.srv.URL + "/v1"
}

// Close stops the server, ending hung responses; it does nothing on a
// server that was not started.
func (s *Server) Close() {
	if s.srv == nil {
		return
	}
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// ServeHTTP answers POST /v1/chat/completions.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		writeError(w, http.StatusNotFound, "openaitest: no route for "+r.Method+" "+r.URL.Path)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	req, err := decodeRequest(body)
	if err == nil {
		err = s.readSchema(&req)
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "openaitest: "+err.Error())
		return
	}
	req.Header = r.Header.Clone()
	s.mu.Lock()
	s.requests = append(s.requests, req)
	n := s.next
	s.next++
	var turn Turn
	if n < len(s.Turns) {
		turn = s.Turns[n]
	}
	s.mu.Unlock()
	if n >= len(s.Turns) {
		writeError(w, http.StatusInternalServerError, fmt.Sprintf("openaitest: no scripted turn left for request %d", n+1))
		return
	}
	if turn.Status != 0 {
		if turn.RetryAfter != "" {
			w.Header().Set("Retry-After", turn.RetryAfter)
		}
		if turn.ErrorBody != "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(turn.Status)
			_, _ = io.WriteString(w, turn.ErrorBody)
			return
		}
		writeError(w, turn.Status, turn.Error)
		return
	}
	a := answer{turn: turn, id: "chatcmpl-openaitest-" + strconv.Itoa(n+1), model: req.Model, chunk: s.ChunkSize, promptSize: len(body), dialect: s.Dialect}
	if a.chunk <= 0 {
		a.chunk = 4
	}
	if req.Stream {
		a.stream(w, r, req.IncludeUsage)
	} else {
		a.whole(w, r)
	}
}

func decodeRequest(body []byte) (Request, error) {
	var wire struct {
		Model         string `json:"model"`
		Stream        bool   `json:"stream"`
		StreamOptions *struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
		Messages []struct {
			Role             string          `json:"role"`
			Content          json.RawMessage `json:"content"`
			ReasoningContent string          `json:"reasoning_content"`
			Reasoning        string          `json:"reasoning"`
			ToolCalls        []wireCall      `json:"tool_calls"`
			ToolCallID       string          `json:"tool_call_id"`
		} `json:"messages"`
		ToolChoice     json.RawMessage `json:"tool_choice"`
		ResponseFormat json.RawMessage `json:"response_format"`
		Tools          []struct {
			Type     string `json:"type"`
			Function struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &wire); err != nil {
		return Request{}, fmt.Errorf("malformed request: %w", err)
	}
	if len(wire.Messages) == 0 {
		return Request{}, fmt.Errorf("messages is empty")
	}
	req := Request{Body: body, Model: wire.Model, Stream: wire.Stream, ToolChoice: wire.ToolChoice, ResponseFormat: wire.ResponseFormat,
		IncludeUsage: wire.StreamOptions != nil && wire.StreamOptions.IncludeUsage}
	for i, m := range wire.Messages {
		if (len(m.Content) == 0 || string(m.Content) == "null") && len(m.ToolCalls) == 0 {
			return Request{}, fmt.Errorf("messages[%d] has no content", i)
		}
		msg := Message{Role: m.Role, ToolCallID: m.ToolCallID, Reasoning: m.ReasoningContent + m.Reasoning}
		if err := decodeContent(m.Content, &msg); err != nil {
			return Request{}, fmt.Errorf("messages[%d]: %w", i, err)
		}
		for _, c := range m.ToolCalls {
			var args string
			if err := json.Unmarshal(c.Function.Arguments, &args); err != nil {
				return Request{}, fmt.Errorf("messages[%d]: tool call arguments are not a string", i)
			}
			if !json.Valid([]byte(args)) {
				return Request{}, fmt.Errorf("messages[%d]: tool call arguments are not valid JSON", i)
			}
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: args})
		}
		req.Messages = append(req.Messages, msg)
	}
	for _, t := range wire.Tools {
		req.Tools = append(req.Tools, Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	return req, nil
}

// decodeContent reads a message's content: null, a string, or content
// parts (text, image_url, file) as OpenAI takes them.
func decodeContent(raw json.RawMessage, msg *Message) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] == '"' {
		return json.Unmarshal(raw, &msg.Content)
	}
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL *struct {
			URL string `json:"url"`
		} `json:"image_url"`
		File *struct {
			FileData string `json:"file_data"`
		} `json:"file"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return fmt.Errorf("content is neither a string nor parts: %w", err)
	}
	for j, p := range parts {
		switch {
		case p.Type == "text":
			msg.Content += p.Text
		case p.Type == "image_url" && p.ImageURL != nil && p.ImageURL.URL != "":
			msg.Media = append(msg.Media, p.ImageURL.URL)
		case p.Type == "file" && p.File != nil && p.File.FileData != "":
			msg.Media = append(msg.Media, p.File.FileData)
		default:
			return fmt.Errorf("content part %d is not a whole text, image_url or file part", j)
		}
	}
	return nil
}

type wireCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string          `json:"name,omitempty"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// writeError answers with an OpenAI-style error body.
func writeError(w http.ResponseWriter, status int, message string) {
	typ := "server_error"
	switch status {
	case http.StatusBadRequest, http.StatusNotFound:
		typ = "invalid_request_error"
	case http.StatusUnauthorized:
		typ = "authentication_error"
	case http.StatusTooManyRequests:
		typ = "rate_limit_error"
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"error": map[string]any{"message": message, "type": typ, "param": nil, "code": status},
	})
}

// answer writes one scripted turn.
type answer struct {
	turn       Turn
	id, model  string
	chunk      int
	promptSize int
	dialect    Dialect
}

const created = 1700000000

func (a *answer) finish(streamed bool) string {
	switch {
	case a.turn.Finish != "":
		return a.turn.Finish
	case len(a.turn.ToolCalls) > 0 && !(streamed && a.dialect == DialectOllama):
		return "tool_calls"
	}
	return "stop"
}

// reasoningKey is the member the dialect sends reasoning in.
func (a *answer) reasoningKey() string {
	if a.dialect == DialectOllama {
		return "reasoning"
	}
	return "reasoning_content"
}

// arguments are a call's arguments as the dialect sends them: Ollama
// parses them and sends them again, compact.
func (a *answer) arguments(c ToolCall) string {
	var b bytes.Buffer
	if a.dialect == DialectOllama && strings.HasPrefix(strings.TrimSpace(c.Arguments), "{") && json.Compact(&b, []byte(c.Arguments)) == nil {
		return b.String()
	}
	return c.Arguments
}

// timings is llama-server's speed report, sent with its last chunk and
// its whole answers.
var timings = map[string]any{"prompt_n": 1, "prompt_ms": 1.0, "predicted_n": 1, "predicted_ms": 1.0}

func (a *answer) usage() Usage {
	if a.turn.Usage != nil {
		return *a.turn.Usage
	}
	n := len(a.turn.Text) + len(a.turn.Reasoning)
	for _, c := range a.turn.ToolCalls {
		n += len(c.Name) + len(c.Arguments)
	}
	u := Usage{PromptTokens: a.promptSize / 4, CompletionTokens: n/4 + 1}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

func (a *answer) stream(w http.ResponseWriter, r *http.Request, includeUsage bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	ollama := a.dialect == DialectOllama
	chunk := func(delta map[string]any, finish any) map[string]any {
		if ollama {
			delta["role"] = "assistant"
			if _, ok := delta["content"]; !ok {
				delta["content"] = ""
			}
		}
		c := map[string]any{"id": a.id, "object": "chat.completion.chunk", "created": created, "model": a.model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
		if includeUsage && (a.dialect == "" || a.dialect == DialectOpenAI) {
			c["usage"] = nil
		}
		return c
	}
	switch a.dialect {
	case DialectLlamaCpp:
		fmt.Fprint(w, ":\n\n")
		send(chunk(map[string]any{"role": "assistant", "content": nil}, nil))
	case DialectOllama:
	default:
		send(chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	}
	for _, p := range chunks.Split(a.turn.Reasoning, a.chunk) {
		send(chunk(map[string]any{a.reasoningKey(): p}, nil))
	}
	for _, p := range chunks.Split(a.turn.Text, a.chunk) {
		send(chunk(map[string]any{"content": p}, nil))
	}
	if a.turn.Hang {
		<-r.Context().Done()
		return
	}
	for i, c := range a.turn.ToolCalls {
		for _, f := range a.callFragments(i, c) {
			send(chunk(map[string]any{"tool_calls": []any{f}}, nil))
		}
	}
	if a.turn.Error != "" {
		send(map[string]any{"error": map[string]any{"message": a.turn.Error, "type": "server_error", "code": 500}})
		return
	}
	last := chunk(map[string]any{}, a.finish(true))
	if includeUsage {
		send(last)
		last = map[string]any{"id": a.id, "object": "chat.completion.chunk", "created": created, "model": a.model,
			"choices": []any{}, "usage": a.usage()}
	}
	if a.dialect == DialectLlamaCpp {
		last["timings"] = timings
	}
	send(last)
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// callFragments are the tool_calls entries call i is streamed in.
func (a *answer) callFragments(i int, c ToolCall) []map[string]any {
	fn := func(name, args string) map[string]any {
		f := map[string]any{}
		if name != "" {
			f["name"] = name
		}
		if args != "" {
			f["arguments"] = args
		}
		return f
	}
	args := chunks.Split(a.arguments(c), a.chunk)
	var out []map[string]any
	switch a.dialect {
	case DialectOllama:
		return []map[string]any{{"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": a.arguments(c)}}}
	case DialectLlamaCpp:
		if len(c.Name) > a.chunk {
			out = append(out, map[string]any{"index": i, "id": c.ID, "type": "function", "function": fn(c.Name[:len(c.Name)/2], "")})
		}
		first := ""
		if len(args) > 0 {
			first, args = args[0], args[1:]
		}
		out = append(out, map[string]any{"index": i, "id": c.ID, "type": "function", "function": fn(c.Name, first)})
	default:
		out = append(out, map[string]any{"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""}})
	}
	for _, p := range args {
		out = append(out, map[string]any{"index": i, "function": fn("", p)})
	}
	return out
}

func (a *answer) whole(w http.ResponseWriter, r *http.Request) {
	if a.turn.Hang {
		<-r.Context().Done()
		return
	}
	if a.turn.Error != "" {
		writeError(w, http.StatusInternalServerError, a.turn.Error)
		return
	}
	msg := map[string]any{"role": "assistant", "content": a.turn.Text}
	if a.turn.Reasoning != "" {
		msg[a.reasoningKey()] = a.turn.Reasoning
	}
	if len(a.turn.ToolCalls) > 0 {
		calls := make([]any, len(a.turn.ToolCalls))
		for i, c := range a.turn.ToolCalls {
			call := map[string]any{"id": c.ID, "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": a.arguments(c)}}
			if a.dialect == DialectOllama {
				call["index"] = i
			}
			calls[i] = call
		}
		msg["tool_calls"] = calls
		if a.turn.Text == "" && (a.dialect == "" || a.dialect == DialectOpenAI) {
			msg["content"] = nil
		}
	}
	resp := map[string]any{"id": a.id, "object": "chat.completion", "created": created, "model": a.model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": a.finish(false)}},
		"usage":   a.usage()}
	if a.dialect == DialectLlamaCpp {
		resp["timings"] = timings
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

var schemaName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// readSchema fills req.Schema and req.Strict as s.Dialect's server reads
// the request, or says why that server would refuse it.
func (s *Server) readSchema(req *Request) error {
	var body struct {
		JSONSchema     json.RawMessage `json:"json_schema"`
		ResponseFormat *struct {
			Type       string          `json:"type"`
			Schema     json.RawMessage `json:"schema"`
			JSONSchema *struct {
				Name   string          `json:"name"`
				Schema json.RawMessage `json:"schema"`
				Strict bool            `json:"strict"`
			} `json:"json_schema"`
		} `json:"response_format"`
	}
	if err := json.Unmarshal(req.Body, &body); err != nil {
		return fmt.Errorf("malformed response_format: %w", err)
	}
	rf := body.ResponseFormat
	switch s.Dialect {
	case DialectLlamaCpp:
		req.Schema = body.JSONSchema
		switch {
		case rf == nil || rf.Type == "" || rf.Type == "text":
		case rf.Type == "json_object":
			if rf.Schema != nil || len(req.Schema) == 0 {
				req.Schema = rf.Schema
			}
		case rf.Type == "json_schema":
			req.Schema = nil
			if rf.JSONSchema != nil {
				req.Schema = rf.JSONSchema.Schema
			}
		default:
			return fmt.Errorf(`response_format type must be one of "text" or "json_object", but got: %s`, rf.Type)
		}
		if req.Schema == nil && rf != nil && rf.Type != "" && rf.Type != "text" {
			req.Schema = json.RawMessage(`{"type":"object"}`) // an absent schema means any object
		}
	case DialectOllama:
		if rf != nil && rf.Type == "json_schema" && rf.JSONSchema != nil {
			req.Schema = rf.JSONSchema.Schema
		}
	default:
		if rf == nil || rf.Type == "text" || rf.Type == "json_object" {
			return nil
		}
		if rf.Type != "json_schema" {
			return fmt.Errorf("invalid value for response_format.type: %q", rf.Type)
		}
		if rf.JSONSchema == nil || !schemaName.MatchString(rf.JSONSchema.Name) {
			return fmt.Errorf("response_format.json_schema.name: want 1 to 64 letters, digits, '_' or '-'")
		}
		var root any
		if json.Unmarshal(rf.JSONSchema.Schema, &root) != nil {
			return fmt.Errorf("response_format.json_schema.schema is not JSON")
		}
		if o, _ := root.(map[string]any); o == nil || o["type"] != "object" {
			return fmt.Errorf("invalid schema for response_format %q: the root must be an object", rf.JSONSchema.Name)
		}
		if rf.JSONSchema.Strict {
			if problem := strictProblem(root, "#"); problem != "" {
				return fmt.Errorf("invalid schema for response_format %q: %s", rf.JSONSchema.Name, problem)
			}
		}
		req.Schema, req.Strict = rf.JSONSchema.Schema, rf.JSONSchema.Strict
	}
	return nil
}

// strictProblem says why a schema breaks OpenAI's strict mode rules on
// objects, at path; "" when it does not.
func strictProblem(v any, path string) string {
	switch v := v.(type) {
	case []any:
		for i, x := range v {
			if p := strictProblem(x, path+"/"+strconv.Itoa(i)); p != "" {
				return p
			}
		}
	case map[string]any:
		if props, ok := v["properties"].(map[string]any); ok {
			if v["additionalProperties"] != false {
				return "In context=" + path + ", 'additionalProperties' is required to be supplied and to be false"
			}
			req, _ := v["required"].([]any)
			for name := range props {
				if !slices.Contains(req, any(name)) {
					return "In context=" + path + ", 'required' is required to include every key in properties; missing " + strconv.Quote(name)
				}
			}
		}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if p := strictProblem(v[k], path+"/"+k); p != "" {
				return p
			}
		}
	}
	return ""
}

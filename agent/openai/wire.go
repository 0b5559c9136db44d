package openai

import (
	"bytes"
	"encoding/json"
	"fmt"

	"git.rickub.com/bots-garden/mini-me/agent"
)

// The chat completions wire format, as far as the client uses it.

type wireRequest struct {
	Model         string         `json:"model"`
	Messages      []wireMessage  `json:"messages"`
	Tools         []wireTool     `json:"tools,omitempty"`
	ToolChoice    any            `json:"tool_choice,omitempty"`
	Stream        bool           `json:"stream"`
	StreamOptions *streamOptions `json:"stream_options,omitempty"`
	Temperature   *float64       `json:"temperature,omitempty"`
	TopP          *float64       `json:"top_p,omitempty"`
	MaxTokens     int            `json:"max_tokens,omitempty"`
	Seed          *int           `json:"seed,omitempty"`
	Stop          []string       `json:"stop,omitempty"`
	// ResponseFormat is OpenAI's form, which vLLM, llama-server (and so
	// Docker Model Runner and LM Studio) and Ollama's /v1 take too: each
	// reads json_schema.schema.
	ResponseFormat *responseFormat `json:"response_format,omitempty"`
}

type responseFormat struct {
	Type       string          `json:"type"`
	JSONSchema *jsonSchemaSpec `json:"json_schema,omitempty"`
}

type jsonSchemaSpec struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict bool            `json:"strict"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// wireMessage always carries content, as a string: some servers reject a
// message without it, even an assistant message that only calls tools.
type wireMessage struct {
	Role       agent.Role     `json:"role"`
	Content    string         `json:"content"`
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type wireToolCall struct {
	Index    *int         `json:"index,omitempty"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function wireFunction `json:"function"`
}

// wireFunction is a function call. Arguments is a JSON string in the
// OpenAI format; some servers send a JSON object instead, which is
// accepted too (see argumentsText).
type wireFunction struct {
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

type wireTool struct {
	Type     string           `json:"type"`
	Function wireToolFunction `json:"function"`
}

type wireToolFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// wireResponse is a chat.completion or a chat.completion.chunk.
type wireResponse struct {
	Choices []wireChoice    `json:"choices"`
	Usage   *agent.Usage    `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

type wireChoice struct {
	Index        int       `json:"index"`
	Delta        wireDelta `json:"delta"`   // chunk
	Message      wireDelta `json:"message"` // whole response
	FinishReason *string   `json:"finish_reason"`
}

type wireDelta struct {
	Content string `json:"content"`
	// ReasoningContent is llama-server's, vLLM's and DeepSeek's name for
	// the reasoning; Reasoning is Ollama's and OpenRouter's.
	ReasoningContent string         `json:"reasoning_content"`
	Reasoning        string         `json:"reasoning"`
	ToolCalls        []wireToolCall `json:"tool_calls"`
}

// argumentsText returns arguments as text: a JSON string is unquoted, any
// other JSON value (an object) is kept as written, null is empty.
func argumentsText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] != '"' {
		return string(raw), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("tool call arguments: %w", err)
	}
	return s, nil
}

// wireToolChoice is c as OpenAI takes it, and the servers that follow it:
// a string for a mode, an object for a named tool; nil for "".
func wireToolChoice(c agent.ToolChoice) any {
	switch c {
	case "":
		return nil
	case agent.ToolChoiceAuto, agent.ToolChoiceNone, agent.ToolChoiceRequired:
		return string(c)
	}
	return map[string]any{"type": "function", "function": map[string]string{"name": string(c)}}
}

// requestBody encodes req for the endpoint.
func (m *Model) requestBody(req *agent.ChatRequest) ([]byte, error) {
	w := wireRequest{
		Model:       m.Model,
		Messages:    make([]wireMessage, len(req.Messages)),
		Stream:      !m.NoStream,
		Temperature: m.Temperature,
		TopP:        m.TopP,
		MaxTokens:   m.MaxTokens,
		Seed:        m.Seed,
		Stop:        m.Stop,
	}
	if req.MaxTokens > 0 && (w.MaxTokens == 0 || req.MaxTokens < w.MaxTokens) {
		w.MaxTokens = req.MaxTokens
	}
	if w.Stream {
		w.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	for i, msg := range req.Messages {
		wm := wireMessage{Role: msg.Role, Content: msg.Content, ToolCallID: msg.ToolCallID}
		for _, c := range msg.ToolCalls {
			args, err := json.Marshal(c.Arguments)
			if err != nil {
				return nil, fmt.Errorf("encoding tool call %q: %w", c.ID, err)
			}
			wm.ToolCalls = append(wm.ToolCalls, wireToolCall{ID: c.ID, Type: "function",
				Function: wireFunction{Name: c.Name, Arguments: args}})
		}
		w.Messages[i] = wm
	}
	for _, t := range req.Tools {
		w.Tools = append(w.Tools, wireTool{Type: "function",
			Function: wireToolFunction(t)})
	}
	if len(req.Tools) > 0 {
		w.ToolChoice = wireToolChoice(req.ToolChoice)
	}
	if s := req.Schema; s != nil && !m.NoResponseFormat {
		w.ResponseFormat = &responseFormat{Type: "json_schema", JSONSchema: &jsonSchemaSpec{Name: s.Name, Schema: s.Schema, Strict: s.Strict}}
	}
	body, err := marshal(w)
	if err != nil {
		return nil, fmt.Errorf("encoding: %w", err)
	}
	if len(m.Extra) == 0 {
		return body, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return nil, fmt.Errorf("encoding: %w", err)
	}
	for k, v := range m.Extra {
		if _, taken := fields[k]; taken || k == "stream_options" || k == "tools" || k == "tool_choice" {
			return nil, fmt.Errorf("Model.Extra sets %q, which the client sets itself", k)
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("Model.Extra[%q]: %w", k, err)
		}
		fields[k] = raw
	}
	return marshal(fields)
}

// marshal encodes v without escaping <, > and &, which tool output and
// prompts hold often, so that server logs stay readable.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

package openai

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

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

// wireMessage always carries content: some servers reject a message
// without it, even an assistant message that only calls tools. It is a
// string, or the []wireContent of a user message with images or files.
// An assistant message gives back its reasoning in the member the server
// sent it in (see reasoningField).
type wireMessage struct {
	Role             agent.Role     `json:"role"`
	Content          any            `json:"content"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	Reasoning        string         `json:"reasoning,omitempty"`
	ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string         `json:"tool_call_id,omitempty"`
}

// wireContent is a content part of a user message: text, an image or a
// file, as OpenAI takes them (and vLLM, llama-server with a multimodal
// model, Ollama's /v1 for images).
type wireContent struct {
	Type     string    `json:"type"`
	Text     string    `json:"text,omitempty"`
	ImageURL *wireURL  `json:"image_url,omitempty"`
	File     *wireFile `json:"file,omitempty"`
}

type wireURL struct {
	URL string `json:"url"`
}

type wireFile struct {
	Filename string `json:"filename,omitempty"`
	FileData string `json:"file_data,omitempty"`
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
	Usage   *wireUsage      `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

// wireUsage is OpenAI's usage, with the details of the cache and the
// reasoning, and DeepSeek's cache count.
type wireUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptCacheHit      int `json:"prompt_cache_hit_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

func (u *wireUsage) usage() agent.Usage {
	return agent.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens,
		CacheReadTokens: max(u.PromptTokensDetails.CachedTokens, u.PromptCacheHit),
		ReasoningTokens: u.CompletionTokensDetails.ReasoningTokens}
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
	for i := range req.Messages {
		wm, err := wireMessageOf(&req.Messages[i])
		if err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
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

// openAIProvider is the provider name [Model] gives the reasoning parts
// it writes, and the one whose parts it sends back (see Part.SentTo).
const openAIProvider = "openai-compatible"

// reasoningMeta is what a reasoning part carries for openAIProvider: the
// member the server sent it in, where it goes back.
type reasoningMeta struct {
	Field string `json:"field"`
}

// Members of a message that servers use for reasoning.
const (
	fieldReasoningContent = "reasoning_content" // llama-server, vLLM, DeepSeek
	fieldReasoning        = "reasoning"         // Ollama, OpenRouter
)

// wireMessageOf maps msg to the wire: text, tool calls, the images and
// files of a user message, and the reasoning this driver wrote (only that:
// see Part.SentTo), given back in the member it came in. A file given by
// a URL other than a data URL is an error: the API takes a file's data.
func wireMessageOf(msg *agent.Message) (wireMessage, error) {
	wm := wireMessage{Role: msg.Role, ToolCallID: msg.ToolCallID}
	var text strings.Builder
	var content []wireContent
	for i := range msg.Parts {
		p := &msg.Parts[i]
		if !p.SentTo(openAIProvider) {
			continue
		}
		switch p.Kind {
		case agent.PartText, agent.PartToolResult:
			text.WriteString(p.Text)
			if content != nil {
				content = append(content, wireContent{Type: "text", Text: p.Text})
			}
		case agent.PartReasoning:
			var meta reasoningMeta
			_ = json.Unmarshal(p.MetadataFor(openAIProvider), &meta) // absent or foreign: the default member
			if meta.Field == fieldReasoning {
				wm.Reasoning += p.Text
			} else {
				wm.ReasoningContent += p.Text
			}
		case agent.PartToolCall:
			args, err := json.Marshal(p.Arguments)
			if err != nil {
				return wm, fmt.Errorf("encoding tool call %q: %w", p.ID, err)
			}
			wm.ToolCalls = append(wm.ToolCalls, wireToolCall{ID: p.ID, Type: "function",
				Function: wireFunction{Name: p.Name, Arguments: args}})
		case agent.PartImage, agent.PartFile:
			if p.Kind == agent.PartFile && p.URL != "" && !strings.HasPrefix(p.URL, "data:") {
				return wm, fmt.Errorf("file %q: the chat completions API takes a file's data, not a URL", p.Name)
			}
			if content == nil {
				content = textContent(msg.Parts[:i])
			}
			content = append(content, mediaContent(p))
		}
	}
	wm.Content = text.String()
	if content != nil {
		wm.Content = content
	}
	return wm, nil
}

// textContent returns the text parts of parts as content parts.
func textContent(parts []agent.Part) []wireContent {
	content := make([]wireContent, 0, len(parts)+1)
	for _, p := range parts {
		if p.Kind == agent.PartText {
			content = append(content, wireContent{Type: "text", Text: p.Text})
		}
	}
	return content
}

// mediaContent returns the content part of an image or a file: its URL,
// or its data as a data URL.
func mediaContent(p *agent.Part) wireContent {
	url := p.URL
	if url == "" {
		url = "data:" + p.MediaType + ";base64," + base64.StdEncoding.EncodeToString(p.Data)
	}
	if p.Kind == agent.PartImage {
		return wireContent{Type: "image_url", ImageURL: &wireURL{URL: url}}
	}
	return wireContent{Type: "file", File: &wireFile{Filename: p.Name, FileData: url}}
}

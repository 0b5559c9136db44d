package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// SampleRequest is a server's request for a completion by the host's
// model (sampling/createMessage), in either era. The host decides the
// model, may change or drop the system prompt, and must not produce more
// than MaxTokens tokens.
type SampleRequest struct {
	// Server is Options.ServerName: the server that asks, as the host
	// named it (a Toolset's configuration name). It is not part of the
	// message and the server cannot set it.
	Server string `json:"-"`
	// Messages are the conversation the server wants completed.
	Messages []SamplingMessage `json:"messages"`
	// ModelPreferences are the server's hints; the host may ignore them.
	ModelPreferences *ModelPreferences `json:"modelPreferences,omitempty"`
	// SystemPrompt is the system prompt the server asks for, if any.
	SystemPrompt string `json:"systemPrompt,omitempty"`
	// IncludeContext is "none" (or empty), "thisServer" or "allServers";
	// the last two are deprecated, and sent only to a client that set
	// Options.SampleContext.
	IncludeContext string `json:"includeContext,omitempty"`
	// Temperature is the server's wish, nil when none.
	Temperature *float64 `json:"temperature,omitempty"`
	// MaxTokens is the most tokens the completion may have; always > 0
	// in a request a handler receives.
	MaxTokens int `json:"maxTokens"`
	// StopSequences end the completion when produced.
	StopSequences []string `json:"stopSequences,omitempty"`
	// Metadata is provider-specific data, raw.
	Metadata json.RawMessage `json:"metadata,omitempty"`
	// Tools are the server's tools offered to the model for this request
	// only (sent only to a client that set Options.SampleTools); a
	// tool_use in the completion is run by the server, not the host.
	Tools []Tool `json:"tools,omitempty"`
	// ToolChoice says whether the model may, must or must not use Tools.
	ToolChoice *ToolChoice `json:"toolChoice,omitempty"`
}

// ModelPreferences are a server's hints on the model to sample with.
type ModelPreferences struct {
	// Hints are model names (or parts of names) in order of preference.
	Hints []ModelHint `json:"hints,omitempty"`
	// CostPriority, SpeedPriority and IntelligencePriority weigh cost,
	// latency and capability, each from 0 to 1; nil when not given.
	CostPriority         *float64 `json:"costPriority,omitempty"`
	SpeedPriority        *float64 `json:"speedPriority,omitempty"`
	IntelligencePriority *float64 `json:"intelligencePriority,omitempty"`
}

// ModelHint names a model, or part of a name, a server would like.
type ModelHint struct {
	// Name is a full or partial model name.
	Name string `json:"name,omitempty"`
}

// ToolChoice controls the use of a sampling request's tools.
type ToolChoice struct {
	// Mode is "auto" (the default), "required" or "none".
	Mode string `json:"mode,omitempty"`
}

// SamplingMessage is one message of a sampling conversation.
type SamplingMessage struct {
	// Role is "user" or "assistant".
	Role string `json:"role"`
	// Content is the message's blocks: text, image, audio, tool_use
	// (assistant) or tool_result (user, and then only tool_result).
	Content SamplingContents `json:"content"`
	// Meta is the message's _meta object.
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// SamplingContent is one block of a sampling message or completion.
// Fields not used by Type are empty.
type SamplingContent struct {
	// Type is "text", "image", "audio", "tool_use" or "tool_result".
	Type string `json:"type"`
	// Text is set for "text".
	Text string `json:"text,omitempty"`
	// Data (base64) and MIMEType are set for "image" and "audio".
	Data     string `json:"data,omitempty"`
	MIMEType string `json:"mimeType,omitempty"`
	// ID, Name and Input are set for "tool_use": the call's id, the tool
	// and its arguments.
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// ToolUseID, Content, StructuredContent and IsError are set for
	// "tool_result": the id of the tool_use answered and its result.
	ToolUseID         string          `json:"toolUseId,omitempty"`
	Content           []Content       `json:"content,omitempty"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
	// Annotations are the block's hints, raw.
	Annotations json.RawMessage `json:"annotations,omitempty"`
	// Meta is the block's _meta object.
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// MarshalJSON writes the block; a "text" block always has its text, even
// empty (the schema requires it: a model may answer with nothing).
func (c SamplingContent) MarshalJSON() ([]byte, error) {
	type plain SamplingContent
	if c.Type != "text" || c.Text != "" {
		return json.Marshal(plain(c))
	}
	return json.Marshal(struct {
		plain
		Text string `json:"text"`
	}{plain(c), ""})
}

// SamplingContents are the blocks of a message. On the wire they are one
// block or an array of blocks; one block is sent alone, which every
// revision reads.
type SamplingContents []SamplingContent

// UnmarshalJSON reads one block or an array of blocks.
func (s *SamplingContents) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		var one SamplingContent
		if err := json.Unmarshal(b, &one); err != nil {
			return err
		}
		*s = SamplingContents{one}
		return nil
	}
	var many []SamplingContent
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*s = many
	return nil
}

// MarshalJSON writes one block alone, several as an array.
func (s SamplingContents) MarshalJSON() ([]byte, error) {
	if len(s) == 1 {
		return json.Marshal(s[0])
	}
	if s == nil {
		return []byte("[]"), nil
	}
	return json.Marshal([]SamplingContent(s))
}

// SampleResult is the host's completion.
type SampleResult struct {
	// Role is "assistant" (the default when empty).
	Role string `json:"role"`
	// Content is the completion: text, or tool_use blocks the server is
	// to run.
	Content SamplingContents `json:"content"`
	// Model names the model that produced it; required.
	Model string `json:"model"`
	// StopReason is "endTurn", "stopSequence", "maxTokens", "toolUse" or
	// another provider's reason, if known.
	StopReason string `json:"stopReason,omitempty"`
	// Meta is the result's _meta object.
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// ErrRefused is what a Sample handler returns (wrapped or not) when the
// user or the host's policy refuses the request: a legacy server then
// gets the spec's refusal (code -1), and a 2026-07-28 call that asked for
// the completion fails with an error that matches it.
var ErrRefused = errors.New("mcp: the user refused the request")

// codeUserRejected is the JSON-RPC code of a refused sampling request.
const codeUserRejected = -1

// errInvalidRequest marks a server request the client refuses as invalid
// params (-32602): a mode or feature not declared, or a malformed body.
var errInvalidRequest = errors.New("invalid request")

// maxSamplingMessages bounds the messages of one sampling request.
const maxSamplingMessages = 1000

// sample checks a sampling request and passes it to the host's handler.
func (c *Client) sample(ctx context.Context, params json.RawMessage) (*SampleResult, error) {
	if c.opts.Sample == nil {
		return nil, fmt.Errorf("%w: sampling", ErrInputRequired)
	}
	var req SampleRequest
	if err := json.Unmarshal(params, &req); err != nil {
		return nil, fmt.Errorf("%w: sampling params: %w", errInvalidRequest, err)
	}
	if err := c.checkSample(&req); err != nil {
		return nil, err
	}
	req.Server = c.opts.ServerName
	res, err := c.opts.Sample(ctx, &req)
	if err != nil {
		return nil, err
	}
	if res == nil || len(res.Content) == 0 || res.Model == "" {
		return nil, errors.New("mcp: the sampling handler returned no content or no model")
	}
	if res.Role == "" {
		res.Role = "assistant"
	}
	return res, nil
}

// checkSample refuses what the client did not declare or the spec
// forbids: tools without Options.SampleTools, a context without
// Options.SampleContext, tool results that answer no tool use.
func (c *Client) checkSample(req *SampleRequest) error {
	switch {
	case len(req.Messages) == 0:
		return fmt.Errorf("%w: sampling without messages", errInvalidRequest)
	case len(req.Messages) > maxSamplingMessages:
		return fmt.Errorf("%w: sampling with more than %d messages", errInvalidRequest, maxSamplingMessages)
	case req.MaxTokens <= 0:
		return fmt.Errorf("%w: sampling maxTokens must be positive", errInvalidRequest)
	case (len(req.Tools) > 0 || req.ToolChoice != nil) && !c.opts.SampleTools:
		return fmt.Errorf("%w: tools in sampling were not declared", errInvalidRequest)
	case req.IncludeContext != "" && req.IncludeContext != "none" && !c.opts.SampleContext:
		return fmt.Errorf("%w: includeContext %q was not declared", errInvalidRequest, clip(req.IncludeContext, 40))
	}
	var uses map[string]bool // tool_use ids of the previous message
	for i, m := range req.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return fmt.Errorf("%w: sampling message %d has role %q", errInvalidRequest, i, clip(m.Role, 40))
		}
		results := 0
		for _, b := range m.Content {
			if b.Type != "tool_result" {
				continue
			}
			results++
			if !uses[b.ToolUseID] {
				return fmt.Errorf("%w: sampling message %d: tool_result %q answers no tool_use of the message before", errInvalidRequest, i, clip(b.ToolUseID, 64))
			}
			delete(uses, b.ToolUseID)
		}
		if results > 0 && results != len(m.Content) {
			return fmt.Errorf("%w: sampling message %d mixes tool_result with other content", errInvalidRequest, i)
		}
		if len(uses) > 0 {
			return fmt.Errorf("%w: sampling message %d leaves a tool_use of the message before unanswered", errInvalidRequest, i)
		}
		uses = nil
		for _, b := range m.Content {
			if b.Type == "tool_use" {
				if uses == nil {
					uses = map[string]bool{}
				}
				uses[b.ID] = true
			}
		}
	}
	return nil
}

package agent

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// Sampler defaults, used where a field is zero.
const (
	DefaultSamplingMaxTokens = 1024
	DefaultSamplingPerMinute = 10
	// DefaultSamplingMaxInputBytes bounds what one request sends to the
	// model: 64 KiB, about 20,000 tokens, holds a long document to
	// summarise, while a server that sends 1 MiB ten times a minute is
	// refused each time instead of spending the user's model.
	DefaultSamplingMaxInputBytes = 64 << 10
)

// Sampler answers the sampling requests of MCP servers (a server asking
// the host's model for a completion) with a [Model], once its [Sampler.Policy]
// allowed each. Set its Sample method as the client's handler: in
// toolset.Options.Client.Sample (the Toolset names each server, which
// the Sampler needs), or mcp.Options.Sample with Options.ServerName set.
//
// For each request, in order, a Sampler:
//
//   - refuses a server not in Servers, and a local-only one (egress:
//     local) when Model is not on this machine (Capabilities.Local);
//   - refuses a server that sent PerMinute requests in the last minute;
//   - refuses a request whose input (system prompt, messages and tools)
//     is more than MaxInputBytes;
//   - caps the request's maxTokens at MaxTokens;
//   - asks Policy (permission.Request.Sampling: the server, its system
//     prompt and messages as text, the tools it offers, the input's size
//     and the token limit), so that the server's sampling mode (ask
//     unless the configuration's sampling key says auto: a server whose
//     tools run without asking is still asked about) and the session's
//     answers apply; the answer may edit the system prompt and lower the
//     limit;
//   - sends the request alone to Model: the server's messages, its system
//     prompt, and its tools for this request only. A tool call of the
//     model goes back to the server as tool_use, for the server to run:
//     the host runs nothing. includeContext is answered as "none": the
//     host's conversation never goes to the server;
//   - shows the completion for review when the answer asked for it
//     (permission.Decision.Review, Policy.ReviewSampling), which may edit
//     or withhold it.
//
// A refusal, at any step, is an error matching mcp.ErrRefused: a legacy
// server gets the spec's refusal, a 2026-07-28 call fails with it. The
// model's preferences of the server are hints and are ignored; the model
// is always Model. A Sampler is safe for concurrent use; its zero value
// refuses everything (no Model).
type Sampler struct {
	// Model answers the requests.
	Model Model
	// ModelName names Model in the results and the questions ("model"
	// when empty).
	ModelName string
	// Policy approves each request; nil refuses them all.
	Policy *permission.Policy
	// Servers are the servers whose requests are answered, with their
	// egress; a request of any other is refused.
	Servers []config.Server
	// MaxTokens caps the tokens of one completion;
	// DefaultSamplingMaxTokens when zero.
	MaxTokens int
	// PerMinute bounds the requests of one server in any minute, asked or
	// not; DefaultSamplingPerMinute when zero.
	PerMinute int
	// MaxInputBytes bounds the input of one request, in bytes of text
	// sent to the model: the system prompt, the messages (text blocks
	// joined by newlines, tool calls' ids, names and arguments, tool
	// results as text with their call's id) and the offered tools' names,
	// descriptions and schemas. A larger request is refused
	// before anyone is asked; DefaultSamplingMaxInputBytes when zero.
	MaxInputBytes int

	mu     sync.Mutex
	recent map[string][]time.Time
}

// Sample answers one sampling request; it is an mcp.Options.Sample.
func (s *Sampler) Sample(ctx context.Context, req *mcp.SampleRequest) (*mcp.SampleResult, error) {
	if s.Model == nil || s.Policy == nil {
		return nil, refused("the host answers no sampling request")
	}
	if err := s.admit(req.Server); err != nil {
		return nil, err
	}
	name := s.ModelName
	if name == "" {
		name = "model"
	}
	limit := s.MaxTokens
	if limit <= 0 {
		limit = DefaultSamplingMaxTokens
	}
	asked := &permission.Sampling{SystemPrompt: req.SystemPrompt, MaxTokens: min(req.MaxTokens, limit), Model: name}
	creq, err := chatRequest(req, asked)
	if err != nil {
		return nil, err // nothing to ask about: the model could not take it
	}
	// The bound counts the request as the model would be sent it, not
	// the server's blocks: ids and separators travel too.
	size := chatInputSize(creq)
	maxInput := s.MaxInputBytes
	if maxInput <= 0 {
		maxInput = DefaultSamplingMaxInputBytes
	}
	if size > maxInput {
		return nil, refused(fmt.Sprintf("the request of server %q sends %d bytes to the model, more than the host's limit of %d", req.Server, size, maxInput))
	}
	asked.InputBytes, asked.InputTokens = size, estimateTokens(size)
	for _, m := range req.Messages {
		asked.Messages = append(asked.Messages, permission.SamplingMessage{Role: m.Role, Text: samplingText(m.Content)})
	}
	for _, t := range req.Tools {
		asked.Tools = append(asked.Tools, t.Name)
	}
	preq := permission.Request{Server: req.Server, Tool: permission.SamplingTool, Sampling: asked}
	d, err := s.Policy.Check(ctx, preq)
	if !d.Allowed() {
		return nil, refusedBy(d, err)
	}
	if e := d.Edited; e != nil {
		asked.SystemPrompt = e.SystemPrompt
		if e.MaxTokens > 0 && e.MaxTokens < asked.MaxTokens {
			asked.MaxTokens = e.MaxTokens
		}
	}
	if creq, err = chatRequest(req, asked); err != nil {
		return nil, err
	}
	reply, err := s.Model.Chat(ctx, creq, nil)
	if err != nil {
		return nil, fmt.Errorf("agent: sampling for %q: %w", req.Server, err)
	}
	res := samplingResult(reply, req, name)
	if d.Review {
		asked.Completion = samplingText(res.Content)
		rd, err := s.Policy.ReviewSampling(ctx, preq)
		if !rd.Allowed() {
			return nil, refusedBy(rd, err)
		}
		if rd.Edited != nil && rd.Edited.Completion != asked.Completion {
			res.Content = mcp.SamplingContents{{Type: "text", Text: rd.Edited.Completion}}
			res.StopReason = "endTurn"
		}
	}
	return res, nil
}

// admit applies the server and egress rules and the rate limit.
func (s *Sampler) admit(server string) error {
	var cfg *config.Server
	for i := range s.Servers {
		if s.Servers[i].Name == server {
			cfg = &s.Servers[i]
		}
	}
	if cfg == nil {
		return refused(fmt.Sprintf("server %q is not one the host answers", server))
	}
	if cfg.Egress == config.EgressLocal {
		if !CapabilitiesOf(s.Model).Local {
			return refused(fmt.Sprintf("server %q is local-only (egress: local) and the model is not on this machine", server))
		}
	}
	perMinute := s.PerMinute
	if perMinute <= 0 {
		perMinute = DefaultSamplingPerMinute
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.recent == nil {
		s.recent = map[string][]time.Time{}
	}
	times := s.recent[server]
	for len(times) > 0 && now.Sub(times[0]) >= time.Minute {
		times = times[1:]
	}
	if len(times) >= perMinute {
		s.recent[server] = times
		return refused(fmt.Sprintf("server %q sent more than %d sampling requests in a minute", server, perMinute))
	}
	s.recent[server] = append(times, now)
	return nil
}

// refused is a refusal with its reason.
func refused(reason string) error {
	return fmt.Errorf("%w: %s", mcp.ErrRefused, reason)
}

// refusedBy is the refusal of a denying Decision (err says why no answer
// came, if none did).
func refusedBy(d permission.Decision, err error) error {
	reason := d.Reason
	if reason == "" {
		reason = "denied"
	}
	if err != nil {
		return fmt.Errorf("%w: %s: %w", mcp.ErrRefused, reason, err)
	}
	return refused(reason)
}

// chatInputSize is the bytes c sends to the model: every message's
// parts (text blocks joined by newlines, tool results as text, tool call
// ids, names and arguments, images as the base64 a driver sends), the
// ids tool messages answer, and the offered tools' names, descriptions
// and schemas.
func chatInputSize(c *ChatRequest) int {
	n := 0
	for _, m := range c.Messages {
		n += len(m.ToolCallID)
		for _, p := range m.Parts {
			n += len(p.Text) + len(p.ID) + len(p.Name) + len(p.Arguments) + len(p.URL) + base64.StdEncoding.EncodedLen(len(p.Data))
		}
	}
	for _, t := range c.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	return n
}

// samplingText renders blocks as text for a person: text as it is, other
// blocks named.
func samplingText(blocks mcp.SamplingContents) string {
	var parts []string
	for _, b := range blocks {
		switch b.Type {
		case "text":
			parts = append(parts, b.Text)
		case "tool_use":
			parts = append(parts, fmt.Sprintf("[calls tool %s with %s]", b.Name, b.Input))
		case "tool_result":
			parts = append(parts, fmt.Sprintf("[result of tool call %s: %s]", b.ToolUseID, (&mcp.CallToolResult{Content: b.Content}).Text()))
		default:
			parts = append(parts, fmt.Sprintf("[%s %s, %d bytes of base64]", b.Type, b.MIMEType, len(b.Data)))
		}
	}
	return strings.Join(parts, "\n")
}

// chatRequest turns a sampling request, as approved, into the Model's:
// text blocks become a text part (consecutive ones joined by a line
// break), an image block of a user message an image part, tool_use blocks tool calls, tool_result blocks tool
// messages, and the server's tools are offered for this request only.
func chatRequest(req *mcp.SampleRequest, asked *permission.Sampling) (*ChatRequest, error) {
	c := &ChatRequest{MaxTokens: asked.MaxTokens}
	if asked.SystemPrompt != "" {
		c.Messages = append(c.Messages, SystemMessage(asked.SystemPrompt))
	}
	for _, m := range req.Messages {
		msg := Message{Role: Role(m.Role)}
		for _, b := range m.Content {
			switch {
			case b.Type == "text" && len(msg.Parts) > 0 && msg.Parts[len(msg.Parts)-1].Kind == PartText:
				msg.Parts[len(msg.Parts)-1].Text += "\n" + b.Text // one text, as chat servers take it
			case b.Type == "text":
				msg.Parts = append(msg.Parts, TextPart(b.Text))
			case b.Type == "image" && msg.Role == RoleUser:
				data, err := base64.StdEncoding.DecodeString(b.Data)
				if err != nil {
					return nil, refused("an image block is not base64")
				}
				msg.Parts = append(msg.Parts, ImagePart(b.MIMEType, data))
			case b.Type == "tool_use":
				msg.Parts = append(msg.Parts, CallPart(ToolCall{ID: b.ID, Name: b.Name, Arguments: string(b.Input)}))
			case b.Type == "tool_result":
				result := ToolResultPart((&mcp.CallToolResult{Content: b.Content}).Text())
				result.Structured = b.StructuredContent
				c.Messages = append(c.Messages, Message{Role: RoleTool, ToolCallID: b.ToolUseID, Parts: []Part{result}})
			default:
				return nil, refused(fmt.Sprintf("the model takes no %s content in a %s message", b.Type, m.Role))
			}
		}
		if len(msg.Parts) > 0 {
			c.Messages = append(c.Messages, msg)
		}
	}
	for _, t := range req.Tools {
		c.Tools = append(c.Tools, ToolDef{Name: t.Name, Description: t.Description, Parameters: t.InputSchema})
	}
	if req.ToolChoice != nil && len(c.Tools) > 0 {
		switch req.ToolChoice.Mode {
		case "required":
			c.ToolChoice = ToolChoiceRequired
		case "none":
			c.ToolChoice = ToolChoiceNone
		default:
			c.ToolChoice = ToolChoiceAuto
		}
	}
	if err := checkConversation(c.Messages); err != nil {
		return nil, fmt.Errorf("%w: %w", mcp.ErrRefused, err)
	}
	return c, nil
}

// samplingResult turns the Model's reply into the completion: its text
// as a text block, and its calls of the request's tools as tool_use
// blocks; its reasoning, which is for the Model's provider only, is left
// out.
func samplingResult(reply *Reply, req *mcp.SampleRequest, model string) *mcp.SampleResult {
	res := &mcp.SampleResult{Role: "assistant", Model: model}
	if t := reply.Message.Text(); t != "" {
		res.Content = append(res.Content, mcp.SamplingContent{Type: "text", Text: t})
	}
	offered := map[string]bool{}
	for _, t := range req.Tools {
		offered[t.Name] = true
	}
	for _, call := range reply.Message.ToolCalls() {
		if !offered[call.Name] {
			continue // a tool the server did not offer: nothing to run
		}
		input := json.RawMessage(call.Arguments)
		var obj map[string]json.RawMessage
		if json.Unmarshal(input, &obj) != nil {
			input = json.RawMessage("{}")
		}
		res.Content = append(res.Content, mcp.SamplingContent{Type: "tool_use", ID: call.ID, Name: call.Name, Input: input})
	}
	switch {
	case len(res.Content) > 0 && res.Content[len(res.Content)-1].Type == "tool_use":
		res.StopReason = "toolUse"
	case reply.Finish == FinishLength:
		res.StopReason = "maxTokens"
	default:
		res.StopReason = "endTurn"
	}
	if len(res.Content) == 0 {
		res.Content = mcp.SamplingContents{{Type: "text", Text: ""}}
	}
	return res
}

package agent_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sync"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/openai/openaitest"
	"git.rickub.com/bots-garden/mini-me/internal/chunks"
)

// turnModel is an agent.Model that plays openaitest turns in process, with no
// server and no driver: the loop's tests run on it, so that they hold for
// any Model that keeps the contract. It records each request as openaitest
// would decode it (Body is the request as JSON: every text the model is
// sent). Turns that exist to test a wire (Status, ErrorBody, RetryAfter)
// need the driver: wire.start.
type turnModel struct {
	turns []openaitest.Turn

	mu       sync.Mutex
	requests []openaitest.Request
}

// Requests returns the requests the model got, in order.
func (m *turnModel) Requests() []openaitest.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]openaitest.Request(nil), m.requests...)
}

// Capabilities: the model runs in this process, so it is local.
func (m *turnModel) Capabilities() agent.Capabilities {
	return agent.Capabilities{Local: true, Streaming: true, ParallelToolCalls: true, Reasoning: true}
}

func (m *turnModel) ModelInfo() agent.ModelInfo {
	return agent.ModelInfo{Name: "test-model", Provider: "script"}
}

func (m *turnModel) Chat(ctx context.Context, req *agent.ChatRequest, onDelta func(agent.Delta)) (*agent.Reply, error) {
	rec := record(req)
	m.mu.Lock()
	n := len(m.requests)
	m.requests = append(m.requests, rec)
	m.mu.Unlock()
	if n >= len(m.turns) {
		return nil, &agent.ModelError{Kind: agent.ErrServer, Err: fmt.Errorf("turnModel: no scripted turn left for request %d", n+1)}
	}
	turn := m.turns[n]
	if turn.Status != 0 || turn.ErrorBody != "" || turn.RetryAfter != "" {
		return nil, fmt.Errorf("turnModel: turn %d is a wire's error answer: use wire.start", n+1)
	}
	deliver := func(s string, reasoning bool) {
		for _, p := range chunks.Split(s, 4) {
			if onDelta == nil {
				continue
			}
			if reasoning {
				onDelta(agent.Delta{Reasoning: p})
			} else {
				onDelta(agent.Delta{Text: p})
			}
		}
	}
	deliver(turn.Reasoning, true)
	deliver(turn.Text, false)
	if turn.Hang {
		<-ctx.Done()
		return nil, fmt.Errorf("turnModel: %w", ctx.Err())
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("turnModel: %w", err)
	}
	if turn.Error != "" {
		return nil, &agent.ModelError{Kind: agent.ErrServer, Err: fmt.Errorf("turnModel: %s", turn.Error)}
	}
	calls := make([]agent.ToolCall, len(turn.ToolCalls))
	size := len(turn.Text) + len(turn.Reasoning)
	for i, c := range turn.ToolCalls {
		calls[i] = agent.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments}
		size += len(c.Name) + len(c.Arguments)
	}
	parts := agent.Parts(turn.Text, calls...)
	if turn.Reasoning != "" { // the contract: the reasoning delivered is the reply's too
		parts = append([]agent.Part{agent.ReasoningPart(scriptProvider, turn.Reasoning, "")}, parts...)
	}
	reply := &agent.Reply{Message: agent.Message{Role: agent.RoleAssistant, Parts: parts},
		Finish: agent.FinishReason(turn.Finish), Model: "test-model"}
	if reply.Finish == "" {
		reply.Finish = agent.FinishStop
		if len(turn.ToolCalls) > 0 {
			reply.Finish = agent.FinishToolCalls
		}
	}
	if u := turn.Usage; u != nil {
		reply.Usage = agent.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
	} else {
		reply.Usage = agent.Usage{PromptTokens: len(rec.Body) / 4, CompletionTokens: size/4 + 1}
		reply.Usage.TotalTokens = reply.Usage.PromptTokens + reply.Usage.CompletionTokens
	}
	return reply, nil
}

// scriptProvider is the provider a turnModel writes its reasoning as, and
// the one whose reasoning it is sent (see agent.Part.SentTo).
const scriptProvider = "script"

// record is req as openaitest decodes a request: the tool choice as OpenAI
// spells it, sent only with tools, and Body the whole as JSON.
func record(req *agent.ChatRequest) openaitest.Request {
	r := openaitest.Request{Model: "test-model", Stream: true, IncludeUsage: true}
	for _, msg := range req.Messages {
		lm := openaitest.Message{Role: string(msg.Role), Content: msg.Text(), ToolCallID: msg.ToolCallID}
		for _, p := range msg.Parts {
			switch {
			case p.Kind == agent.PartReasoning && p.SentTo(scriptProvider):
				lm.Reasoning += p.Text
			case p.Kind == agent.PartImage || p.Kind == agent.PartFile:
				url := p.URL
				if url == "" {
					url = "data:" + p.MediaType + ";base64," + base64.StdEncoding.EncodeToString(p.Data)
				}
				lm.Media = append(lm.Media, url)
			}
		}
		for _, c := range msg.ToolCalls() {
			lm.ToolCalls = append(lm.ToolCalls, openaitest.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
		r.Messages = append(r.Messages, lm)
	}
	for _, t := range req.Tools {
		r.Tools = append(r.Tools, openaitest.Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
	}
	if len(req.Tools) > 0 && req.ToolChoice != "" {
		var choice any = string(req.ToolChoice)
		switch req.ToolChoice {
		case agent.ToolChoiceAuto, agent.ToolChoiceNone, agent.ToolChoiceRequired:
		default:
			choice = map[string]any{"type": "function", "function": map[string]string{"name": string(req.ToolChoice)}}
		}
		r.ToolChoice, _ = json.Marshal(choice)
	}
	if req.Schema != nil {
		r.Schema = req.Schema.Schema
	}
	b := body{Tools: r.Tools, ToolChoice: r.ToolChoice, MaxTokens: req.MaxTokens, Schema: r.Schema}
	for _, m := range r.Messages {
		bm := bodyMessage{Role: m.Role, Content: m.Content, Reasoning: m.Reasoning, Media: m.Media, ToolCallID: m.ToolCallID}
		for _, c := range m.ToolCalls {
			bm.ToolCalls = append(bm.ToolCalls, bodyCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
		b.Messages = append(b.Messages, bm)
	}
	r.Body, _ = json.Marshal(b)
	return r
}

// body is what Request.Body holds: the request in JSON, the messages as
// the chat completions API names their members.
type body struct {
	Messages   []bodyMessage     `json:"messages"`
	Tools      []openaitest.Tool `json:"tools,omitempty"`
	ToolChoice json.RawMessage   `json:"tool_choice,omitempty"`
	MaxTokens  int               `json:"max_tokens,omitempty"`
	Schema     json.RawMessage   `json:"schema,omitempty"`
}

// requester is a scripted model that keeps its requests: a turnModel, or
// an openaitest.Server behind the driver.
type requester interface{ Requests() []openaitest.Request }

type bodyMessage struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	Reasoning  string     `json:"reasoning_content,omitempty"`
	Media      []string   `json:"media,omitempty"`
	ToolCalls  []bodyCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

type bodyCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

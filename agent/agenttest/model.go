package agenttest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/internal/chunks"
)

// Provider is the provider name a [Model] gives in its ModelInfo and on
// the reasoning parts it writes.
const Provider = "agenttest"

// DefaultName is the model name of a [Model] whose Name is empty.
const DefaultName = "agenttest-model"

// DefaultChunkSize is the size in bytes of the pieces a [Model] streams
// text in when its ChunkSize is 0: small, so that a test sees several
// deltas.
const DefaultChunkSize = 4

// Model is an [agent.Model] that plays its Turns in order, one per call of
// Chat, in process, and records every request it is given. A call beyond
// the last turn fails with an error that says so (final for the agent).
//
// Set the fields before the first Chat; Chat, Requests and Verify are
// then safe for concurrent use, concurrent calls taking the turns in the
// order they arrive. The zero Model has no turns: every call fails.
//
// It keeps the [agent.Model] contract: deltas on the calling goroutine,
// in order, before Chat returns; a reply whose calls all have an ID; a
// prompt return when the context ends, with an error that wraps
// ctx.Err(); no goroutine left behind; a copy of the request kept, never
// the caller's.
type Model struct {
	// Turns are played in order, one per call of Chat.
	Turns []Turn
	// Name is the model's name, in its ModelInfo and each Reply.Model;
	// "" means DefaultName.
	Name string
	// Claims is what the model says it can do (agent.CapableModel). The
	// zero value claims nothing; set Local for the agent to offer the
	// tools of local-only servers to it.
	Claims agent.Capabilities
	// ChunkSize is the size in bytes of the pieces Text and Reasoning are
	// streamed in; 0 means DefaultChunkSize. Pieces never split a UTF-8
	// character.
	ChunkSize int

	mu       sync.Mutex
	requests []agent.ChatRequest
	problems []error
}

// Chat plays the next turn. It implements [agent.Model].
func (m *Model) Chat(ctx context.Context, req *agent.ChatRequest, onDelta func(agent.Delta)) (*agent.Reply, error) {
	if req == nil {
		return nil, errors.New("agenttest: nil request")
	}
	m.mu.Lock()
	n := len(m.requests)
	m.requests = append(m.requests, cloneRequest(req))
	if n >= len(m.Turns) {
		err := fmt.Errorf("agenttest: request %d has no scripted turn (the script has %d)", n+1, len(m.Turns))
		m.problems = append(m.problems, err)
		m.mu.Unlock()
		return nil, err
	}
	turn := m.Turns[n]
	m.mu.Unlock()

	if err := wait(ctx, turn.Delay); err != nil {
		return nil, fmt.Errorf("agenttest: turn %d: %w", n+1, err)
	}
	if turn.Expect != nil {
		if err := turn.Expect(req); err != nil {
			err = fmt.Errorf("agenttest: turn %d: unexpected request: %w", n+1, err)
			m.mu.Lock()
			m.problems = append(m.problems, err)
			m.mu.Unlock()
			return nil, err
		}
	}
	if onDelta != nil {
		for _, p := range chunks.Split(turn.Reasoning, m.chunkSize()) {
			onDelta(agent.Delta{Reasoning: p})
		}
		for _, p := range chunks.Split(turn.Text, m.chunkSize()) {
			onDelta(agent.Delta{Text: p})
		}
	}
	if turn.Hang {
		<-ctx.Done()
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("agenttest: turn %d: %w", n+1, err)
	}
	if turn.Err != nil {
		return nil, turn.Err
	}
	return m.reply(n+1, turn, req), nil
}

// reply makes the Reply of turn, the n-th.
func (m *Model) reply(n int, turn Turn, req *agent.ChatRequest) *agent.Reply {
	var parts []agent.Part
	if turn.Reasoning != "" {
		parts = append(parts, agent.ReasoningPart(Provider, turn.Reasoning, ""))
	}
	if turn.Text != "" {
		parts = append(parts, agent.TextPart(turn.Text))
	}
	size := len(turn.Reasoning) + len(turn.Text)
	for i, c := range turn.ToolCalls {
		if c.ID == "" {
			c.ID = fmt.Sprintf("call_%d_%d", n, i+1)
		}
		parts = append(parts, agent.CallPart(c))
		size += len(c.Name) + len(c.Arguments)
	}
	r := &agent.Reply{Message: agent.Message{Role: agent.RoleAssistant, Parts: parts}, Finish: turn.Finish, Model: m.name()}
	if r.Finish == "" {
		r.Finish = agent.FinishStop
		if len(turn.ToolCalls) > 0 {
			r.Finish = agent.FinishToolCalls
		}
	}
	if turn.Usage != nil {
		r.Usage = *turn.Usage
	} else {
		r.Usage = agent.Usage{PromptTokens: requestSize(req)/4 + 1, CompletionTokens: size/4 + 1}
		r.Usage.TotalTokens = r.Usage.PromptTokens + r.Usage.CompletionTokens
	}
	return r
}

// Requests returns copies of the requests Chat was given, in order,
// including those that failed.
func (m *Model) Requests() []agent.ChatRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]agent.ChatRequest, len(m.requests))
	for i := range m.requests {
		out[i] = cloneRequest(&m.requests[i])
	}
	return out
}

// Verify returns nil if every turn was played, every Expect accepted its
// request and no request came beyond the script; else an error that
// joins every problem.
func (m *Model) Verify() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	errs := slices.Clone(m.problems)
	if len(m.requests) < len(m.Turns) {
		errs = append(errs, fmt.Errorf("agenttest: %d of %d scripted turns were not played", len(m.Turns)-len(m.requests), len(m.Turns)))
	}
	return errors.Join(errs...)
}

// Capabilities returns Claims. It implements [agent.CapableModel].
func (m *Model) Capabilities() agent.Capabilities { return m.Claims }

// ModelInfo names the model. It implements [agent.DescribedModel].
func (m *Model) ModelInfo() agent.ModelInfo {
	return agent.ModelInfo{Name: m.name(), Provider: Provider}
}

func (m *Model) name() string {
	if m.Name == "" {
		return DefaultName
	}
	return m.Name
}

func (m *Model) chunkSize() int {
	if m.ChunkSize <= 0 {
		return DefaultChunkSize
	}
	return m.ChunkSize
}

// requestSize is the size in bytes of what req says, for a derived Usage.
func requestSize(req *agent.ChatRequest) int {
	n := 0
	for _, msg := range req.Messages {
		for _, p := range msg.Parts {
			n += len(p.Text) + len(p.Name) + len(p.Arguments) + len(p.Structured)
		}
	}
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	return n
}

// cloneRequest copies req deeply: the Model keeps nothing of the caller's.
func cloneRequest(req *agent.ChatRequest) agent.ChatRequest {
	c := *req
	c.Messages = slices.Clone(req.Messages)
	for i := range c.Messages {
		c.Messages[i].Parts = slices.Clone(c.Messages[i].Parts)
		for j := range c.Messages[i].Parts {
			p := &c.Messages[i].Parts[j]
			p.Structured = bytes.Clone(p.Structured)
			p.Data = bytes.Clone(p.Data)
			p.Metadata = maps.Clone(p.Metadata)
			for k, v := range p.Metadata {
				p.Metadata[k] = bytes.Clone(v)
			}
		}
	}
	c.Tools = slices.Clone(req.Tools)
	for i := range c.Tools {
		c.Tools[i].Parameters = bytes.Clone(c.Tools[i].Parameters)
	}
	if req.Schema != nil {
		s := *req.Schema
		s.Schema = bytes.Clone(s.Schema)
		c.Schema = &s
	}
	return c
}

package agent_test

import (
	"context"
	"fmt"
	"sync"

	"git.rickub.com/bots-garden/mini-me/agent"
)

// step is one call of a scripted model: the text pieces it streams, then
// its reply or its error.
type step struct {
	deltas []string
	reply  *agent.Reply
	err    error
}

// answer is a step that answers text.
func answer(text string) step {
	return step{deltas: []string{text},
		reply: &agent.Reply{Message: agent.Message{Role: agent.RoleAssistant, Parts: agent.Parts(text)}, Finish: agent.FinishStop}}
}

// fail is a step that fails with err.
func fail(err error) step { return step{err: err} }

// scriptModel is an agent.Model that plays its steps in order, in process:
// the tests of the contract, of Fallback and of Retry use it, so that they
// hold for any driver. It names itself (DescribedModel) and claims caps.
type scriptModel struct {
	name  string
	caps  agent.Capabilities
	steps []step

	mu   sync.Mutex
	reqs []agent.ChatRequest
}

func (s *scriptModel) Chat(ctx context.Context, req *agent.ChatRequest, onDelta func(agent.Delta)) (*agent.Reply, error) {
	s.mu.Lock()
	n := len(s.reqs)
	s.reqs = append(s.reqs, agent.ChatRequest{Messages: append([]agent.Message(nil), req.Messages...), Tools: req.Tools,
		ToolChoice: req.ToolChoice, Schema: req.Schema})
	s.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if n >= len(s.steps) {
		return nil, fmt.Errorf("scripted model %s: no step %d", s.name, n+1)
	}
	st := s.steps[n]
	for _, d := range st.deltas {
		if onDelta != nil {
			onDelta(agent.Delta{Text: d})
		}
	}
	if st.err != nil {
		return nil, st.err
	}
	r := *st.reply
	return &r, nil
}

// calls is how many times Chat was called.
func (s *scriptModel) calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reqs)
}

// requests returns copies of the requests Chat was given.
func (s *scriptModel) requests() []agent.ChatRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]agent.ChatRequest(nil), s.reqs...)
}

func (s *scriptModel) ModelInfo() agent.ModelInfo {
	return agent.ModelInfo{Name: s.name, Provider: "scripted"}
}

func (s *scriptModel) Capabilities() agent.Capabilities { return s.caps }

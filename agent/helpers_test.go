package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/openai"
	"git.rickub.com/bots-garden/mini-me/agent/openai/openaitest"
	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// mcpTool is an mcptest tool with the given definition that answers with
// run(args).
func mcpTool(def string, run func(ctx context.Context, args map[string]any) (text string, isError bool)) mcptest.Tool {
	return mcptest.Tool{
		Def: json.RawMessage(def),
		Call: func(ctx context.Context, raw json.RawMessage, _ func(string, any)) (any, error) {
			var args map[string]any
			if err := json.Unmarshal(raw, &args); err != nil {
				return nil, err
			}
			text, isError := run(ctx, args)
			return map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}, "isError": isError}, nil
		},
	}
}

// startMCP starts an MCP server offering tools and returns its
// configuration entry.
func startMCP(t testing.TB, name string, tools ...mcptest.Tool) (*mcptest.Server, config.Server) {
	t.Helper()
	s := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: tools}
	url := s.Start()
	t.Cleanup(s.Close)
	return s, config.Server{Name: name, URL: url, Permissions: permission.ModeAsk}
}

// discover connects a Toolset to the servers, closed when the test ends.
func discover(t testing.TB, servers ...config.Server) *toolset.Toolset {
	t.Helper()
	ts, err := toolset.Discover(context.Background(), servers, nil)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, ts.Close()) })
	require.Empty(t, ts.Warnings())
	return ts
}

// startLLM returns a scripted model, twice: as the record of its requests
// and as the agent.Model. It runs in process, without the driver; tests
// of the driver's wire use wire.start.
func startLLM(t testing.TB, turns ...openaitest.Turn) (*turnModel, *turnModel) {
	t.Helper()
	m := &turnModel{turns: turns}
	return m, m
}

// wire is how a scripted model answers: in a server's dialect, streamed
// or whole.
type wire struct {
	dialect openaitest.Dialect
	whole   bool
}

// start starts a scripted model answering as w says and returns it with a
// client of it.
func (w wire) start(t testing.TB, turns ...openaitest.Turn) (*openaitest.Server, *openai.Model) {
	t.Helper()
	s := &openaitest.Server{Turns: turns, Dialect: w.dialect}
	url := s.Start()
	t.Cleanup(s.Close)
	return s, &openai.Model{BaseURL: url, Model: "test-model", NoStream: w.whole}
}

// forWires runs f in a subtest for each dialect, streamed and whole.
func forWires(t *testing.T, f func(t *testing.T, w wire)) {
	for _, d := range openaitest.Dialects() {
		for _, whole := range []bool{false, true} {
			w := wire{dialect: d, whole: whole}
			name := string(d) + "/stream"
			if whole {
				name = string(d) + "/whole"
			}
			t.Run(name, func(t *testing.T) { f(t, w) })
		}
	}
}

// toolCalls counts the tools/call requests an MCP server received.
func toolCalls(s *mcptest.Server) []string {
	var calls []string
	for _, r := range s.Requests() {
		if r.Method == "tools/call" {
			var p struct {
				Params struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				} `json:"params"`
			}
			if json.Unmarshal(r.Body, &p) == nil {
				calls = append(calls, p.Params.Name+" "+string(p.Params.Arguments))
			}
		}
	}
	return calls
}

// recorder keeps the events of a run.
type recorder struct {
	mu     sync.Mutex
	events []agent.Event
}

func (r *recorder) on(e agent.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

// results returns the ToolFinished events, by turn and index; a missing one
// is the zero ToolFinished, which fails the test's checks without a panic.
func (r *recorder) results() map[string]agent.ToolFinished {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]agent.ToolFinished{}
	for _, e := range r.events {
		if tr, ok := e.(*agent.ToolFinished); ok {
			out[fmt.Sprintf("%d.%d", tr.Turn, tr.Index)] = *tr
		}
	}
	return out
}

// trace renders the events of one call, in order.
func (r *recorder) trace(turn, index int) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		switch e := e.(type) {
		case *agent.ToolCallProposed:
			if e.Turn == turn && e.Index == index {
				out = append(out, "proposed "+e.Server+"/"+e.Tool)
			}
		case *agent.ApprovalRequested:
			if e.Turn == turn && e.Index == index {
				out = append(out, "approval "+e.Request.PrefixedName)
			}
		case *agent.ApprovalDecided:
			if e.Turn == turn && e.Index == index {
				out = append(out, "decided "+e.Decision.Verdict.String())
			}
		case *agent.ToolStarted:
			if e.Turn == turn && e.Index == index {
				out = append(out, "started")
			}
		case *agent.ToolFinished:
			if e.Turn == turn && e.Index == index {
				out = append(out, "result "+string(e.Status))
			}
		}
	}
	return out
}

func (r *recorder) warnings() []agent.WarningKind {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []agent.WarningKind
	for _, e := range r.events {
		if w, ok := e.(*agent.Warning); ok {
			out = append(out, w.Kind)
		}
	}
	return out
}

func user(text string) []agent.Message {
	return []agent.Message{agent.UserMessage(text)}
}

func allowAll() *permission.Policy { return permission.NewPolicy(permission.AllowAll{}) }

// roles lists the roles of msgs, for a quick look at a conversation's
// shape.
func roles(msgs []agent.Message) []agent.Role {
	out := make([]agent.Role, len(msgs))
	for i, m := range msgs {
		out[i] = m.Role
	}
	return out
}

// requireResumable checks that msgs can be carried on: the agent accepts
// it and a strict server accepts what the agent sends.
func requireResumable(t *testing.T, msgs []agent.Message) {
	t.Helper()
	_, m := startLLM(t, openaitest.Turn{Text: "resumed"})
	res, err := (&agent.Agent{Model: m}).Run(context.Background(), append(msgs, agent.UserMessage("go on")))
	require.NoError(t, err)
	assert.Equal(t, "resumed", res.Answer)
}

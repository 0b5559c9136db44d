package agent_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/openai/openaitest"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// hookLog is an agent.Trace and an mcp.ClientTrace that log each hook as
// a line, with the step ("run", "chat 1", "tool 1.0") whose context it
// got, so that the nesting can be checked.
type hookLog struct {
	mu    sync.Mutex
	lines []string
}

type stepKey struct{}

func (h *hookLog) add(ctx context.Context, format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	in, _ := ctx.Value(stepKey{}).(string)
	h.lines = append(h.lines, fmt.Sprintf(format, args...)+" in "+in)
}

func (h *hookLog) context(ctx context.Context) context.Context {
	ctx = agent.WithTrace(ctx, &agent.Trace{
		RunStart: func(ctx context.Context, run *agent.RunInfo) context.Context {
			h.add(ctx, "run start %s %d", run.Model.Name, run.Messages)
			return context.WithValue(ctx, stepKey{}, "run")
		},
		RunDone: func(ctx context.Context, _ *agent.RunInfo, res *agent.Result, err error) {
			h.add(ctx, "run done %s %d %v", res.Stop, res.Turns, err)
		},
		ModelStart: func(ctx context.Context, call *agent.ModelCall) context.Context {
			h.add(ctx, "%s start turn %d, %d tools", call.SpanName(), call.Turn, call.Tools)
			return context.WithValue(ctx, stepKey{}, fmt.Sprint("chat ", call.Turn))
		},
		ModelDone: func(ctx context.Context, _ *agent.ModelCall, res *agent.ModelResult) {
			h.add(ctx, "chat done %s %d+%d %v", res.Reply.Finish, res.Reply.Usage.PromptTokens, res.Reply.Usage.CompletionTokens, res.Err)
		},
		ToolDecided: func(ctx context.Context, call *agent.ToolCallInfo) {
			h.add(ctx, "decided %s %s", call.Call.ID, call.Decision.Verdict)
		},
		ToolStart: func(ctx context.Context, call *agent.ToolCallInfo) context.Context {
			h.add(ctx, "%s start %s %s/%s", call.SpanName(), call.Call.ID, call.Server, call.Tool)
			return context.WithValue(ctx, stepKey{}, fmt.Sprintf("tool %d.%d", call.Turn, call.Index))
		},
		ToolDone: func(ctx context.Context, call *agent.ToolCallInfo, res *agent.ToolFinished) {
			h.add(ctx, "tool done %s %s %q", call.Call.ID, res.Status, agent.ToolErrorType(res))
		},
	})
	return mcp.WithTrace(ctx, &mcp.ClientTrace{
		RequestStart: func(ctx context.Context, req *mcp.RequestInfo) context.Context {
			h.add(ctx, "mcp %s", req.SpanName())
			return ctx
		},
	})
}

func TestTraceRun(t *testing.T) {
	weather := mcpTool(`{"name":"get_weather","inputSchema":{"type":"object","properties":{"city":{"type":"string"}}}}`,
		func(_ context.Context, args map[string]any) (string, bool) {
			return fmt.Sprint("sunny in ", args["city"]), args["city"] == "Atlantis"
		})
	_, cfg := startMCP(t, "w", weather)
	ts := discover(t, cfg)
	_, model := startLLM(t,
		openaitest.Turn{ToolCalls: []openaitest.ToolCall{
			{ID: "c1", Name: "w_get_weather", Arguments: `{"city":"Paris"}`},
			{ID: "c2", Name: "w_get_weather", Arguments: `{"city":"Atlantis"}`},
		}, Usage: &openaitest.Usage{PromptTokens: 10, CompletionTokens: 5}},
		openaitest.Turn{Text: "Sunny.", Usage: &openaitest.Usage{PromptTokens: 30, CompletionTokens: 2}},
	)
	h := &hookLog{}
	a := &agent.Agent{Model: model, Tools: ts, Policy: allowAll(), MaxParallel: 1}
	res, err := a.Run(h.context(context.Background()), user("weather?"))
	require.NoError(t, err)
	assert.Equal(t, "Sunny.", res.Answer)
	assert.Equal(t, []string{
		"run start test-model 1 in ",
		"chat test-model start turn 1, 1 tools in run",
		"chat done tool_calls 10+5 <nil> in chat 1",
		"decided c1 allow once in run",
		"decided c2 allow once in run",
		"execute_tool w_get_weather start c1 w/get_weather in run",
		"mcp tools/call get_weather in tool 1.0",
		`tool done c1 ok "" in tool 1.0`,
		"execute_tool w_get_weather start c2 w/get_weather in run",
		"mcp tools/call get_weather in tool 1.1",
		`tool done c2 tool-error "tool-error" in tool 1.1`,
		"chat test-model start turn 2, 1 tools in run",
		"chat done stop 30+2 <nil> in chat 2",
		"run done answer 2 <nil> in run",
	}, h.lines)
}

func TestTraceDenied(t *testing.T) {
	_, cfg := startMCP(t, "w", mcpTool(`{"name":"get_weather","inputSchema":{"type":"object"}}`,
		func(context.Context, map[string]any) (string, bool) { return "sunny", false }))
	ts := discover(t, cfg)
	_, model := startLLM(t,
		openaitest.Turn{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "w_get_weather", Arguments: `{}`}}},
		openaitest.Turn{Text: "I may not."},
	)
	h := &hookLog{}
	a := &agent.Agent{Model: model, Tools: ts, Policy: permission.NewPolicy(permission.DenyAll{})}
	_, err := a.Run(h.context(context.Background()), user("weather?"))
	require.NoError(t, err)
	assert.Contains(t, h.lines, "decided c1 deny in run")
	for _, l := range h.lines {
		assert.NotContains(t, l, "execute_tool", "a denied call does not run")
	}
}

func TestTraceAttributes(t *testing.T) {
	call := &agent.ModelCall{Turn: 1, Model: agent.ModelInfo{Name: "m", Provider: "openai", Address: "127.0.0.1", Port: 8080}}
	assert.Equal(t, "chat m", call.SpanName())
	got := map[string]any{}
	for _, a := range call.Attributes() {
		got[a.Key] = a.Value.Any()
	}
	assert.Equal(t, map[string]any{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
		"gen_ai.request.model": "m", "server.address": "127.0.0.1", "server.port": int64(8080)}, got)
	res := &agent.ModelResult{Reply: &agent.Reply{Finish: agent.FinishStop, Usage: agent.Usage{PromptTokens: 3, CompletionTokens: 4}}}
	clear(got)
	for _, a := range res.Attributes() {
		got[a.Key] = a.Value.Any()
	}
	assert.Equal(t, map[string]any{"gen_ai.usage.input_tokens": int64(3), "gen_ai.usage.output_tokens": int64(4),
		"gen_ai.response.finish_reasons": []string{"stop"}}, got)
	res.Reply.Usage = agent.Usage{PromptTokens: 30, CompletionTokens: 40, CacheReadTokens: 20, CacheWriteTokens: 5, ReasoningTokens: 10}
	clear(got)
	for _, a := range res.Attributes() {
		got[a.Key] = a.Value.Any()
	}
	assert.Equal(t, map[string]any{"gen_ai.usage.input_tokens": int64(30), "gen_ai.usage.output_tokens": int64(40),
		"gen_ai.usage.cache_read.input_tokens": int64(20), "gen_ai.usage.cache_creation.input_tokens": int64(5),
		"gen_ai.usage.reasoning.output_tokens": int64(10), "gen_ai.response.finish_reasons": []string{"stop"}}, got)
	failed := &agent.ModelResult{Err: fmt.Errorf("x: %w", agent.ErrContextExceeded)}
	assert.Equal(t, "context_exceeded", failed.Attributes()[0].Value.String())
	assert.Equal(t, "error.type", failed.Attributes()[0].Key)
}

// BenchmarkRunTrace shows what the agent's hooks cost a run without a
// trace: compare its allocations with BenchmarkRun on main.
func BenchmarkRunTrace(b *testing.B) {
	fn, err := agent.NewFunc("noop", "Does nothing.", func(context.Context, struct{}) (string, error) { return "ok", nil })
	require.NoError(b, err)
	m := &scripted{}
	a := &agent.Agent{Model: m, Funcs: []*agent.Func{fn}, Policy: allowAll()}
	msgs := user("go")
	b.ReportAllocs()
	for range b.N {
		m.n = 0
		if _, err := a.Run(context.Background(), msgs); err != nil {
			b.Fatal(err)
		}
	}
}

// scripted is a Model calling noop once, then answering.
type scripted struct{ n int }

func (s *scripted) Chat(context.Context, *agent.ChatRequest, func(agent.Delta)) (*agent.Reply, error) {
	s.n++
	if s.n == 1 {
		return &agent.Reply{Message: agent.Message{Role: agent.RoleAssistant,
			Parts: agent.Parts("", []agent.ToolCall{{ID: "1", Name: "noop", Arguments: "{}"}}...)}, Finish: agent.FinishToolCalls}, nil
	}
	return &agent.Reply{Message: agent.Message{Role: agent.RoleAssistant, Parts: agent.Parts("done")}, Finish: agent.FinishStop}, nil
}

// A resumed run is traced like any other: its approved calls run under
// the resumed run's span, and the run's end reports its own stop.
func TestTraceResume(t *testing.T) {
	_, st, r := pausedFiles(t, openaitest.Turn{Text: "done"})
	h := &hookLog{}
	res, err := r.agent.Resume(h.context(context.Background()), st, allowEvery(st))
	require.NoError(t, err)
	assert.Equal(t, "done", res.Answer)
	assert.Equal(t, fmt.Sprintf("run start %s %d in ", "test-model", len(st.Messages)), h.lines[0])
	assert.Contains(t, h.lines, "mcp tools/call write in tool 1.1")
	assert.Contains(t, h.lines, "mcp tools/call delete in tool 1.2")
	assert.Equal(t, "run done answer 2 <nil> in run", h.lines[len(h.lines)-1])
}

// The decisions of a Resume reach the trace as those of a run do: each
// pending call is reported decided, and a call that runs carries its
// approval, not the zero (deny) Decision.
func TestTraceResumeDecisions(t *testing.T) {
	_, st, r := pausedFiles(t, openaitest.Turn{Text: "done"})
	var mu sync.Mutex
	decided, started := map[string]permission.Verdict{}, map[string]permission.Verdict{}
	ctx := agent.WithTrace(context.Background(), &agent.Trace{
		ToolDecided: func(_ context.Context, call *agent.ToolCallInfo) {
			mu.Lock()
			defer mu.Unlock()
			decided[call.Call.ID] = call.Decision.Verdict
		},
		ToolStart: func(ctx context.Context, call *agent.ToolCallInfo) context.Context {
			mu.Lock()
			defer mu.Unlock()
			started[call.Call.ID] = call.Decision.Verdict
			return ctx
		},
	})
	_, err := r.agent.Resume(ctx, st, map[string]permission.Decision{
		st.Pending[0].ID: {Verdict: permission.AllowOnce}, st.Pending[1].ID: {Reason: "no"},
	})
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, map[string]permission.Verdict{st.Pending[0].Call.ID: permission.AllowOnce, st.Pending[1].Call.ID: permission.Deny}, decided)
	assert.Equal(t, map[string]permission.Verdict{st.Pending[0].Call.ID: permission.AllowOnce}, started)
}

// describedModel is a Model that is not an OpenAI and says what it is.
type describedModel struct{}

func (describedModel) Chat(context.Context, *agent.ChatRequest, func(agent.Delta)) (*agent.Reply, error) {
	return &agent.Reply{Message: agent.Message{Role: agent.RoleAssistant, Parts: agent.Parts("hi")}, Finish: agent.FinishStop}, nil
}

func (describedModel) ModelInfo() agent.ModelInfo {
	return agent.ModelInfo{Name: "stand-in", Provider: "test"}
}

// A DescribedModel names its chat spans and fills the run's model, as an
// OpenAI model does from its fields.
func TestTraceDescribedModel(t *testing.T) {
	var spans []string
	var provider string
	ctx := agent.WithTrace(context.Background(), &agent.Trace{
		RunStart: func(ctx context.Context, run *agent.RunInfo) context.Context {
			provider = run.Model.Provider
			return ctx
		},
		ModelStart: func(ctx context.Context, call *agent.ModelCall) context.Context {
			spans = append(spans, call.SpanName())
			return ctx
		},
	})
	_, err := (&agent.Agent{Model: describedModel{}, Policy: allowAll()}).Run(ctx, user("hello"))
	require.NoError(t, err)
	assert.Equal(t, []string{"chat stand-in"}, spans)
	assert.Equal(t, "test", provider)
}

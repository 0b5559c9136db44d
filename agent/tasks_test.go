package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/openai/openaitest"
	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// startTaskMCP starts a server speaking version whose "research" tool
// runs only as a task, running fn; it returns a Toolset with tasks on.
func startTaskMCP(t *testing.T, version string, fn func(context.Context, json.RawMessage, *mcptest.TaskRun) (any, error)) (*mcptest.Server, *toolset.Toolset) {
	t.Helper()
	s := &mcptest.Server{Versions: []string{version}, Tasks: &mcptest.Tasks{PollInterval: time.Millisecond},
		Tools: []mcptest.Tool{{
			Def:  json.RawMessage(`{"name":"research","description":"Research a topic","inputSchema":{"type":"object","properties":{"topic":{"type":"string"}}},"execution":{"taskSupport":"required"}}`),
			Task: fn,
		}}}
	url := s.Start()
	t.Cleanup(s.Close)
	ts, err := toolset.Discover(context.Background(), []config.Server{{Name: "lab", URL: url, Permissions: permission.ModeAsk}},
		&toolset.Options{Client: mcp.Options{Tasks: mcp.TasksWhenRequired}})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, ts.Close()) })
	require.Empty(t, ts.Warnings())
	return s, ts
}

// taskTrace renders the events of call 1.0 with their statuses.
func taskTrace(r *recorder) (trace []string, statuses []*agent.ToolStatus) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.events {
		switch e := e.(type) {
		case *agent.ToolStarted:
			trace = append(trace, "started")
		case *agent.ToolStatus:
			if len(trace) == 0 || trace[len(trace)-1] != "status" {
				trace = append(trace, "status")
			}
			statuses = append(statuses, e)
		case *agent.ToolFinished:
			trace = append(trace, "result "+string(e.Status))
		}
	}
	return trace, statuses
}

func TestTaskBackedCallIsOneToolCall(t *testing.T) {
	for _, version := range []string{mcptest.Modern, mcptest.Legacy} {
		t.Run(version, func(t *testing.T) {
			release := make(chan struct{})
			srv, ts := startTaskMCP(t, version, func(ctx context.Context, _ json.RawMessage, run *mcptest.TaskRun) (any, error) {
				run.Working("gathering sources")
				select {
				case <-release:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				return map[string]any{"content": []any{map[string]any{"type": "text", "text": "the report"}}}, nil
			})
			llm, model := startLLM(t,
				openaitest.Turn{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "lab_research", Arguments: `{"topic":"python"}`}}},
				openaitest.Turn{Text: "Here is the report."},
			)
			var rec recorder
			var once sync.Once
			a := &agent.Agent{Model: model, Tools: ts, Policy: allowAll()}
			res, err := a.RunStream(context.Background(), user("Research python"), func(e agent.Event) {
				rec.on(e)
				if s, ok := e.(*agent.ToolStatus); ok && s.Task.Message == "gathering sources" {
					once.Do(func() { close(release) })
				}
			})
			require.NoError(t, err)
			assert.Equal(t, "Here is the report.", res.Answer)
			assert.Len(t, llm.Requests(), 2, "one tool call, one answer: the polls are not the model's")
			assert.Contains(t, res.Messages[2].Text(), "the report")

			trace, statuses := taskTrace(&rec)
			assert.Equal(t, []string{"started", "status", "result ok"}, trace)
			require.NotEmpty(t, statuses)
			assert.Equal(t, "lab", statuses[0].Task.Server)
			assert.Equal(t, "research", statuses[0].Task.Tool)
			assert.NotEmpty(t, statuses[0].Task.TaskID)
			assert.Equal(t, "lab_research", statuses[0].Call.Name)
			assert.GreaterOrEqual(t, srv.Tasks.Polls(), 1)
		})
	}
}

func TestTaskTimeoutCancelsTheTask(t *testing.T) {
	srv, ts := startTaskMCP(t, mcptest.Legacy, func(ctx context.Context, _ json.RawMessage, _ *mcptest.TaskRun) (any, error) {
		<-ctx.Done() // never ends by itself
		return nil, ctx.Err()
	})
	_, model := startLLM(t,
		openaitest.Turn{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "lab_research", Arguments: `{}`}}},
		openaitest.Turn{Text: "It took too long."},
	)
	var rec recorder
	// The limit also bounds the tools/call that creates the task: 1 s
	// leaves it room on a loaded machine; the task never ends.
	a := &agent.Agent{Model: model, Tools: ts, Policy: allowAll(), TaskTimeout: time.Second, ToolTimeout: time.Hour}
	_, err := a.RunStream(context.Background(), user("Research"), rec.on)
	require.NoError(t, err)
	r := rec.results()["1.0"]
	require.NotNil(t, r)
	assert.Equal(t, agent.StatusFailed, r.Status)
	assert.Contains(t, r.Output, "took longer than 1s")
	assert.Equal(t, 1, srv.Tasks.Cancels(), "the task is cancelled on its server")
}

func TestTaskCancelledWithTheRun(t *testing.T) {
	srv, ts := startTaskMCP(t, mcptest.Modern, func(ctx context.Context, _ json.RawMessage, _ *mcptest.TaskRun) (any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	_, model := startLLM(t, openaitest.Turn{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "lab_research", Arguments: `{}`}}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var rec recorder
	a := &agent.Agent{Model: model, Tools: ts, Policy: allowAll()}
	_, err := a.RunStream(ctx, user("Research"), func(e agent.Event) {
		rec.on(e)
		if _, ok := e.(*agent.ToolStatus); ok {
			cancel()
		}
	})
	require.ErrorIs(t, err, context.Canceled)
	r := rec.results()["1.0"]
	require.NotNil(t, r)
	assert.Equal(t, agent.StatusCanceled, r.Status)
	assert.True(t, strings.Contains(r.Output, "interrupted"))
	assert.Equal(t, 1, srv.Tasks.Cancels())
}

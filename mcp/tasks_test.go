package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/internal/jsonrpc"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

// taskTool is a tool that runs only as a task (or also plainly, with
// support "optional" and a Call).
func taskTool(name, support string, fn func(context.Context, json.RawMessage, *mcptest.TaskRun) (any, error)) mcptest.Tool {
	return mcptest.Tool{
		Def:  json.RawMessage(fmt.Sprintf(`{"name":%q,"inputSchema":{"type":"object"},"execution":{"taskSupport":%q}}`, name, support)),
		Task: fn,
	}
}

// stuckTask never ends by itself: only a tasks/cancel or the server's
// end stops it.
func stuckTask(ctx context.Context, _ json.RawMessage, _ *mcptest.TaskRun) (any, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// releasedTask ends with text once release is closed.
func releasedTask(release <-chan struct{}, text string) func(context.Context, json.RawMessage, *mcptest.TaskRun) (any, error) {
	return func(ctx context.Context, _ json.RawMessage, _ *mcptest.TaskRun) (any, error) {
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return textResult(text), nil
	}
}

func textResult(s string) any {
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}}
}

// taskServer starts a server speaking version with tasks and tools.
func taskServer(t *testing.T, version string, tools ...mcptest.Tool) (string, *mcptest.Server) {
	t.Helper()
	s := &mcptest.Server{Versions: []string{version}, Tools: tools, Tasks: &mcptest.Tasks{PollInterval: 1}}
	return mcptest.Start(t, s), s
}

// statuses collects what a task observer saw.
type statuses struct {
	mu   sync.Mutex
	all  []mcp.TaskStatus
	seen chan mcp.TaskStatus // every status, for a test to wait on
}

func observe(ctx context.Context) (context.Context, *statuses) {
	st := &statuses{seen: make(chan mcp.TaskStatus, 1024)}
	return mcp.WithTaskObserver(ctx, func(s mcp.TaskStatus) {
		st.mu.Lock()
		st.all = append(st.all, s)
		st.mu.Unlock()
		st.seen <- s
	}), st
}

// waitFor returns the first status seen that matches, or fails.
func (st *statuses) waitFor(t *testing.T, ctx context.Context, match func(mcp.TaskStatus) bool) mcp.TaskStatus {
	t.Helper()
	for {
		select {
		case s := <-st.seen:
			if match(s) {
				return s
			}
		case <-ctx.Done():
			t.Fatalf("no matching task status: %v", ctx.Err())
		}
	}
}

func eachEra(t *testing.T, f func(t *testing.T, version string)) {
	for _, v := range []string{mcptest.Modern, mcptest.Legacy} {
		t.Run(v, func(t *testing.T) { f(t, v) })
	}
}

func tasksOn() *mcp.Options { return &mcp.Options{Tasks: mcp.TasksWhenRequired} }

func TestTaskCallPollsUntilCompleted(t *testing.T) {
	eachEra(t, func(t *testing.T, version string) {
		release := make(chan struct{})
		url, srv := taskServer(t, version, taskTool("research", "required", func(ctx context.Context, _ json.RawMessage, run *mcptest.TaskRun) (any, error) {
			run.Working("gathering sources")
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return textResult("the report"), nil
		}))
		c := connect(t, url, tasksOn())
		ctx, st := observe(context.Background())
		go func() {
			st.waitFor(t, ctx, func(s mcp.TaskStatus) bool { return s.Message == "gathering sources" })
			close(release)
		}()
		res, err := c.CallTool(ctx, "research", nil)
		require.NoError(t, err)
		assert.Equal(t, "the report", res.Text())
		assert.False(t, res.IsError)

		st.mu.Lock()
		all := append([]mcp.TaskStatus(nil), st.all...)
		st.mu.Unlock()
		// The last status may still be on its way: the call does not wait.
		require.NotEmpty(t, all)
		assert.Equal(t, "research", all[0].Tool)
		assert.NotEmpty(t, all[0].TaskID)
		assert.GreaterOrEqual(t, srv.Tasks.Polls(), 1)
		var sawCall, sawGet bool
		for _, r := range srv.Requests() {
			switch r.Method {
			case "tools/call":
				sawCall = true
				if version == mcptest.Modern {
					assert.Contains(t, string(r.Body), `"io.modelcontextprotocol/tasks":{}`, "the extension is declared on the call")
				} else {
					assert.Contains(t, string(r.Body), `"task":{}`, "the call asks for a task")
				}
			case "tasks/get":
				sawGet = true
				if version == mcptest.Modern {
					assert.Equal(t, all[0].TaskID, r.Header.Get("Mcp-Name"))
					assert.Contains(t, string(r.Body), `"io.modelcontextprotocol/tasks":{}`)
				}
			}
		}
		assert.True(t, sawCall && sawGet)
	})
}

func TestTaskCancelledWithTheCallersContext(t *testing.T) {
	eachEra(t, func(t *testing.T, version string) {
		url, srv := taskServer(t, version, taskTool("slow", "required", stuckTask))
		c := connect(t, url, tasksOn())
		ctx, st := observe(context.Background())
		ctx, cancel := context.WithCancel(ctx)
		var id string
		go func() {
			id = st.waitFor(t, ctx, func(s mcp.TaskStatus) bool { return s.TaskID != "" }).TaskID
			cancel()
		}()
		_, err := c.CallTool(ctx, "slow", nil)
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, 1, srv.Tasks.Cancels())
		status, _, ok := srv.Tasks.Status(id)
		require.True(t, ok)
		assert.Equal(t, mcp.TaskCancelled, status)
	})
}

func TestTaskOutlivingItsTTL(t *testing.T) {
	eachEra(t, func(t *testing.T, version string) {
		s := &mcptest.Server{Versions: []string{version}, Tasks: &mcptest.Tasks{PollInterval: 1, TTL: 150e6},
			Tools: []mcptest.Tool{taskTool("stuck", "required", stuckTask)}}
		c := connect(t, mcptest.Start(t, s), tasksOn())
		_, err := c.CallTool(context.Background(), "stuck", nil)
		require.ErrorIs(t, err, mcp.ErrTaskExpired)
	})
}

func TestTaskForgottenByTheServer(t *testing.T) {
	eachEra(t, func(t *testing.T, version string) {
		url, srv := taskServer(t, version, taskTool("slow", "required", stuckTask))
		c := connect(t, url, tasksOn())
		ctx, st := observe(context.Background())
		go func() {
			st.waitFor(t, ctx, func(s mcp.TaskStatus) bool { return s.TaskID != "" })
			srv.Tasks.Forget()
		}()
		_, err := c.CallTool(ctx, "slow", nil)
		require.ErrorIs(t, err, mcp.ErrTaskLost)
		var rpc *mcp.RPCError
		require.ErrorAs(t, err, &rpc)
		assert.Equal(t, mcp.CodeInvalidParams, rpc.Code)

		_, err = c.AwaitTask(context.Background(), "no-such-task")
		require.ErrorIs(t, err, mcp.ErrTaskLost)
	})
}

func TestTaskOutcomes(t *testing.T) {
	eachEra(t, func(t *testing.T, version string) {
		url, _ := taskServer(t, version,
			taskTool("tool_error", "required", func(context.Context, json.RawMessage, *mcptest.TaskRun) (any, error) {
				return map[string]any{"content": []any{map[string]any{"type": "text", "text": "no such account"}}, "isError": true}, nil
			}),
			taskTool("broken", "required", func(context.Context, json.RawMessage, *mcptest.TaskRun) (any, error) {
				return nil, errors.New("disk full")
			}))
		c := connect(t, url, tasksOn())
		res, err := c.CallTool(context.Background(), "tool_error", nil)
		require.NoError(t, err, "a completed task with isError is a tool error, not a Go error")
		assert.True(t, res.IsError)
		assert.Equal(t, "no such account", res.Text())

		_, err = c.CallTool(context.Background(), "broken", nil)
		require.ErrorIs(t, err, mcp.ErrTaskFailed)
		var rpc *mcp.RPCError
		require.ErrorAs(t, err, &rpc)
		assert.Equal(t, mcp.CodeInternalError, rpc.Code)
		assert.Contains(t, rpc.Message, "disk full")
	})
}

func TestTaskInputRequestGoesToTheHandler(t *testing.T) {
	eachEra(t, func(t *testing.T, version string) {
		url, srv := taskServer(t, version, taskTool("research", "required", func(ctx context.Context, _ json.RawMessage, run *mcptest.TaskRun) (any, error) {
			raw, err := run.Input(ctx, "elicitation/create", map[string]any{"message": "Which python?",
				"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"meaning": map[string]any{"type": "string"}}}})
			if err != nil {
				return nil, err
			}
			var ans mcp.ElicitResult
			if err := json.Unmarshal(raw, &ans); err != nil {
				return nil, err
			}
			return textResult(fmt.Sprintf("%s: %v", ans.Action, ans.Content["meaning"])), nil
		}))
		var asked []string
		var mu sync.Mutex
		opts := tasksOn()
		opts.Elicit = func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			asked = append(asked, req.Message)
			mu.Unlock()
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"meaning": "snake"}}, nil
		}
		c := connect(t, url, opts)
		res, err := c.CallTool(context.Background(), "research", nil)
		require.NoError(t, err)
		assert.Equal(t, "accept: snake", res.Text())
		mu.Lock()
		assert.Equal(t, []string{"Which python?"}, asked, "asked once, however many polls saw it")
		mu.Unlock()
		if version == mcptest.Modern {
			assert.Equal(t, 1, srv.Tasks.Updates())
		}
	})
}

func TestTaskSamplingGoesToTheHandler(t *testing.T) {
	eachEra(t, func(t *testing.T, version string) {
		url, _ := taskServer(t, version, taskTool("summarise", "required", func(ctx context.Context, _ json.RawMessage, run *mcptest.TaskRun) (any, error) {
			raw, err := run.Input(ctx, "sampling/createMessage", map[string]any{"maxTokens": 9,
				"messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "Summarise"}}}})
			if err != nil {
				return nil, err
			}
			var ans mcp.SampleResult
			if err := json.Unmarshal(raw, &ans); err != nil {
				return nil, err
			}
			return textResult(ans.Model + ": " + ans.Content[0].Text), nil
		}))
		opts := tasksOn()
		opts.Sample = func(_ context.Context, req *mcp.SampleRequest) (*mcp.SampleResult, error) {
			return &mcp.SampleResult{Content: mcp.SamplingContents{{Type: "text", Text: fmt.Sprint("short, ", req.MaxTokens)}}, Model: "m"}, nil
		}
		c := connect(t, url, opts)
		res, err := c.CallTool(context.Background(), "summarise", nil)
		require.NoError(t, err)
		assert.Equal(t, "m: short, 9", res.Text())
	})
}

func TestTaskStatusBackwardsIsAnError(t *testing.T) {
	// A task created completed, then reported working: only possible on
	// the 2026-07-28 wire, where a task created ended is polled for its
	// outcome.
	url, srv := taskServer(t, mcptest.Modern, taskTool("odd", "required", stuckTask))
	srv.Tasks.RewriteCreated = func(task map[string]any) { task["status"] = "completed" }
	c := connect(t, url, tasksOn())
	_, err := c.CallTool(context.Background(), "odd", nil)
	require.ErrorIs(t, err, mcp.ErrTaskMisbehaved)
	assert.Contains(t, err.Error(), "from completed back to working")
}

func TestTaskOfAnotherIDIsAnError(t *testing.T) {
	eachEra(t, func(t *testing.T, version string) {
		url, srv := taskServer(t, version, taskTool("slow", "required", stuckTask))
		srv.Tasks.Rewrite = func(_ int, task map[string]any) { task["taskId"] = "someone-else" }
		c := connect(t, url, tasksOn())
		_, err := c.CallTool(context.Background(), "slow", nil)
		require.ErrorIs(t, err, mcp.ErrTaskMisbehaved)
	})
}

func TestTaskStatusFloodDoesNotStallTheCall(t *testing.T) {
	eachEra(t, func(t *testing.T, version string) {
		const polls = 25
		enough := make(chan struct{})
		url, srv := taskServer(t, version, taskTool("chatty", "required", releasedTask(enough, "done")))
		srv.Tasks.Rewrite = func(poll int, task map[string]any) {
			if task["status"] == "working" {
				task["statusMessage"] = fmt.Sprintf("step %d", poll) // a new status on every poll
			}
			if poll == polls {
				close(enough)
			}
		}
		c := connect(t, url, tasksOn())
		block := make(chan struct{})
		var mu sync.Mutex
		var got []mcp.TaskStatus
		delivered := make(chan struct{}, 64)
		ctx := mcp.WithTaskObserver(context.Background(), func(s mcp.TaskStatus) {
			<-block // a host that does not keep up
			mu.Lock()
			got = append(got, s)
			mu.Unlock()
			delivered <- struct{}{}
		})
		res, err := c.CallTool(ctx, "chatty", nil)
		require.NoError(t, err, "the call ends though its observer is stuck")
		assert.Equal(t, "done", res.Text())
		assert.GreaterOrEqual(t, srv.Tasks.Polls(), polls)
		close(block)
		// The observer gets at most the queue (16) plus the one it was
		// blocked on, the newest last.
		for {
			<-delivered
			mu.Lock()
			n, last := len(got), got[len(got)-1]
			mu.Unlock()
			require.LessOrEqual(t, n, 17)
			if last.Status == mcp.TaskCompleted {
				break
			}
		}
	})
}

func TestAwaitTaskAfterARestart(t *testing.T) {
	eachEra(t, func(t *testing.T, version string) {
		release := make(chan struct{})
		url, _ := taskServer(t, version, taskTool("research", "required", releasedTask(release, "kept")))
		first, err := mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: url}, tasksOn())
		require.NoError(t, err)
		ctx, st := observe(context.Background())
		ids := make(chan string, 1)
		go func() {
			ids <- st.waitFor(t, ctx, func(s mcp.TaskStatus) bool { return s.TaskID != "" }).TaskID
			_ = first.Close() // the host goes away mid-task
		}()
		_, err = first.CallTool(ctx, "research", nil)
		require.ErrorIs(t, err, mcp.ErrClosed)
		id := <-ids

		second := connect(t, url, tasksOn())
		close(release)
		res, err := second.AwaitTask(context.Background(), id)
		require.NoError(t, err)
		assert.Equal(t, "kept", res.Text())
	})
}

func TestToolsetOffersTaskTools(t *testing.T) {
	required := taskTool("research", "required", func(context.Context, json.RawMessage, *mcptest.TaskRun) (any, error) {
		return textResult("report"), nil
	})
	legacyURL, _ := taskServer(t, mcptest.Legacy, required, mcptest.EchoTool())
	modernURL, _ := taskServer(t, mcptest.Modern, required, mcptest.EchoTool())
	servers := []config.Server{{Name: "old", URL: legacyURL}, {Name: "new", URL: modernURL}}

	off, err := toolset.Discover(context.Background(), servers, &toolset.Options{Client: mcp.Options{Tasks: mcp.TasksOff}})
	require.NoError(t, err)
	defer func() { _ = off.Close() }()
	_, ok := off.Tool("old_research")
	assert.False(t, ok, "tasks off: a task-only tool is left out")
	assert.True(t, strings.Contains(fmt.Sprint(off.Warnings()), string(toolset.WarnTaskRequired)))

	on, err := toolset.Discover(context.Background(), servers, nil) // the zero value calls it as a task
	require.NoError(t, err)
	defer func() { _ = on.Close() }()
	st, ok := on.Tool("old_research")
	require.True(t, ok)
	assert.Equal(t, mcp.TaskAlways, st.Task)
	echo, _ := on.Tool("old_echo")
	assert.Equal(t, mcp.TaskNever, echo.Task)
	st, _ = on.Tool("new_research")
	assert.Equal(t, mcp.TaskMaybe, st.Task, "a 2026-07-28 server decides per call")

	ctx, obs := observe(context.Background())
	res, err := on.Call(ctx, "old_research", nil)
	require.NoError(t, err)
	assert.Equal(t, "report", res.Result.Text())
	s := obs.waitFor(t, context.Background(), func(mcp.TaskStatus) bool { return true })
	assert.Equal(t, "old", s.Server)

	res, err = on.AwaitTask(context.Background(), "old", s.TaskID)
	require.NoError(t, err, "a finished task can still be fetched while the server keeps it")
	assert.Equal(t, "report", res.Result.Text())
	_, err = on.AwaitTask(context.Background(), "nobody", s.TaskID)
	require.ErrorIs(t, err, toolset.ErrUnknownServer)

	// The configuration decides per server, over the host's default.
	servers[0].Tasks, servers[1].Tasks = config.TasksRequired, config.TasksOff
	perServer, err := toolset.Discover(context.Background(), servers, &toolset.Options{Client: mcp.Options{Tasks: mcp.TasksWhenAllowed}})
	require.NoError(t, err)
	defer func() { _ = perServer.Close() }()
	st, ok = perServer.Tool("old_research")
	require.True(t, ok)
	assert.Equal(t, mcp.TaskAlways, st.Task)
	_, ok = perServer.Tool("new_research")
	assert.False(t, ok, "tasks: off leaves a tool that says it requires a task out")
}

func TestTaskTimeoutWithoutADeadline(t *testing.T) {
	eachEra(t, func(t *testing.T, version string) {
		url, srv := taskServer(t, version, taskTool("stuck", "required", stuckTask))
		// The limit also bounds the tools/call that creates the task: 1 s
		// leaves it room on a loaded machine; the task never ends, so
		// only the limit ends the call.
		c := connect(t, url, &mcp.Options{Tasks: mcp.TasksWhenRequired, TaskTimeout: time.Second})
		_, err := c.CallTool(context.Background(), "stuck", nil)
		require.ErrorIs(t, err, mcp.ErrTaskTimeout)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, 1, srv.Tasks.Cancels(), "the task is cancelled when the limit passes")
	})
}

// A 2025-11-25 task that completed but whose result did not come before
// TaskTimeout ended the call still fails with ErrTaskTimeout: the limit,
// not the caller's context, cut the call short.
func TestTaskTimeoutWhileFetchingTheResult(t *testing.T) {
	s := &mcptest.Server{Versions: []string{mcptest.Legacy},
		// Created completed: the call goes straight to tasks/result.
		Tasks: &mcptest.Tasks{RewriteCreated: func(task map[string]any) { task["status"] = mcp.TaskCompleted }},
		Tools: []mcptest.Tool{taskTool("quick", "required", func(context.Context, json.RawMessage, *mcptest.TaskRun) (any, error) {
			return textResult("done"), nil
		})}}
	s.Intercept = func(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) bool {
		if msg.Method != "tasks/result" {
			return false
		}
		<-r.Context().Done() // the result never comes
		return true
	}
	c := connect(t, mcptest.Start(t, s), &mcp.Options{Tasks: mcp.TasksWhenRequired, TaskTimeout: 300 * time.Millisecond})
	_, err := c.CallTool(context.Background(), "quick", nil)
	require.ErrorIs(t, err, mcp.ErrTaskTimeout)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, 0, s.Tasks.Cancels(), "the task had ended: nothing to cancel")
}

func TestTaskInputWithoutAHandlerCancelsTheTask(t *testing.T) {
	// roots/list with no Roots handler: the call cannot go on, and the
	// task is not left running.
	url, srv := taskServer(t, mcptest.Modern, taskTool("needs_roots", "required", func(ctx context.Context, _ json.RawMessage, run *mcptest.TaskRun) (any, error) {
		if _, err := run.Input(ctx, "roots/list", map[string]any{}); err != nil {
			return nil, err
		}
		return textResult("unexpected"), nil
	}))
	c := connect(t, url, tasksOn())
	_, err := c.CallTool(context.Background(), "needs_roots", nil)
	require.ErrorIs(t, err, mcp.ErrInputRequired)
	assert.Equal(t, 1, srv.Tasks.Cancels())
	assert.Equal(t, 0, srv.Tasks.Updates())
}

func TestTaskStatusNotificationFloodCrowdsOutNothing(t *testing.T) {
	// While the host's OnLog blocks, a server sends far more task status
	// notifications than the notification queue holds, then a log
	// message: the log message still reaches the host.
	s := &mcptest.Server{Versions: []string{mcptest.Legacy}, SSE: true, Tools: []mcptest.Tool{{
		Def: json.RawMessage(`{"name":"noisy","inputSchema":{"type":"object"}}`),
		Call: func(_ context.Context, _ json.RawMessage, send func(string, any)) (any, error) {
			send("notifications/message", map[string]any{"level": "info", "data": "first"})
			for i := range 1000 {
				send("notifications/tasks/status", map[string]any{"taskId": "t", "status": "working", "statusMessage": fmt.Sprint(i)})
			}
			send("notifications/message", map[string]any{"level": "info", "data": "last"})
			return textResult("ok"), nil
		},
	}}}
	release := make(chan struct{})
	logs := make(chan string, 2)
	c := connect(t, mcptest.Start(t, s), &mcp.Options{OnLog: func(m mcp.LogMessage) {
		logs <- string(m.Data)
		<-release
	}})
	res, err := c.CallTool(context.Background(), "noisy", nil)
	require.NoError(t, err)
	assert.Equal(t, "ok", res.Text())
	assert.Equal(t, `"first"`, <-logs)
	close(release)
	select {
	case last := <-logs:
		assert.Equal(t, `"last"`, last)
	case <-time.After(10 * time.Second):
		t.Fatal("the last log message was crowded out")
	}
}

// A server whose clock is an hour behind gives a createdAt an hour old:
// the task's ttl is counted on the client's clock, so the task is not
// given up at once.
func TestTaskTTLIgnoresTheServersClock(t *testing.T) {
	eachEra(t, func(t *testing.T, version string) {
		release := make(chan struct{})
		s := &mcptest.Server{Versions: []string{version}, Tasks: &mcptest.Tasks{PollInterval: 1, TTL: time.Minute},
			Tools: []mcptest.Tool{taskTool("research", "required", releasedTask(release, "the report"))}}
		url := mcptest.Start(t, s)
		behind := func(task map[string]any) {
			task["createdAt"] = time.Now().Add(-time.Hour).UTC().Format(time.RFC3339Nano)
		}
		s.Tasks.RewriteCreated = behind
		s.Tasks.Rewrite = func(poll int, task map[string]any) {
			behind(task)
			if poll == 1 {
				close(release)
			}
		}
		c := connect(t, url, tasksOn())
		res, err := c.CallTool(context.Background(), "research", nil)
		require.NoError(t, err)
		assert.Equal(t, "the report", res.Text())
	})
}

// Close ends a task-backed call waiting between two polls at once, not
// at the next poll (up to MaxTaskPollInterval later), and leaves the task
// running for AwaitTask.
func TestTaskCallEndsWithClose(t *testing.T) {
	eachEra(t, func(t *testing.T, version string) {
		s := &mcptest.Server{Versions: []string{version}, Tasks: &mcptest.Tasks{PollInterval: time.Hour},
			Tools: []mcptest.Tool{taskTool("slow", "required", stuckTask)}}
		url := mcptest.Start(t, s)
		c := connect(t, url, tasksOn())
		ctx, st := observe(context.Background())
		ended := make(chan error, 1)
		go func() {
			_, err := c.CallTool(ctx, "slow", nil)
			ended <- err
		}()
		wait, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		id := st.waitFor(t, wait, func(s mcp.TaskStatus) bool { return s.TaskID != "" }).TaskID
		require.NoError(t, c.Close())
		select {
		case err := <-ended:
			require.ErrorIs(t, err, mcp.ErrClosed)
		case <-wait.Done():
			t.Fatal("the call did not end with Close")
		}
		assert.Equal(t, 0, s.Tasks.Cancels(), "after Close the task runs on, for AwaitTask")
		status, _, ok := s.Tasks.Status(id)
		require.True(t, ok)
		assert.Equal(t, mcp.TaskWorking, status)
	})
}

// A caller's deadline long enough for a task (the agent's TaskTimeout)
// does not lift the call timeout from the request itself: a 2026-07-28
// server that answers a call of a tool that may run as a task plainly,
// and hangs, is given up after Options.CallTimeout, as with tasks off.
func TestTaskCapableCallKeepsTheCallTimeout(t *testing.T) {
	hang := mcptest.Tool{Def: []byte(`{"name":"hang","inputSchema":{"type":"object"}}`),
		Call: func(ctx context.Context, _ json.RawMessage, _ func(string, any)) (any, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}}
	s := &mcptest.Server{Versions: []string{mcptest.Modern}, Tasks: &mcptest.Tasks{}, Tools: []mcptest.Tool{hang}}
	url := mcptest.Start(t, s)
	for _, listed := range []bool{true, false} {
		// CallTimeout bounds the ListTools too: 1 s leaves it room on a
		// loaded machine, far short of the caller's hour.
		c := connect(t, url, &mcp.Options{Tasks: mcp.TasksWhenRequired, CallTimeout: time.Second})
		if listed {
			tools, err := c.ListTools(context.Background())
			require.NoError(t, err)
			require.Len(t, tools, 1)
			require.Equal(t, mcp.TaskMaybe, c.TaskUse(tools[0]))
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		ended := make(chan error, 1)
		go func() {
			_, err := c.CallTool(ctx, "hang", nil)
			ended <- err
		}()
		select {
		case err := <-ended:
			require.ErrorIs(t, err, context.DeadlineExceeded, "listed %v", listed)
		case <-time.After(10 * time.Second):
			t.Fatalf("the call outlived its call timeout (listed %v)", listed)
		}
		cancel()
	}
}

// A task's id may be a bearer token for its result: the errors of a call
// do not quote it (they reach the model), only the observer gets it.
func TestTaskErrorsDoNotQuoteTheTaskID(t *testing.T) {
	eachEra(t, func(t *testing.T, version string) {
		url, srv := taskServer(t, version,
			taskTool("broken", "required", func(context.Context, json.RawMessage, *mcptest.TaskRun) (any, error) {
				return nil, errors.New("disk full")
			}),
			taskTool("slow", "required", stuckTask))
		c := connect(t, url, tasksOn())
		ctx, st := observe(context.Background())
		_, err := c.CallTool(ctx, "broken", nil)
		require.ErrorIs(t, err, mcp.ErrTaskFailed)
		wait, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		id := st.waitFor(t, wait, func(s mcp.TaskStatus) bool { return s.TaskID != "" }).TaskID
		assert.NotContains(t, err.Error(), id)

		ctx, st = observe(context.Background())
		go func() {
			st.waitFor(t, ctx, func(s mcp.TaskStatus) bool { return s.TaskID != "" })
			srv.Tasks.Forget()
		}()
		_, err = c.CallTool(ctx, "slow", nil)
		require.ErrorIs(t, err, mcp.ErrTaskLost)
		st.mu.Lock()
		id = st.all[0].TaskID
		st.mu.Unlock()
		assert.NotContains(t, err.Error(), id)
	})
}

// A 2025-11-25 task that failed, whose outcome cannot be fetched, is an
// ErrTaskFailed that still wraps why the fetch failed.
func TestTaskFailedOutcomeFetchErrorIsWrapped(t *testing.T) {
	s := &mcptest.Server{Versions: []string{mcptest.Legacy}, Tasks: &mcptest.Tasks{PollInterval: 1},
		Tools: []mcptest.Tool{taskTool("broken", "required", func(context.Context, json.RawMessage, *mcptest.TaskRun) (any, error) {
			return nil, errors.New("disk full")
		})},
		Intercept: func(w http.ResponseWriter, _ *http.Request, msg *jsonrpc.Message) bool {
			if msg.Method != "tasks/result" {
				return false
			}
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
			return true
		}}
	c := connect(t, mcptest.Start(t, s), tasksOn())
	_, err := c.CallTool(context.Background(), "broken", nil)
	require.ErrorIs(t, err, mcp.ErrTaskFailed)
	var herr *mcp.HTTPError
	require.ErrorAs(t, err, &herr)
	assert.Equal(t, http.StatusServiceUnavailable, herr.StatusCode)
}

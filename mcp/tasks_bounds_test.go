package mcp_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
)

// A server whose clock is an hour behind gives a createdAt an hour old:
// the task's ttl is counted on the client's clock, so the task is not
// given up at once.
func TestTaskTTLIgnoresTheServersClock(t *testing.T) {
	eachEra(t, func(t *testing.T, version string) {
		release := make(chan struct{})
		s := &mcptest.Server{Versions: []string{version}, Tasks: &mcptest.Tasks{PollInterval: 1, TTL: time.Minute},
			Tools: []mcptest.Tool{taskTool("research", "required", releasedTask(release, "the report"))}}
		url := start(t, s)
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
		url := start(t, s)
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
	url := start(t, s)
	for _, listed := range []bool{true, false} {
		c := connect(t, url, &mcp.Options{Tasks: mcp.TasksWhenRequired, CallTimeout: 100 * time.Millisecond})
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

//go:build linux

package interop

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/openai"
	"git.rickub.com/bots-garden/mini-me/agent/openai/openaitest"
	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// researchTool is server-everything's task-only tool (2025-11-25 tasks:
// execution.taskSupport "required"), registered once the client is
// initialized: about four one-second stages, pollInterval 1000 ms.
const researchTool = "simulate-research-query"

// TestEverythingTasks calls server-everything's research tool as a task,
// over Streamable HTTP and stdio: once from the agent, as one tool call
// to a scripted model (its wall time and polls are logged), and once
// ambiguous, where the task asks for input with an elicitation that comes
// on the tasks/result stream.
func TestEverythingTasks(t *testing.T) {
	node, dir := everythingInstall(t)
	httpURL, _ := startEverythingHTTP(t)
	proxied, gets := countingProxy(t, httpURL)
	for _, tc := range []struct {
		name string
		cfg  config.Server
	}{
		{"http", config.Server{Name: "everything", URL: proxied, Permissions: permission.ModeAuto}},
		{"stdio", config.Server{Name: "everything", Command: node, Args: []string{filepath.Join(dir, everythingMain), "stdio"},
			Dir: dir, Permissions: permission.ModeAuto}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked atomic.Int32
			changed := make(chan struct{}, 16)
			ts, err := toolset.Discover(context.Background(), []config.Server{tc.cfg}, &toolset.Options{
				Client: mcp.Options{
					ClientInfo: mcp.Implementation{Name: "mini-me-interop", Version: "0.0.0"},
					Tasks:      mcp.TasksWhenRequired,
					Elicit: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						asked.Add(1)
						return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"interpretation": "snake"}}, nil
					},
				},
				OnChange: func(toolset.ToolsChange) {
					select {
					case changed <- struct{}{}:
					default:
					}
				},
			})
			require.NoError(t, err)
			defer func() { assert.NoError(t, ts.Close()) }()
			st := waitForTool(t, ts, changed, researchTool)
			assert.Equal(t, mcp.TaskAlways, st.Task)

			_, model := startModel(t,
				openaitest.Turn{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: st.Name, Arguments: `{"topic":"tasks"}`}}},
				openaitest.Turn{Text: "The report is in."},
			)
			var mu sync.Mutex
			var statuses []mcp.TaskStatus
			var result *agent.ToolFinished
			a := &agent.Agent{Model: model, Tools: ts, Policy: permission.NewPolicy(permission.AllowAll{})}
			before := gets.Load()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			began := time.Now()
			res, err := a.RunStream(ctx, []agent.Message{agent.UserMessage("Research tasks")}, func(e agent.Event) {
				mu.Lock()
				defer mu.Unlock()
				switch e := e.(type) {
				case *agent.ToolStatus:
					statuses = append(statuses, e.Task)
				case *agent.ToolFinished:
					result = e
				}
			})
			took := time.Since(began)
			require.NoError(t, err)
			assert.Equal(t, "The report is in.", res.Answer)
			mu.Lock()
			require.NotNil(t, result)
			assert.Equal(t, agent.StatusOK, result.Status)
			assert.Contains(t, result.Output, "# Research Report: tasks")
			require.NotEmpty(t, statuses)
			assert.NotEmpty(t, statuses[0].TaskID)
			assert.Contains(t, statuses[0].Message, "Gathering sources")
			last := statuses[len(statuses)-1]
			mu.Unlock()
			if tc.name == "http" {
				polls := gets.Load() - before
				assert.GreaterOrEqual(t, polls, int64(2), "the task was polled")
				t.Logf("agent task-backed call over HTTP: wall %v (tool call %v), %d tasks/get", took.Round(time.Millisecond), result.Duration.Round(time.Millisecond), polls)
			} else {
				t.Logf("agent task-backed call over stdio: wall %v (tool call %v), at least %d tasks/get (the poll count of the last status delivered)",
					took.Round(time.Millisecond), result.Duration.Round(time.Millisecond), last.Polls)
			}

			// Ambiguous: the task asks which python is meant.
			out, err := ts.Call(ctx, st.Name, map[string]any{"topic": "python", "ambiguous": true})
			require.NoError(t, err)
			assert.False(t, out.Result.IsError)
			assert.Contains(t, out.Result.Text(), "python (snake)")
			assert.Equal(t, int32(1), asked.Load(), "one elicitation, answered once")
		})
	}
}

// waitForTool returns the Toolset's tool named name on its server, once
// a refresh brought it.
func waitForTool(t *testing.T, ts *toolset.Toolset, changed <-chan struct{}, name string) toolset.Tool {
	t.Helper()
	deadline := time.After(stepTimeout)
	for {
		for _, st := range ts.Tools() {
			if st.Tool.Name == name {
				return st
			}
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("tool %s never listed", name)
		}
	}
}

// startModel starts a scripted model.
func startModel(t *testing.T, turns ...openaitest.Turn) (*openaitest.Server, *openai.Model) {
	t.Helper()
	s := &openaitest.Server{Turns: turns}
	u := s.Start()
	t.Cleanup(s.Close)
	return s, &openai.Model{BaseURL: u, Model: "test-model"}
}

// countingProxy forwards to target on 127.0.0.1 and counts the tasks/get
// requests that pass.
func countingProxy(t *testing.T, target string) (string, *atomic.Int64) {
	t.Helper()
	u, err := url.Parse(target)
	require.NoError(t, err)
	var gets atomic.Int64
	p := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	p.FlushInterval = -1 // SSE goes through as it comes
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			if bytes.Contains(body, []byte(`"method":"tasks/get"`)) {
				gets.Add(1)
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		p.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		s.CloseClientConnections()
		s.Close()
	})
	return s.URL + strings.TrimPrefix(target, u.Scheme+"://"+u.Host), &gets
}

package temporal_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/openai/openaitest"
	"git.rickub.com/bots-garden/mini-me/agent/temporal"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/permission"
)

var record = flag.Bool("record", false, "write the histories of the tests' runs to testdata, for TestReplay")

// filesServer starts the MCP test server "files": write (not
// idempotent), read (read-only), delete (destructive) and wait (blocks
// until cancelled). A call with "block": true is held until its request
// ends (the worker is killed, the call cancelled), unless it is a read
// retried. entered receives the key of each call as it arrives,
// cancelled the key of each held call whose request ended. versions are
// the protocol revisions it speaks; none means the modern one.
func filesServer(t *testing.T, versions ...string) (srv *mcptest.Server, url string, cnt *counter, entered chan string, cancelled chan string) {
	t.Helper()
	cnt = &counter{}
	entered = make(chan string, 1000)
	cancelled = make(chan string, 10)
	tool := func(name, annotations string) mcptest.Tool {
		return mcptest.Tool{
			Def: json.RawMessage(fmt.Sprintf(`{"name":%q,"description":"%s a file.","inputSchema":{"type":"object","properties":{"path":{"type":"string"},"block":{"type":"boolean"}},"required":["path"]}%s}`, name, name, annotations)),
			Call: func(ctx context.Context, raw json.RawMessage, _ func(string, any)) (any, error) {
				var args struct {
					Path  string `json:"path"`
					Block bool   `json:"block"`
				}
				if err := json.Unmarshal(raw, &args); err != nil {
					return nil, err
				}
				key := name + " " + args.Path
				n := cnt.add(key)
				entered <- key
				if name == "wait" || args.Block && (name != "read" || n == 1) {
					<-ctx.Done()
					cancelled <- key
					return nil, ctx.Err()
				}
				return map[string]any{"content": []any{map[string]any{"type": "text", "text": fmt.Sprintf("%s #%d", key, n)}}}, nil
			},
		}
	}
	if len(versions) == 0 {
		versions = []string{mcptest.Modern}
	}
	srv = &mcptest.Server{Versions: versions, Tools: []mcptest.Tool{
		tool("write", ""),
		tool("read", `,"annotations":{"readOnlyHint":true}`),
		tool("delete", `,"annotations":{"destructiveHint":true}`),
		tool("wait", `,"annotations":{"readOnlyHint":true}`),
	}}
	url = srv.Start()
	t.Cleanup(srv.Close)
	return srv, url, cnt, entered, cancelled
}

// call is a scripted call.
func call(name, args string) scriptCall { return scriptCall{Name: name, Args: json.RawMessage(args)} }

// start starts a run of s on queue.
func start(t *testing.T, c client.Client, queue string, s script, cfg temporal.Config) client.WorkflowRun {
	t.Helper()
	run, err := c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{TaskQueue: queue}, temporal.WorkflowName,
		temporal.Input{Messages: userScript(s), Config: cfg})
	require.NoError(t, err)
	return run
}

// result waits for the run's Output.
func result(t *testing.T, run client.WorkflowRun) temporal.Output {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out temporal.Output
	require.NoError(t, run.Get(ctx, &out))
	return out
}

// progressUntil queries the run's progress until ok accepts it.
func progressUntil(t *testing.T, c client.Client, run client.WorkflowRun, ok func(temporal.Progress) bool) temporal.Progress {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		v, err := c.QueryWorkflow(ctx, run.GetID(), run.GetRunID(), temporal.ProgressQuery)
		cancel()
		var p temporal.Progress
		if err == nil && v.Get(&p) == nil && ok(p) {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run's progress never came: last %+v, %v", p, err)
		}
		time.Sleep(100 * time.Millisecond) // polling a query: there is no push
	}
}

// recv receives from ch, failing the test after a minute.
func recv(t *testing.T, ch chan string) string {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(time.Minute):
		t.Fatal("nothing came in a minute")
		return ""
	}
}

// queue is a task queue of the test's own.
func queue(t *testing.T) string { return strings.ReplaceAll(t.Name(), "/", "-") }

// history fetches the run's history, replays it with the current code,
// and with -record writes it to testdata/name.json.
func history(t *testing.T, c client.Client, run client.WorkflowRun, name string) {
	t.Helper()
	it := c.GetWorkflowHistory(context.Background(), run.GetID(), run.GetRunID(), false, 0)
	h := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		h.Events = append(h.Events, ev)
	}
	replayer := worker.NewWorkflowReplayer()
	temporal.RegisterWorkflow(replayer)
	require.NoError(t, replayer.ReplayWorkflowHistory(quiet(), h), "the run's history replays with the current code")
	if *record {
		b, err := temporalproto.CustomJSONMarshalOptions{Indent: " "}.Marshal(h)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join("testdata", name+".json"), b, 0o644))
	}
}

// TestApprovalAfterRestart: a turn of two calls, one allowed (it runs),
// one destructive (it waits); the worker is killed and another started;
// the approval given then runs the second call, and the first is not run
// again.
func TestApprovalAfterRestart(t *testing.T) {
	_, url, cnt, _, _ := filesServer(t)
	q := queue(t)
	w1 := startWorker(t, q, url)
	c := dial(t)
	run := start(t, c, q, script{Turns: [][]scriptCall{{call("files_write", `{"path":"a"}`), call("files_delete", `{"path":"b"}`)}}},
		temporal.Config{Mode: permission.ModeAuto})
	p := progressUntil(t, c, run, func(p temporal.Progress) bool { return len(p.Pending) == 1 })
	assert.Equal(t, "files_delete", p.Pending[0].Call.Name)
	assert.Equal(t, 1, cnt.get("write a"))
	assert.Equal(t, 0, cnt.get("delete b"))

	w1.kill()
	startWorker(t, q, url)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	bad, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: run.GetID(), RunID: run.GetRunID(),
		UpdateName: temporal.DecideUpdate, WaitForStage: client.WorkflowUpdateStageCompleted,
		Args: []any{map[string]permission.Decision{"not-a-call": {Verdict: permission.AllowOnce}}}})
	if err == nil {
		err = bad.Get(ctx, nil)
	}
	require.ErrorContains(t, err, "no decision for pending call", "a decision for no pending call is rejected")
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: run.GetID(), RunID: run.GetRunID(),
		UpdateName: temporal.DecideUpdate, WaitForStage: client.WorkflowUpdateStageCompleted,
		Args: []any{map[string]permission.Decision{p.Pending[0].ID: {Verdict: permission.AllowOnce}}}})
	require.NoError(t, err)
	require.NoError(t, h.Get(ctx, nil))

	out := result(t, run)
	require.Equal(t, agent.StopAnswer, out.Result.Stop, out.Error)
	assert.Equal(t, 1, cnt.get("write a"), "the call that ran before the restart did not run again")
	assert.Equal(t, 1, cnt.get("delete b"))
	assert.Contains(t, out.Result.Answer, "write a #1")
	assert.Contains(t, out.Result.Answer, "delete b #1")
	history(t, c, run, "approval-after-restart")
}

// TestWorkerLost: the worker is killed during a call. A call that is not
// idempotent is not run again: the run stops, the call marked "may have
// run". A read-only one is retried on the next worker and succeeds.
func TestWorkerLost(t *testing.T) {
	for _, tt := range []struct {
		tool  string
		stop  agent.StopReason
		calls int
	}{
		{"write", temporal.StopMayHaveRun, 1},
		{"read", agent.StopAnswer, 2},
	} {
		t.Run(tt.tool, func(t *testing.T) {
			_, url, cnt, entered, _ := filesServer(t)
			q := queue(t)
			w1 := startWorker(t, q, url)
			c := dial(t)
			run := start(t, c, q, script{Turns: [][]scriptCall{{call("files_"+tt.tool, `{"path":"x","block":true}`)}}},
				temporal.Config{Mode: permission.ModeAuto, Timeouts: temporal.Timeouts{Heartbeat: 2 * time.Second}})
			require.Equal(t, tt.tool+" x", recv(t, entered))
			w1.kill()
			startWorker(t, q, url)
			out := result(t, run)
			assert.Equal(t, tt.stop, out.Result.Stop, out.Error)
			assert.Equal(t, tt.calls, cnt.get(tt.tool+" x"))
			if tt.stop == temporal.StopMayHaveRun {
				require.Len(t, out.MayHaveRun, 1)
				assert.Equal(t, "files_write", out.MayHaveRun[0].Name)
				assert.Contains(t, out.Error, "may have run")
			} else {
				assert.Contains(t, out.Result.Answer, "read x #2")
			}
			history(t, c, run, "worker-lost-"+tt.tool)
		})
	}
}

// TestCancel: cancelling the workflow cancels the MCP call in flight, on
// the server: its request ends (all a modern server needs), and a legacy
// server is sent notifications/cancelled.
func TestCancel(t *testing.T) {
	for _, era := range []string{mcptest.Modern, mcptest.Legacy} {
		t.Run(era, func(t *testing.T) {
			srv, url, _, entered, cancelled := filesServer(t, era)
			q := queue(t)
			startWorker(t, q, url)
			c := dial(t)
			run := start(t, c, q, script{Turns: [][]scriptCall{{call("files_wait", `{"path":"w"}`)}}},
				temporal.Config{Mode: permission.ModeAuto, Timeouts: temporal.Timeouts{Heartbeat: 2 * time.Second}})
			require.Equal(t, "wait w", recv(t, entered))
			require.NoError(t, c.CancelWorkflow(context.Background(), run.GetID(), run.GetRunID()))
			assert.Equal(t, "wait w", recv(t, cancelled), "the call's request ended on the server")
			out := result(t, run)
			assert.Equal(t, agent.StopCanceled, out.Result.Stop)
			if era == mcptest.Legacy {
				methods := map[string]bool{}
				for _, r := range srv.Requests() {
					methods[r.Method] = true
				}
				assert.True(t, methods["notifications/cancelled"], "the client told the legacy server the call was cancelled")
			}
			history(t, c, run, "cancel-"+era)
		})
	}
}

// TestManyRuns: 200 runs at once on two worker processes, each with a
// Func call and an MCP call, all correct.
func TestManyRuns(t *testing.T) {
	_, url, cnt, _, _ := filesServer(t)
	q := queue(t)
	startWorker(t, q, url)
	startWorker(t, q, url)
	c := dial(t)
	const n = 200
	runs := make([]client.WorkflowRun, n)
	workers := map[string]bool{} // the identities of the workers that ran activities
	for i := range runs {
		runs[i] = start(t, c, q, script{Turns: [][]scriptCall{{
			call("echo", fmt.Sprintf(`{"text":"%d"}`, i)), call("files_read", fmt.Sprintf(`{"path":"%d"}`, i))}}},
			temporal.Config{Mode: permission.ModeAuto})
	}
	for i, run := range runs {
		out := result(t, run)
		require.Equal(t, agent.StopAnswer, out.Result.Stop, out.Error)
		assert.Contains(t, out.Result.Answer, fmt.Sprintf("echo %d", i))
		assert.Contains(t, out.Result.Answer, fmt.Sprintf("read %d #1", i))
		assert.Equal(t, 1, cnt.get(fmt.Sprintf("read %d", i)))
		it := c.GetWorkflowHistory(context.Background(), run.GetID(), run.GetRunID(), false, 0)
		for it.HasNext() {
			ev, err := it.Next()
			require.NoError(t, err)
			if a := ev.GetActivityTaskStartedEventAttributes(); a != nil {
				workers[a.GetIdentity()] = true
			}
		}
	}
	assert.Len(t, workers, 2, "both worker processes ran activities")
}

// TestReplay: the recorded histories replay with the current code.
func TestReplay(t *testing.T) {
	files, err := filepath.Glob("testdata/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files, "recorded histories (go test -run . -record)")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			replayer := worker.NewWorkflowReplayer()
			temporal.RegisterWorkflow(replayer)
			require.NoError(t, replayer.ReplayWorkflowHistoryFromJSONFile(quiet(), f))
		})
	}
}

// TestModelRetry: a model endpoint's 429 is retried by Temporal after the
// Retry-After it asks for, not the retry policy's first interval (1s).
func TestModelRetry(t *testing.T) {
	llm := &openaitest.Server{Turns: []openaitest.Turn{{Status: 429, Error: "slow down", RetryAfter: "3"}, {Text: "hello"}}}
	url := llm.Start()
	t.Cleanup(llm.Close)
	q := queue(t)
	startWorker(t, q, "", "MINIME_MODEL="+url)
	c := dial(t)
	begin := time.Now()
	run, err := c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{TaskQueue: q}, temporal.WorkflowName,
		temporal.Input{Messages: []agent.Message{agent.UserMessage("hi")}})
	require.NoError(t, err)
	out := result(t, run)
	require.Equal(t, agent.StopAnswer, out.Result.Stop, out.Error)
	assert.Equal(t, "hello", out.Result.Answer)
	assert.Len(t, llm.Requests(), 2)
	assert.GreaterOrEqual(t, time.Since(begin), 3*time.Second, "the retry waited for Retry-After")
	history(t, c, run, "model-retry")
}

// TestLongOutput: an output longer than the worker's MaxToolOutput (4
// KiB) is stored whole in the blob store and enters the history cut,
// head and tail, naming where it is stored.
func TestLongOutput(t *testing.T) {
	dir := t.TempDir()
	q := queue(t)
	startWorker(t, q, "", "MINIME_BLOBS="+dir)
	c := dial(t)
	long := strings.Repeat("x", 20000) + "END"
	run := start(t, c, q, script{Turns: [][]scriptCall{{call("echo", fmt.Sprintf(`{"text":%q}`, long))}}},
		temporal.Config{Mode: permission.ModeAuto})
	out := result(t, run)
	require.Equal(t, agent.StopAnswer, out.Result.Stop, out.Error)
	var tool agent.Message
	for _, m := range out.Result.Messages {
		if m.Role == agent.RoleTool {
			tool = m
		}
	}
	assert.Less(t, len(tool.Text()), 5<<10, "the output entered the history cut")
	assert.Contains(t, tool.Text(), "echo xxx")
	assert.Contains(t, tool.Text(), "xxxEND")
	files, err := filepath.Glob(filepath.Join(dir, "echo-*"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	assert.Contains(t, tool.Text(), "[... 20008 bytes cut; the whole output is stored as "+files[0]+" ...]")
	whole, err := os.ReadFile(files[0])
	require.NoError(t, err)
	assert.Equal(t, "echo "+long, string(whole))
}

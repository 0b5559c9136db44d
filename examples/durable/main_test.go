package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.uber.org/goleak"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/openai/openaitest"
	"git.rickub.com/bots-garden/mini-me/agent/temporal"
	"git.rickub.com/bots-garden/mini-me/internal/temporaldev"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// build builds the example.
func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "durable")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// TestExample runs the example's commands as a user would, against a
// real Temporal server and a scripted model: a worker, a run started, its
// pay call pending; the worker killed and another started; the approval
// given from the command line, and the answer. Then a second run
// approved right after its start: approve waits for the call.
func TestExample(t *testing.T) {
	srv, err := temporaldev.Start("../../agent/temporal/internal/devserver")
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	pay := openaitest.Turn{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "pay", Arguments: `{"to":"Ann","amount":12.5}`}}}
	llm := &openaitest.Server{Turns: []openaitest.Turn{pay, {Text: "I paid Ann 12.50 EUR."}, pay, {Text: "Paid again."}}}
	// The second run's first model call is held until approve waits: a
	// model slower than the user.
	release := make(chan struct{})
	var calls atomic.Int32
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/chat/completions" && calls.Add(1) == 3 {
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		llm.ServeHTTP(w, r)
	}))
	t.Cleanup(model.Close)
	modelURL := model.URL + "/v1"
	bin := build(t)
	env := append(os.Environ(), "TEMPORAL_ADDRESS="+srv.HostPort, "TEMPORAL_NAMESPACE="+srv.Namespace,
		"MINIME_MODEL_URL="+modelURL, "MINIME_MODEL=test-model")
	command := func(args ...string) string {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return string(out)
	}
	worker := func() *exec.Cmd {
		cmd := exec.Command(bin, "worker")
		cmd.Env = env
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		line, err := bufio.NewReader(stdout).ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, "worker ready\n", line)
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
		return cmd
	}

	w := worker()
	assert.Equal(t, "started pay-1\n", command("start", "pay-1", "Pay Ann 12.50 EUR"))
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(command("pending", "pay-1"), "pending ") {
		require.True(t, time.Now().Before(deadline), "the pay call never waited for approval")
		time.Sleep(200 * time.Millisecond) // polling a query: there is no push
	}
	require.NoError(t, w.Process.Kill())
	_ = w.Wait()
	worker()
	got := command("approve", "pay-1", "yes")
	assert.Contains(t, got, "pay {\n  \"to\": \"Ann\",\n  \"amount\": 12.5\n}\n", "the pending call is shown")
	assert.Contains(t, got, "stop: answer\nanswer: I paid Ann 12.50 EUR.\n")
	require.Len(t, llm.Requests(), 2, "the model was called once per turn, the restart notwithstanding")
	assert.Contains(t, string(llm.Requests()[1].Body), "paid 12.50 EUR to Ann")

	assert.Equal(t, "started pay-2\n", command("start", "pay-2", "Pay Ann 12.50 EUR again"))
	approve := exec.Command(bin, "approve", "pay-2", "yes")
	approve.Env = env
	approve.Stderr = os.Stderr
	stdout, err := approve.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, approve.Start())
	lines := bufio.NewReader(stdout)
	first, err := lines.ReadString('\n')
	if err != nil || !strings.HasPrefix(first, "waiting for run pay-2 to ask for an approval") {
		close(release)
		_ = approve.Wait()
		t.Fatalf("approve right after start did not wait for the call: %q, %v", first, err)
	}
	close(release) // the model answers now, with the pay call
	rest, err := io.ReadAll(lines)
	require.NoError(t, err)
	require.NoError(t, approve.Wait(), "%s%s", first, rest)
	assert.Contains(t, string(rest), "pending ", "approve showed the call it waited for")
	assert.Contains(t, string(rest), "stop: answer\nanswer: Paid again.\n")

	t.Run("no call pending yet", func(t *testing.T) {
		c, err := client.Dial(client.Options{HostPort: srv.HostPort, Namespace: srv.Namespace})
		require.NoError(t, err)
		defer c.Close()
		ctx := context.Background()
		// No worker serves this queue: the run never asks.
		_, err = c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "idle-1", TaskQueue: "nobody"}, temporal.WorkflowName,
			temporal.Input{Messages: []agent.Message{agent.UserMessage("hi")}})
		require.NoError(t, err)
		_, err = awaitPending(ctx, c, "idle-1", time.Second, io.Discard)
		require.ErrorContains(t, err, "run idle-1: no call waits for approval")
		require.NoError(t, c.TerminateWorkflow(ctx, "idle-1", "", "test over"))
	})
}

// TestNoServer: with no Temporal server at the address, the error names
// the address and says how to start a server.
func TestNoServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close()) // nothing listens there now
	cmd := exec.Command(build(t), "start", "x", "hello")
	cmd.Env = append(os.Environ(), "TEMPORAL_ADDRESS="+addr)
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "%s", out)
	assert.Contains(t, string(out), "durable: no Temporal server answers at "+addr)
	assert.Contains(t, string(out), "temporal server start-dev")
	assert.Contains(t, string(out), "TEMPORAL_ADDRESS")
}

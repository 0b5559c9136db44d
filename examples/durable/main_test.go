package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"git.rickub.com/bots-garden/mini-me/internal/llmtest"
	"git.rickub.com/bots-garden/mini-me/internal/temporaldev"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestExample runs the example's commands as a user would, against a
// real Temporal server and a scripted model: a worker, a run started, its
// pay call pending; the worker killed and another started; the approval
// given from the command line, and the answer.
func TestExample(t *testing.T) {
	srv, err := temporaldev.Start("../../agent/temporal/internal/devserver")
	require.NoError(t, err)
	t.Cleanup(srv.Stop)
	llm := &llmtest.Server{Turns: []llmtest.Turn{
		{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "pay", Arguments: `{"to":"Ann","amount":12.5}`}}},
		{Text: "I paid Ann 12.50 EUR."},
	}}
	modelURL := llm.Start()
	t.Cleanup(llm.Close)
	bin := filepath.Join(t.TempDir(), "example")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	env := append(os.Environ(), "TEMPORAL_ADDRESS="+srv.HostPort, "TEMPORAL_NAMESPACE="+srv.Namespace, "MODEL_URL="+modelURL)
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
}

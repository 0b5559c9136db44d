package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/examples/internal/demo"
	"git.rickub.com/bots-garden/mini-me/mcp"
)

// mainEnv makes the test binary a program that calls Main with the run
// its value names (TestMain).
const mainEnv = "HOST_TEST_MAIN"

// runs are the runs a test program can be made of.
var runs = map[string]Run{
	"echo": func(_ context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
		in, err := io.ReadAll(stdin)
		fmt.Fprintf(stdout, "args %q, stdin %q", args, in)
		return err
	},
	"fail": func(context.Context, []string, io.Reader, io.Writer) error {
		return errors.New("it broke")
	},
	// interrupt interrupts its own program and returns when Main has seen
	// the signal, with the error a run has then.
	"interrupt": func(ctx context.Context, _ []string, _ io.Reader, _ io.Writer) error {
		p, err := os.FindProcess(os.Getpid())
		if err != nil {
			return err
		}
		if err := p.Signal(os.Interrupt); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("stopped: %w", ctx.Err())
		case <-time.After(10 * time.Second):
			return errors.New("the interrupt did not end the context")
		}
	},
}

// runMain runs the test binary as a program whose main is
// Main("prog", runs[name]), and returns its stdout, its stderr and its
// exit status.
func runMain(t *testing.T, name, stdin string, args ...string) (stdout, stderr string, status int) {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, args...)
	// A race-enabled program sleeps a second before exiting, by default.
	cmd.Env = append(os.Environ(), mainEnv+"="+name, "GORACE=atexit_sleep_ms=0")
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		require.NoError(t, err)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}

func TestMainStatus(t *testing.T) {
	for _, tc := range []struct {
		name, run, stdin string
		args             []string
		stdout, stderr   string
		status           int
	}{
		{"arguments and input", "echo", "hello\n", []string{"two", "words"}, `args ["two" "words"], stdin "hello\n"`, "", 0},
		{"none", "echo", "", nil, `args [], stdin ""`, "", 0},
		{"an error", "fail", "", nil, "", "prog: it broke\n", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, status := runMain(t, tc.run, tc.stdin, tc.args...)
			assert.Equal(t, tc.status, status)
			assert.Equal(t, tc.stdout, stdout)
			assert.Equal(t, tc.stderr, stderr)
		})
	}
}

func TestQuestion(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "the default?"},
		{[]string{}, "the default?"},
		{[]string{"one question?"}, "one question?"},
		{[]string{"How", "many", "words?"}, "How many words?"},
	} {
		assert.Equal(t, tc.want, Question(tc.args, "the default?"), "%q", tc.args)
	}
}

func TestCloseTools(t *testing.T) {
	tools := discover(t, demo.Text())
	ctx := context.Background()
	_, err := tools.Call(ctx, "text_count", map[string]any{"text": "a"})
	require.NoError(t, err)
	CloseTools(tools)
	_, err = tools.Call(ctx, "text_count", map[string]any{"text": "a"})
	assert.ErrorIs(t, err, mcp.ErrClosed)
}

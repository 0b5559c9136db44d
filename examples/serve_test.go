package examples_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

// examples/serve serves the demo's servers over HTTP and prints a
// configuration for them on stdout: a host discovers their tools through
// it, in both eras, and Ctrl-C stops it with status 0.
func TestServe(t *testing.T) {
	cmd := exec.Command(filepath.Join(bin, "serve"), "-addr", "127.0.0.1:0")
	cmd.Env = environ(t)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})

	// The configuration is the first six lines of stdout.
	sc := bufio.NewScanner(stdout)
	var yaml strings.Builder
	for i := 0; i < 6 && sc.Scan(); i++ {
		yaml.WriteString(sc.Text() + "\n")
	}
	cfg, err := config.Parse([]byte(yaml.String()))
	require.NoError(t, err, "stdout:\n%s", yaml.String())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ts, err := toolset.Discover(ctx, cfg.Servers, nil)
	require.NoError(t, err)
	assert.Empty(t, ts.Warnings())
	assert.Len(t, ts.Tools(), 7)
	res, err := ts.Call(ctx, "text_count", map[string]string{"text": "one two three"})
	require.NoError(t, err)
	assert.Contains(t, res.Text(), "3 words")
	ts.Close()

	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	select {
	case err := <-exited:
		exited <- err // for the cleanup
		require.NoError(t, err, "stderr:\n%s", stderr.String())
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop on Ctrl-C")
	}
	assert.Contains(t, stderr.String(), "serving the demo's MCP servers at http://127.0.0.1:")
	assert.Contains(t, stderr.String(), "stopped")
}

// It refuses an address that is not a loopback one.
func TestServeLoopbackOnly(t *testing.T) {
	out, code := run(t, environ(t), "", "serve", "-addr", "0.0.0.0:0")
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "not a loopback address")
}

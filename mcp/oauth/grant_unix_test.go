//go:build unix

package oauth_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"git.rickub.com/bots-garden/mini-me/mcp/oauth"
)

// TestAssertionCommandBounded: a command that floods its output is
// refused, and one that outlives its context is stopped with it.
func TestAssertionCommandBounded(t *testing.T) {
	if _, err := oauth.AssertionCommand([]string{"sh", "-c", "head -c 200000 /dev/zero | tr '\\0' a"})(context.Background()); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("err %v, want the output refused as too large", err)
	}
	// The command says it started through a FIFO, then waits with a
	// child holding its output; cancelling must end the call.
	fifo := filepath.Join(t.TempDir(), "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFO:", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := oauth.AssertionCommand([]string{"sh", "-c", `echo up > "$0"; sleep 20 & sleep 20`, fifo})(ctx)
		done <- err
	}()
	if _, err := os.ReadFile(fifo); err != nil { // returns once the command wrote
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err == nil {
		t.Error("a cancelled command gave no error")
	}
}

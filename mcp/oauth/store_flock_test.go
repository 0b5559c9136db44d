//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package oauth_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"git.rickub.com/bots-garden/mini-me/mcp/oauth"
)

// TestFileStoreLockHolder is the other process of
// TestFileStoreLockAcrossProcesses: it holds the lock until its standard
// input closes. It does nothing in a normal run.
func TestFileStoreLockHolder(t *testing.T) {
	path := os.Getenv("MINIME_LOCK_HOLDER")
	if path == "" {
		return
	}
	unlock, err := (&oauth.FileStore{Path: path}).Lock(context.Background(), oauth.Key{})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("locked")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	unlock()
}

// TestFileStoreLockAcrossProcesses: while another process holds the lock
// of a FileStore's file, Lock waits (until its context ends); once that
// process releases it, Lock takes it.
func TestFileStoreLockAcrossProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.json")
	cmd := exec.Command(os.Args[0], "-test.run=^TestFileStoreLockHolder$")
	cmd.Env = append(os.Environ(), "MINIME_LOCK_HOLDER="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "locked\n" {
		t.Fatalf("holder said %q, %v", line, err)
	}
	store := &oauth.FileStore{Path: path}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if unlock, err := store.Lock(ctx, oauth.Key{}); !errors.Is(err, context.DeadlineExceeded) {
		if err == nil {
			unlock()
		}
		t.Fatalf("Lock while another process holds it: %v, want the context's deadline", err)
	}
	_ = stdin.Close() // the holder unlocks and exits
	unlock, err := store.Lock(context.Background(), oauth.Key{})
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	if err := cmd.Wait(); err != nil {
		t.Errorf("holder: %v", err)
	}
}

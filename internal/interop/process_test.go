//go:build unix

package interop

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Bounds of a subprocess's life.
const (
	// startTimeout bounds the wait for a server to listen.
	startTimeout = 30 * time.Second
	// stopGrace is how long a server has to exit after SIGTERM before
	// SIGKILL.
	stopGrace = 3 * time.Second
	// maxLogLines bounds the output kept per process, maxLineBytes one
	// line of it.
	maxLogLines  = 2000
	maxLineBytes = 64 << 10
)

// unavailable ends a test whose third-party server cannot run here: a
// failure when MINIME_INTEROP=1 (CI) asks for every interop test, a skip
// otherwise.
func unavailable(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("MINIME_INTEROP") == "1" {
		t.Fatalf("%s: MINIME_INTEROP=1 requires every interop server (run internal/interop/setup.sh, which needs node >= 20 and npm)", msg)
	}
	t.Skipf("%s (run internal/interop/setup.sh; MINIME_INTEROP=1 makes this a failure)", msg)
}

// npmInstallDir returns the folder setup.sh installs the pinned npm
// packages into: named after the lockfile's hash, as setup.sh names it.
func npmInstallDir() (string, error) {
	cache := os.Getenv("MINIME_INTEROP_CACHE")
	if cache == "" {
		base := os.Getenv("XDG_CACHE_HOME")
		if base == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", err
			}
			base = filepath.Join(home, ".cache")
		}
		cache = filepath.Join(base, "mini-me-interop")
	}
	lock, err := os.ReadFile(filepath.Join("testdata", "npm", "package-lock.json"))
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(lock)
	return filepath.Join(cache, "npm-"+hex.EncodeToString(sum[:])[:16]), nil
}

// process is a subprocess a test started, in its own process group.
type process struct {
	cmd    *exec.Cmd
	stdin  io.Closer
	out    *outputLog
	exited chan struct{} // closed once Wait returned
	err    error         // Wait's result, once exited is closed
}

// startProcess starts name with args in dir, with a minimal environment
// plus env, and stops it (its whole process group) when the test ends.
// The child is told to exit when its stdin closes, so it does not outlive
// a test binary that dies.
func startProcess(t *testing.T, dir string, env []string, name string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	// Only what node needs: the server under test sees none of our secrets.
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "MINIME_INTEROP_STDIN_EOF=1"}, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out := newOutputLog()
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = stopGrace
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatalf("stdin pipe: %v", err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	p := &process{cmd: cmd, stdin: stdin, out: out, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(p.stop)
	return p
}

// stop ends the process group: SIGTERM, then SIGKILL after stopGrace. It
// returns once the process is reaped.
func (p *process) stop() {
	_ = p.stdin.Close()
	p.signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return
	case <-time.After(stopGrace):
	}
	p.signal(syscall.SIGKILL)
	<-p.exited
}

// signal sends sig to the process group we created, unless the leader is
// already reaped (its id may then be reused by another process).
func (p *process) signal(sig syscall.Signal) {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, sig)
}

// waitLine returns the first output line that starts with prefix, waiting
// at most d; it fails early if the process exits.
func (p *process) waitLine(prefix string, d time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	line, err := p.out.waitFor(ctx, p.exited, func(l string) bool { return strings.HasPrefix(l, prefix) })
	if errors.Is(err, errStopped) {
		return "", fmt.Errorf("the process exited (%v) before writing %q", p.err, prefix)
	}
	if err != nil {
		return "", fmt.Errorf("no output line %q: %w", prefix, err)
	}
	return line, nil
}

// outputLog keeps the last maxLogLines lines a process wrote, and lets a
// test wait for one.
type outputLog struct {
	*feed[string]
	mu      sync.Mutex // serializes Write
	partial []byte
}

func newOutputLog() *outputLog { return &outputLog{feed: newFeed[string](maxLogLines)} }

func (l *outputLog) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, b...)
	var lines []string
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		lines = append(lines, string(l.partial[:i]))
		l.partial = l.partial[i+1:]
	}
	if len(l.partial) > maxLineBytes {
		lines = append(lines, string(l.partial))
		l.partial = nil
	}
	l.add(lines...)
	return len(b), nil
}

// String returns the output kept, for failure messages.
func (l *outputLog) String() string {
	return strings.Join(l.snapshot(), "\n")
}

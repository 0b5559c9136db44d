//go:build unix

package mcp_test

import (
	"context"
	"errors"
	"io"
	"net"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
)

// financeStream returns a StreamTransport whose every Dial starts the
// finance server with flags and hands back one end of a net.Pipe bridged
// to its stdin and stdout: the host's own stream, with a real server on
// the other side. Without deadlines, the stream hides SetWriteDeadline.
// dials counts the Dial calls.
func financeStream(t *testing.T, bin string, deadlines bool, flags ...string) (*mcp.StreamTransport, *atomic.Int32) {
	dials := &atomic.Int32{}
	var bridges sync.WaitGroup
	t.Cleanup(bridges.Wait) // before the Client's Close, so after it
	return &mcp.StreamTransport{Name: "finance", Dial: func(context.Context) (io.ReadWriteCloser, error) {
		dials.Add(1)
		ours, theirs := net.Pipe()
		cmd := exec.Command(bin, flags...)
		stdin, err1 := cmd.StdinPipe()
		stdout, err2 := cmd.StdoutPipe()
		if err := errors.Join(err1, err2); err != nil {
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		// A server that reads nothing more (-stall-stdin) is the
		// host's to stop; before the bridges are waited for.
		t.Cleanup(func() { _ = cmd.Process.Kill() })
		bridges.Add(2)
		go func() { // ends when ours is closed
			defer bridges.Done()
			_, _ = io.Copy(stdin, theirs)
			_ = stdin.Close()
		}()
		go func() { // ends when the server exits, which closes ours
			defer bridges.Done()
			_, _ = io.Copy(theirs, stdout)
			_ = cmd.Wait()
			_ = theirs.Close()
		}()
		if deadlines {
			return ours, nil
		}
		return struct{ io.ReadWriteCloser }{ours}, nil
	}}, dials
}

func TestStreamTransport(t *testing.T) {
	bin := mcptest.BuildFinance(t)
	for _, deadlines := range []bool{true, false} {
		name := map[bool]string{true: "net.Pipe", false: "no deadlines"}[deadlines]
		t.Run(name, func(t *testing.T) {
			t.Run("Eras", func(t *testing.T) { testStreamEras(t, bin, deadlines) })
			t.Run("Cancellation", func(t *testing.T) { testStreamCancel(t, bin, deadlines) })
		})
	}
	t.Run("CloseCutsBlockedWrite", func(t *testing.T) {
		for _, deadlines := range []bool{true, false} {
			testStreamCloseCutsBlockedWrite(t, bin, deadlines)
		}
	})
	t.Run("Oversized", func(t *testing.T) {
		tr, _ := financeStream(t, bin, true, "-era", "modern")
		c := stdioConnect(t, tr, &mcp.Options{MaxMessageSize: 4096})
		assert.Len(t, call(t, c, "big", map[string]int{"bytes": 1000}), 1000)
		_, err := c.CallTool(context.Background(), "big", map[string]int{"bytes": 10000})
		require.ErrorIs(t, err, mcp.ErrTooLarge)
		_, err = c.CallTool(context.Background(), "echo", map[string]string{"text": "x"})
		require.ErrorIs(t, err, mcp.ErrTooLarge, "the connection is broken")
	})
	t.Run("GarbageInsteadOfAnswers", func(t *testing.T) {
		tr, _ := financeStream(t, bin, true, "-era", "both", "-garbage-replies")
		tr.ProbeTimeout = 200 * time.Millisecond
		_, err := mcp.Connect(context.Background(), tr, &mcp.Options{ConnectTimeout: time.Second})
		require.ErrorIs(t, err, mcp.ErrProtocol)
		assert.Contains(t, err.Error(), `"ok: server/discover done"`)
	})
	t.Run("PeerCloses", func(t *testing.T) {
		tr, _ := financeStream(t, bin, true, "-era", "modern", "-crash-on", "echo")
		c := stdioConnect(t, tr, nil)
		_, err := c.CallTool(context.Background(), "echo", map[string]string{"text": "x"})
		var exit *mcp.ExitError
		require.ErrorAs(t, err, &exit)
		assert.Equal(t, "stream closed", exit.State)
		assert.ErrorIs(t, err, mcp.ErrStreamBroken)
	})
	t.Run("Redial", func(t *testing.T) {
		tr, dials := financeStream(t, bin, true, "-era", "modern", "-crash-on", "echo")
		tr.Restart = mcp.RestartPolicy{MaxRestarts: 1, Backoff: time.Millisecond}
		c := stdioConnect(t, tr, nil)
		_, err := c.CallTool(context.Background(), "echo", map[string]string{"text": "x"})
		require.ErrorIs(t, err, mcp.ErrStreamBroken, "the call in flight is not retried")
		assert.Equal(t, "perso, pro", call(t, c, "list_profiles", nil))
		assert.Equal(t, int32(2), dials.Load())
	})
	t.Run("BadTransport", func(t *testing.T) {
		_, err := mcp.Connect(context.Background(), &mcp.StreamTransport{}, nil)
		require.ErrorContains(t, err, "needs Dial")
		refused := errors.New("refused")
		_, err = mcp.Connect(context.Background(), &mcp.StreamTransport{Dial: func(context.Context) (io.ReadWriteCloser, error) {
			return nil, refused
		}}, nil)
		require.ErrorIs(t, err, refused)
		require.ErrorIs(t, err, mcp.ErrUnreachable)
		_, err = mcp.Connect(context.Background(), &mcp.StreamTransport{Dial: func(context.Context) (io.ReadWriteCloser, error) {
			return nil, nil
		}}, nil)
		require.ErrorIs(t, err, mcp.ErrUnreachable)
	})
}

func testStreamEras(t *testing.T, bin string, deadlines bool) {
	for _, tc := range []struct {
		flag    string
		era     mcp.Era
		version string
		dials   int32
	}{
		{"modern", mcp.EraModern, mcp.Version20260728, 1},
		{"legacy", mcp.EraLegacy, mcp.Version20251125, 1},
		// The stream closed on the probe: a new one is dialled and
		// initialized at once.
		{"legacy-exit-on-probe", mcp.EraLegacy, mcp.Version20251125, 2},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			tr, dials := financeStream(t, bin, deadlines, "-era", tc.flag)
			c := stdioConnect(t, tr, nil)
			assert.Equal(t, tc.era, c.Era())
			assert.Equal(t, tc.version, c.ProtocolVersion())
			assert.Equal(t, "perso, pro", call(t, c, "list_profiles", nil))
			assert.Equal(t, tc.dials, dials.Load())
			require.NoError(t, c.Close())
			_, err := c.CallTool(context.Background(), "echo", nil)
			require.ErrorIs(t, err, mcp.ErrClosed)
		})
	}
}

func testStreamCancel(t *testing.T, bin string, deadlines bool) {
	tr, _ := financeStream(t, bin, deadlines, "-era", "modern")
	c := stdioConnect(t, tr, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := c.CallTool(ctx, "slow", map[string]int{"ms": 60000})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	var h serverHistory
	require.Eventually(t, func() bool { h = history(t, c); return len(h.Cancelled) > 0 }, 5*time.Second, 10*time.Millisecond)
	assert.Equal(t, h.Slow, h.Cancelled, "notifications/cancelled names the slow call")
}

// TestShutdown shows Shutdown's ctx cutting a stubborn server's stop short:
// Close would wait 2 s after stdin and 2 s after SIGTERM.
func TestShutdown(t *testing.T) {
	bin := mcptest.BuildFinance(t)
	c, err := mcp.Connect(context.Background(), finance(bin, "-era", "modern", "-ignore-stdin-eof", "-ignore-sigterm"), nil)
	require.NoError(t, err)
	pid := serverPID(t, c).PID
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	require.NoError(t, c.Shutdown(ctx))
	assert.Less(t, time.Since(start), 2*time.Second, "killed when ctx ended, not after the graces")
	assert.True(t, reaped(pid), "process %d still exists", pid)
	require.NoError(t, c.Shutdown(ctx), "idempotent")
	require.NoError(t, c.Close())
	_, err = c.CallTool(context.Background(), "echo", nil)
	require.ErrorIs(t, err, mcp.ErrClosed)
}

// A restart that the calling request's context cuts short, in its backoff
// or while the new server is initialized, is not counted against
// MaxRestarts: the server did not fail, and the next call restarts it.
func TestRestartCutShortIsNotCounted(t *testing.T) {
	bin := mcptest.BuildFinance(t)
	// cutRestart crashes the server behind tr, has a call whose restart
	// ctx's end cuts short, then a call that must restart the server.
	cutRestart := func(t *testing.T, tr *mcp.StreamTransport, ctx context.Context) {
		c := stdioConnect(t, tr, nil)
		_, err := c.CallTool(context.Background(), "echo", map[string]string{"text": "x"})
		require.ErrorIs(t, err, mcp.ErrStreamBroken)
		_, err = c.CallTool(ctx, "list_profiles", nil)
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, "perso, pro", call(t, c, "list_profiles", nil), "restarted")
	}
	t.Run("backoff", func(t *testing.T) {
		tr, dials := financeStream(t, bin, true, "-era", "modern", "-crash-on", "echo")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var attempts []int
		tr.Restart = mcp.RestartPolicy{MaxRestarts: 1, Backoff: 50 * time.Millisecond, OnRestart: func(attempt int, _ error) {
			attempts = append(attempts, attempt)
			cancel() // the first call to restart gives up as the backoff begins
		}}
		cutRestart(t, tr, ctx)
		assert.Equal(t, []int{1, 1}, attempts)
		assert.Equal(t, int32(2), dials.Load())
	})
	t.Run("initialize", func(t *testing.T) {
		tr, dials := financeStream(t, bin, true, "-era", "legacy", "-crash-on", "echo")
		tr.Restart = mcp.RestartPolicy{MaxRestarts: 1, Backoff: time.Millisecond}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		dial := tr.Dial
		tr.Dial = func(dctx context.Context) (io.ReadWriteCloser, error) {
			if dials.Load() == 1 {
				cancel() // the first call to restart gives up as the new server starts
			}
			return dial(dctx)
		}
		cutRestart(t, tr, ctx)
		assert.Equal(t, int32(3), dials.Load())
	})
}

// Close ends at once a call bounded by its own deadline whose request
// waits on a stream that the server no longer reads, though the
// subscription's cancel notice, which Close sends first, must wait for
// that write.
func testStreamCloseCutsBlockedWrite(t *testing.T, bin string, deadlines bool) {
	tr, _ := financeStream(t, bin, deadlines, "-era", "modern", "-list-changed", "-stall-stdin")
	closeCutsBlockedWrite(t, tr, "net.(*pipe).write(")
}

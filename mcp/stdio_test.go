//go:build unix

package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

// TestStdio runs the stdio transport against internal/mcptest/finance, a
// stdio server built once here. The subtests run in parallel: several wait
// out shutdown bounds of seconds.
func TestStdio(t *testing.T) {
	bin := mcptest.BuildFinance(t)
	// Host variables the children must not see unless configured to.
	t.Setenv("MINIME_SECRET", "test-only-secret")
	t.Setenv("MINIME_DATA", "/srv/minime")
	for _, tc := range []struct {
		name string
		run  func(*testing.T, string)
	}{
		{"Eras", testStdioEras},
		{"StateAcrossCalls", testStdioState},
		{"CrashMidCall", testStdioCrash},
		{"Restart", testStdioRestart},
		{"Shutdown", testStdioShutdown},
		{"ProcessGroup", testStdioProcessGroup},
		{"StderrFlood", testStdioStderrFlood},
		{"GarbageOnStdout", testStdioGarbage},
		{"ExitImmediately", testStdioExitImmediately},
		{"MissingCommand", testStdioMissingCommand},
		{"ConcurrentCalls", testStdioConcurrent},
		{"Cancellation", testStdioCancellation},
		{"CancelledBeforeSent", testStdioCancelledBefore},
		{"FullPipe", testStdioFullPipe},
		{"CloseEndsCalls", testStdioCloseEndsCalls},
		{"CloseCutsBlockedWrite", testStdioCloseCutsBlockedWrite},
		{"Environment", testStdioEnv},
		{"ServerRequests", testStdioServerRequests},
		{"OversizedMessage", testStdioOversized},
		{"BadTransport", testStdioBadTransport},
		{"Closed", testStdioClosed},
		{"RestartAfterFailedInitialize", testStdioRestartFailedInit},
		{"BlockedHandler", testStdioBlockedHandler},
		{"ListChanged", testStdioListChanged},
		{"Resubscribe", testStdioResubscribe},
		{"SlowCallbacks", testStdioSlowCallbacks},
		{"ToolsetRefresh", testStdioToolsetRefresh},
		{"ResourceSubscription", testStdioResourceSubscription},
		{"SlowStart", testStdioSlowStart},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, bin)
		})
	}
}

// finance returns a transport for the finance server with flags.
func finance(bin string, flags ...string) *mcp.CommandTransport {
	return &mcp.CommandTransport{Command: bin, Args: flags}
}

func stdioConnect(t *testing.T, tr mcp.Transport, opts *mcp.Options) *mcp.Client {
	t.Helper()
	c, err := mcp.Connect(context.Background(), tr, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// call calls a tool that must succeed and returns its text.
func call(t *testing.T, c *mcp.Client, tool string, args any) string {
	t.Helper()
	res, err := c.CallTool(context.Background(), tool, args)
	require.NoError(t, err, tool)
	require.False(t, res.IsError, "%s: %s", tool, res.Text())
	return res.Text()
}

// refusalCode calls a tool that must refuse and returns the refusal's code.
func refusalCode(t *testing.T, c *mcp.Client, tool string, args any) string {
	t.Helper()
	res, err := c.CallTool(context.Background(), tool, args)
	require.NoError(t, err, tool)
	require.True(t, res.IsError, "%s: %s", tool, res.Text())
	var r struct{ Code string }
	require.NoError(t, json.Unmarshal([]byte(res.Text()), &r))
	return r.Code
}

type serverHistory struct {
	Methods   []string
	Cancelled []string
	Slow      []string
	Listening int // open subscriptions
}

func history(t *testing.T, c *mcp.Client) serverHistory {
	t.Helper()
	var h serverHistory
	require.NoError(t, json.Unmarshal([]byte(call(t, c, "history", nil)), &h))
	return h
}

type pids struct{ PID, PPID int }

func serverPID(t *testing.T, c *mcp.Client) pids {
	t.Helper()
	var p pids
	require.NoError(t, json.Unmarshal([]byte(call(t, c, "pid", nil)), &p))
	require.NotZero(t, p.PID)
	return p
}

// reaped reports whether our child pid no longer exists: we wait for our
// children, so not even a zombie may remain.
func reaped(pid int) bool { return syscall.Kill(pid, 0) != nil }

// exited reports whether a process (not our child) has exited: gone, or a
// zombie, which a container's init may never reap.
func exited(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && len(s) > i+2 && s[i+2] == 'Z'
}

func testStdioEras(t *testing.T, bin string) {
	for _, tc := range []struct {
		flag    string
		probe   time.Duration
		era     mcp.Era
		version string
		methods []string // what the serving process received, history included
	}{
		{"modern", 0, mcp.EraModern, mcp.Version20260728, []string{"server/discover", "tools/call", "tools/call"}},
		{"both", 0, mcp.EraModern, mcp.Version20260728, []string{"server/discover", "tools/call", "tools/call"}},
		{"legacy", 0, mcp.EraLegacy, mcp.Version20251125, []string{"server/discover", "initialize", "notifications/initialized", "tools/call", "tools/call"}},
		// Restarted after exiting on the probe: the new process is
		// initialized at once.
		{"legacy-exit-on-probe", 0, mcp.EraLegacy, mcp.Version20251125, []string{"initialize", "notifications/initialized", "tools/call", "tools/call"}},
		// Answering the probe with an error, then exiting: the same.
		{"legacy-answer-exit-on-probe", 0, mcp.EraLegacy, mcp.Version20251125, []string{"initialize", "notifications/initialized", "tools/call", "tools/call"}},
		// Silent on the probe: the timeout says legacy, and the late
		// answer (sent before the initialize result) is dropped.
		{"legacy-late-probe", 300 * time.Millisecond, mcp.EraLegacy, mcp.Version20251125, []string{"server/discover", "initialize", "notifications/initialized", "tools/call", "tools/call"}},
		// A probe refused with -32022 listing only legacy versions, or
		// with code 0: one initialize follows, nothing else (the server
		// refuses a second initialize).
		{"legacy-unsupported-probe", 0, mcp.EraLegacy, mcp.Version20251125, []string{"server/discover", "initialize", "notifications/initialized", "tools/call", "tools/call"}},
		{"legacy-code0-probe", 0, mcp.EraLegacy, mcp.Version20251125, []string{"server/discover", "initialize", "notifications/initialized", "tools/call", "tools/call"}},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			starts := filepath.Join(t.TempDir(), "starts")
			tr := finance(bin, "-era", tc.flag, "-starts", starts)
			tr.ProbeTimeout = tc.probe
			start := time.Now()
			c := stdioConnect(t, tr, nil)
			if tc.probe > 0 {
				assert.GreaterOrEqual(t, time.Since(start), tc.probe)
			}
			assert.Equal(t, tc.era, c.Era())
			assert.Equal(t, tc.version, c.ProtocolVersion())
			assert.Equal(t, "finance", c.ServerInfo().Name)
			assert.NotNil(t, c.Capabilities().Tools)
			assert.Equal(t, "perso, pro", call(t, c, "list_profiles", nil))
			assert.Equal(t, tc.methods, history(t, c).Methods)
			// One process per connection, but for a server that
			// exited on the probe: its restart is the second.
			want := "1"
			if strings.HasSuffix(tc.flag, "exit-on-probe") {
				want = "2"
			}
			n, err := os.ReadFile(starts)
			require.NoError(t, err)
			assert.Equal(t, want, string(n), "process starts")
		})
	}
}

func testStdioState(t *testing.T, bin string) {
	for _, era := range []string{"modern", "legacy"} {
		t.Run(era, func(t *testing.T) {
			c := stdioConnect(t, finance(bin, "-era", era), nil)
			ctx := context.Background()
			tools, err := c.ListTools(ctx)
			require.NoError(t, err)
			assert.Len(t, tools, 12)

			assert.Equal(t, "no_profile_selected", refusalCode(t, c, "get_summary", nil))
			assert.Equal(t, "profile_not_allowed", refusalCode(t, c, "select_profile", map[string]string{"profile": "archive"}))
			assert.Equal(t, "selected perso", call(t, c, "select_profile", map[string]string{"profile": "perso"}))
			assert.Equal(t, "profile perso: 3 transactions", call(t, c, "get_summary", nil))
			assert.Equal(t, "t3 -> dining", call(t, c, "recategorize_transaction", map[string]string{"id": "t3", "category": "dining"}))
			var list []map[string]string
			require.NoError(t, json.Unmarshal([]byte(call(t, c, "list_transactions", nil)), &list))
			require.Len(t, list, 3)
			assert.Equal(t, "dining", list[2]["category"])
			assert.Equal(t, "transaction_not_found", refusalCode(t, c, "recategorize_transaction", map[string]string{"id": "p1"}))

			// Indented raw arguments still travel as one line.
			assert.Equal(t, "selected pro", call(t, c, "select_profile", json.RawMessage("{\n  \"profile\": \"pro\"\n}")))
			assert.Equal(t, "profile pro: 1 transactions", call(t, c, "get_summary", nil))

			prompts, err := c.ListPrompts(ctx)
			require.NoError(t, err)
			require.Len(t, prompts, 2)
			assert.Equal(t, "monthly_review", prompts[0].Name)
			p, err := c.GetPrompt(ctx, "monthly_review", map[string]string{"month": "2026-10"})
			require.NoError(t, err)
			require.Len(t, p.Messages, 1)
			assert.Equal(t, "Review my spending for 2026-10.", p.Messages[0].Content.Text)
		})
	}
}

func testStdioCrash(t *testing.T, bin string) {
	c := stdioConnect(t, finance(bin, "-era", "modern", "-crash-on", "get_summary"), nil)
	pid := serverPID(t, c).PID
	slow := make(chan error, 1)
	go func() {
		_, err := c.CallTool(context.Background(), "slow", map[string]int{"ms": 60000})
		slow <- err
	}()
	require.Eventually(t, func() bool { return len(history(t, c).Slow) == 1 }, 5*time.Second, 10*time.Millisecond)

	start := time.Now()
	_, err := c.CallTool(context.Background(), "get_summary", nil)
	var exit *mcp.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, "finance", exit.Server)
	assert.Equal(t, bin, exit.Command)
	assert.Equal(t, 3, exit.Code)
	assert.Equal(t, "exit status 3", exit.State)
	assert.Contains(t, exit.Stderr, "finance: fatal: database disk image is malformed")
	assert.Contains(t, err.Error(), bin)
	assert.Contains(t, err.Error(), "database disk image is malformed")

	// The call in flight fails at once, with the same cause.
	select {
	case err := <-slow:
		require.ErrorAs(t, err, &exit)
		assert.Less(t, time.Since(start), 10*time.Second, "failed with the server, not at the end of its 60 s")
	case <-time.After(15 * time.Second):
		t.Fatal("the call in flight did not fail when the server died")
	}
	// No restart policy: the next call fails with the same error.
	_, err = c.CallTool(context.Background(), "list_profiles", nil)
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 3, exit.Code)
	assert.True(t, reaped(pid))
	assert.NoError(t, c.Close())
}

func testStdioRestart(t *testing.T, bin string) {
	for _, tc := range []struct {
		era     string
		methods []string // of the restarted process: era cached, no probe
	}{
		{"modern", []string{"tools/call"}},
		{"legacy", []string{"initialize", "notifications/initialized", "tools/call"}},
	} {
		t.Run(tc.era, func(t *testing.T) {
			var mu sync.Mutex
			var restarts []int
			var causes []error
			tr := finance(bin, "-era", tc.era, "-crash-on", "get_summary")
			tr.Restart = mcp.RestartPolicy{MaxRestarts: 1, Backoff: 20 * time.Millisecond, OnRestart: func(n int, cause error) {
				mu.Lock()
				defer mu.Unlock()
				restarts, causes = append(restarts, n), append(causes, cause)
			}}
			c := stdioConnect(t, tr, nil)
			first := serverPID(t, c).PID
			call(t, c, "select_profile", map[string]string{"profile": "perso"})

			_, err := c.CallTool(context.Background(), "get_summary", nil)
			var exit *mcp.ExitError
			require.ErrorAs(t, err, &exit)
			assert.True(t, reaped(first))

			// The next calls, concurrent, share one new process, in the era
			// found at Connect, which lost the selected profile.
			var wg sync.WaitGroup
			for i := range 10 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					res, err := c.CallTool(context.Background(), "echo", map[string]string{"text": fmt.Sprint(i)})
					if assert.NoError(t, err) {
						assert.False(t, res.IsError)
					}
				}()
			}
			wg.Wait()
			methods := history(t, c).Methods
			require.Len(t, methods, len(tc.methods)+10)
			assert.Equal(t, tc.methods[:len(tc.methods)-1], methods[:len(tc.methods)-1])
			second := serverPID(t, c).PID
			assert.NotEqual(t, first, second)
			assert.Equal(t, "no_profile_selected", refusalCode(t, c, "list_transactions", nil))
			assert.Equal(t, tc.era == "modern", c.Era() == mcp.EraModern)
			mu.Lock()
			assert.Equal(t, []int{1}, restarts)
			require.Len(t, causes, 1)
			assert.ErrorAs(t, causes[0], &exit)
			mu.Unlock()

			// The policy allows one restart only.
			_, err = c.CallTool(context.Background(), "get_summary", nil)
			require.ErrorAs(t, err, &exit)
			_, err = c.CallTool(context.Background(), "list_profiles", nil)
			require.ErrorAs(t, err, &exit)
			assert.True(t, reaped(second))
			mu.Lock()
			assert.Len(t, restarts, 1)
			mu.Unlock()
		})
	}
}

// testStdioShutdown measures the time from Close to the process gone (Close
// returns once it is reaped) for a cooperative child, one that ignores
// stdin EOF (SIGTERM) and one that also ignores SIGTERM (SIGKILL). The
// times are logged; the assertions only check the bounds.
func testStdioShutdown(t *testing.T, bin string) {
	for _, tc := range []struct {
		name     string
		flags    []string
		min, max time.Duration
	}{
		// Each max is short of the next step of the escalation (SIGTERM
		// at 2 s, SIGKILL at 4 s), with room for a loaded machine.
		{"cooperative", nil, 0, 1800 * time.Millisecond},
		{"ignores-eof", []string{"-ignore-stdin-eof"}, 2 * time.Second, 3800 * time.Millisecond},
		{"ignores-eof-and-sigterm", []string{"-ignore-stdin-eof", "-ignore-sigterm"}, 4 * time.Second, 5500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := mcp.Connect(context.Background(), finance(bin, append([]string{"-era", "modern"}, tc.flags...)...), nil)
			require.NoError(t, err)
			pid := serverPID(t, c).PID
			start := time.Now()
			require.NoError(t, c.Close())
			took := time.Since(start)
			t.Logf("%s: Close to process gone: %v", tc.name, took.Round(10*time.Microsecond))
			assert.True(t, reaped(pid), "process %d still exists", pid)
			assert.GreaterOrEqual(t, took, tc.min)
			assert.Less(t, took, tc.max)
		})
	}
}

// testStdioProcessGroup runs the server behind a shell that stays its
// parent, as npx does: stopping the group leaves no grandchild.
func testStdioProcessGroup(t *testing.T, bin string) {
	// fd 3 carries stdin past the shell's /dev/null for background jobs.
	cmd := exec.Command("sh", "-c", `exec 3<&0; "$0" "$@" <&3 3<&- & wait`, bin, "-era", "modern", "-ignore-stdin-eof")
	c, err := mcp.Connect(context.Background(), &mcp.CommandTransport{Name: "wrapped", Cmd: cmd}, nil)
	require.NoError(t, err)
	p := serverPID(t, c)
	require.NotEqual(t, os.Getpid(), p.PPID, "the server should be the shell's child")
	start := time.Now()
	require.NoError(t, c.Close())
	t.Logf("shell wrapper: Close to group gone: %v", time.Since(start).Round(10*time.Microsecond))
	assert.True(t, reaped(p.PPID), "shell %d still exists", p.PPID)
	assert.True(t, exited(p.PID), "grandchild %d still running", p.PID)
	assert.Nil(t, cmd.Process, "the host's Cmd is a template, never started")
}

func testStdioStderrFlood(t *testing.T, bin string) {
	logs := &logRecorder{}
	c, err := mcp.Connect(context.Background(), finance(bin, "-era", "modern", "-flood-stderr"), &mcp.Options{Logger: slog.New(logs)})
	require.NoError(t, err)
	for i := range 5 {
		assert.Equal(t, fmt.Sprint(i), call(t, c, "echo", map[string]string{"text": fmt.Sprint(i)}))
	}
	require.NoError(t, c.Close())
	// 2 MiB before serving and 256 KiB before each of the 6 answers
	// (discover, 5 echoes), in lines of 101 bytes: every line reaches the
	// log, with the server's name.
	const line = 101
	want := ceilDiv(2<<20, line) + 6*ceilDiv(256<<10, line)
	assert.Equal(t, want, logs.count(func(r logRecord) bool {
		return r.msg == "mcp: server stderr" && r.attrs["server"] == "finance" && strings.HasPrefix(r.attrs["line"], "finance: debug: noise")
	}))
	assert.Equal(t, 5, logs.count(func(r logRecord) bool {
		return r.msg == "mcp: server stderr" && r.attrs["line"] == "finance: tools/call"
	}))
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

func testStdioGarbage(t *testing.T, bin string) {
	t.Run("banner tolerated", func(t *testing.T) {
		logs := &logRecorder{}
		c := stdioConnect(t, finance(bin, "-era", "modern", "-garbage-stdout", "3"), &mcp.Options{Logger: slog.New(logs)})
		assert.Equal(t, "perso, pro", call(t, c, "list_profiles", nil))
		warned := logs.count(func(r logRecord) bool { return r.level == slog.LevelWarn && strings.Contains(r.msg, "not JSON-RPC") })
		assert.Equal(t, 1, warned, "reported once")
		assert.Equal(t, 2, logs.count(func(r logRecord) bool { return r.level == slog.LevelDebug && strings.Contains(r.msg, "not JSON-RPC") }))
	})
	t.Run("batch after spaces", func(t *testing.T) {
		logs := &logRecorder{}
		c := stdioConnect(t, finance(bin, "-era", "modern", "-fault", "batch"), &mcp.Options{Logger: slog.New(logs)})
		assert.JSONEq(t, `{"text":"hi"}`, call(t, c, "echo", map[string]string{"text": "hi"}))
		assert.Zero(t, logs.count(func(r logRecord) bool { return strings.Contains(r.msg, "not JSON-RPC") }))
	})
	t.Run("malformed response", func(t *testing.T) {
		// A whole line with a bad literal is routed to its call, whose
		// decoding fails at once, not at the call's deadline.
		c := stdioConnect(t, finance(bin, "-era", "modern", "-fault", "bad-value"), nil)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err := c.CallTool(ctx, "echo", map[string]string{"text": "hi"})
		require.ErrorIs(t, err, mcp.ErrProtocol)
		require.NotErrorIs(t, err, context.DeadlineExceeded)
		assert.Contains(t, err.Error(), "malformed response")
		assert.Equal(t, "perso, pro", call(t, c, "list_profiles", nil), "the connection still works")
	})
	t.Run("only garbage", func(t *testing.T) {
		tr := finance(bin, "-era", "modern", "-garbage-stdout", "50")
		tr.ProbeTimeout = 10 * time.Second
		start := time.Now()
		_, err := mcp.Connect(context.Background(), tr, nil)
		require.ErrorIs(t, err, mcp.ErrProtocol)
		assert.Contains(t, err.Error(), "finance 1.4.2 starting (banner line 1)")
		assert.Less(t, time.Since(start), 5*time.Second, "fails on the garbage, not on a timeout")
	})
	t.Run("garbage instead of answers", func(t *testing.T) {
		tr := finance(bin, "-era", "both", "-garbage-replies")
		tr.ProbeTimeout = 200 * time.Millisecond
		_, err := mcp.Connect(context.Background(), tr, &mcp.Options{ConnectTimeout: time.Second})
		require.ErrorIs(t, err, mcp.ErrProtocol)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Contains(t, err.Error(), `"ok: server/discover done"`)
	})
}

func testStdioExitImmediately(t *testing.T, bin string) {
	start := time.Now()
	_, err := mcp.Connect(context.Background(), finance(bin, "-exit-immediately"), nil)
	var exit *mcp.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 2, exit.Code)
	assert.Contains(t, exit.Stderr, "cannot open database ledger.db")
	assert.Contains(t, err.Error(), bin)
	assert.Less(t, time.Since(start), 3*time.Second)
}

func testStdioMissingCommand(t *testing.T, bin string) {
	for _, tc := range []struct {
		command string
		is      error
	}{
		{filepath.Join(filepath.Dir(bin), "no-such-dir", "finance"), fs.ErrNotExist},
		{"mini-me-no-such-server", exec.ErrNotFound},
	} {
		_, err := mcp.Connect(context.Background(), &mcp.CommandTransport{Command: tc.command}, nil)
		require.ErrorIs(t, err, tc.is)
		assert.Contains(t, err.Error(), tc.command)
	}
}

func testStdioConcurrent(t *testing.T, bin string) {
	c := stdioConnect(t, finance(bin, "-era", "modern"), nil)
	const n = 100
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			want := fmt.Sprintf("call %d", i)
			res, err := c.CallTool(context.Background(), "echo", map[string]string{"text": want})
			switch {
			case err != nil:
				errs <- err
			case res.Text() != want:
				errs <- fmt.Errorf("got %q, want %q", res.Text(), want)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	assert.Len(t, history(t, c).Methods, n+2) // discover, n calls, history
}

func testStdioCancellation(t *testing.T, bin string) {
	for _, era := range []string{"modern", "legacy"} {
		t.Run(era, func(t *testing.T) {
			c := stdioConnect(t, finance(bin, "-era", era), nil)
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err := c.CallTool(ctx, "slow", map[string]int{"ms": 60000})
			require.ErrorIs(t, err, context.DeadlineExceeded)
			assert.Less(t, time.Since(start), 10*time.Second, "ended at the 300 ms deadline, not with the 60 s call")
			var h serverHistory
			require.Eventually(t, func() bool { h = history(t, c); return len(h.Cancelled) > 0 }, 5*time.Second, 10*time.Millisecond)
			require.Len(t, h.Slow, 1)
			assert.Equal(t, h.Slow, h.Cancelled, "notifications/cancelled names the slow call")
			// The connection is still good.
			assert.Equal(t, "ok", call(t, c, "echo", map[string]string{"text": "ok"}))
		})
	}
}

// A call whose context ended before its request was written is not sent:
// the server never sees it.
func testStdioCancelledBefore(t *testing.T, bin string) {
	c := stdioConnect(t, finance(bin, "-era", "modern"), nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 20 {
		_, err := c.CallTool(ctx, "echo", map[string]string{"text": "never"})
		require.ErrorIs(t, err, context.Canceled)
	}
	h := history(t, c)
	calls := 0
	for _, m := range h.Methods {
		if m == "tools/call" {
			calls++
		}
	}
	assert.Equal(t, 1, calls, "only the history call reached the server: %v", h.Methods)
}

// A request to a server that no longer reads its stdin fills the pipe: the
// write waits, the call's context cuts it, and the connection, whose
// framing a cut line lost, is broken for the next calls. The deadline
// leaves the write time to begin on a loaded machine (a call whose context
// ends before its write begins is not sent, and breaks nothing), and the
// second call has one of its own, so a failure is not a 300 s hang.
func testStdioFullPipe(t *testing.T, bin string) {
	c := stdioConnect(t, finance(bin, "-era", "modern", "-stall-stdin"), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	_, err := c.CallTool(ctx, "echo", map[string]string{"text": strings.Repeat("x", 1<<20)})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 10*time.Second, "the write was cut at the deadline")
	next, cancelNext := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancelNext()
	_, err = c.CallTool(next, "echo", map[string]string{"text": "x"})
	require.ErrorIs(t, err, mcp.ErrStreamBroken)
}

// Close ends the calls in flight at once with ErrClosed, a call bounded by
// its own deadline (which gets no context of the Client's: stopping the
// process fails it) as one that has none, in both eras.
func testStdioCloseEndsCalls(t *testing.T, bin string) {
	for _, era := range []string{"modern", "legacy"} {
		t.Run(era, func(t *testing.T) {
			c, err := mcp.Connect(context.Background(), finance(bin, "-era", era), nil)
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			errs := make(chan error, 2)
			for _, ctx := range []context.Context{ctx, context.Background()} {
				go func() {
					_, err := c.CallTool(ctx, "slow", map[string]int{"ms": 60000})
					errs <- err
				}()
			}
			// Both calls are in flight once the server has seen them.
			require.Eventually(t, func() bool { return len(history(t, c).Slow) == 2 }, 10*time.Second, 10*time.Millisecond)
			start := time.Now()
			require.NoError(t, c.Close())
			for range 2 {
				assert.ErrorIs(t, <-errs, mcp.ErrClosed)
			}
			assert.Less(t, time.Since(start), 10*time.Second, "ended by Close, not by the 60 s calls")
		})
	}
}

// Close ends at once a call bounded by its own deadline whose request
// waits on a full pipe, though the subscription's cancel notice, which
// Close sends first, must wait for that write.
func testStdioCloseCutsBlockedWrite(t *testing.T, bin string) {
	closeCutsBlockedWrite(t, finance(bin, "-era", "modern", "-list-changed", "-stall-stdin"), "waitWrite")
}

// closeCutsBlockedWrite checks that Close ends at once a call bounded by
// its own deadline whose request waits in the function wait, the server
// of tr reading nothing after the probe.
func closeCutsBlockedWrite(t *testing.T, tr mcp.Transport, wait string) {
	c, err := mcp.Connect(context.Background(), tr, &mcp.Options{OnToolsChanged: func() {}})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	errs := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctx, "echo", map[string]string{"text": strings.Repeat("x", 1<<20)})
		errs <- err
	}()
	require.Eventually(t, func() bool { return blockedWrites("closeCutsBlockedWrite", wait) == 1 },
		10*time.Second, 10*time.Millisecond)
	start := time.Now()
	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	assert.ErrorIs(t, <-errs, mcp.ErrClosed)
	assert.Less(t, time.Since(start), time.Second, "the write waited for the cancel notice's timeout")
	<-closed
}

// blockedWrites counts the goroutines started by the test function fn
// whose write to a stdio server's stdin waits in the function wait (for
// room in the pipe).
func blockedWrites(fn, wait string) int {
	buf := make([]byte, 1<<20)
	for n := runtime.Stack(buf, true); n == len(buf); n = runtime.Stack(buf, true) {
		buf = make([]byte, 2*len(buf))
	}
	n := 0
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte("mcp.(*proc).writeLine(")) && bytes.Contains(g, []byte(wait)) &&
			bytes.Contains(g, []byte("created by git.rickub.com/bots-garden/mini-me/mcp_test."+fn)) {
			n++
		}
	}
	return n
}

func testStdioEnv(t *testing.T, bin string) {
	names := map[string][]string{"names": {"MINIME_SECRET", "MINIME_DB", "PRICE", "ONLY", "PATH"}}
	env := func(t *testing.T, tr *mcp.CommandTransport) map[string]*string {
		c := stdioConnect(t, tr, nil)
		var vars map[string]*string
		require.NoError(t, json.Unmarshal([]byte(call(t, c, "env", names)), &vars))
		return vars
	}
	host := os.Getenv("PATH")
	t.Run("config env", func(t *testing.T) {
		tr := finance(bin, "-era", "modern")
		tr.Env = map[string]string{"MINIME_DB": "${MINIME_DATA}/ledger.db", "PRICE": "$$5"}
		vars := env(t, tr)
		assert.Nil(t, vars["MINIME_SECRET"], "a host secret leaked")
		require.NotNil(t, vars["MINIME_DB"])
		assert.Equal(t, "/srv/minime/ledger.db", *vars["MINIME_DB"])
		require.NotNil(t, vars["PRICE"])
		assert.Equal(t, "$5", *vars["PRICE"])
		require.NotNil(t, vars["PATH"])
		assert.Equal(t, host, *vars["PATH"])
	})
	t.Run("secret passed on purpose", func(t *testing.T) {
		tr := finance(bin, "-era", "modern")
		tr.Env = map[string]string{"MINIME_SECRET": "$MINIME_SECRET"}
		vars := env(t, tr)
		require.NotNil(t, vars["MINIME_SECRET"])
		assert.True(t, *vars["MINIME_SECRET"] == os.Getenv("MINIME_SECRET"), "expanded from the host")
	})
	t.Run("host Cmd without Env", func(t *testing.T) {
		vars := env(t, &mcp.CommandTransport{Cmd: exec.Command(bin, "-era", "modern")})
		assert.Nil(t, vars["MINIME_SECRET"], "a host secret leaked")
		require.NotNil(t, vars["PATH"])
	})
	t.Run("host Cmd with Env", func(t *testing.T) {
		cmd := exec.Command(bin, "-era", "modern")
		cmd.Env = []string{"ONLY=1"}
		vars := env(t, &mcp.CommandTransport{Cmd: cmd})
		require.NotNil(t, vars["ONLY"])
		assert.Equal(t, "1", *vars["ONLY"])
		assert.Nil(t, vars["PATH"], "the host's Env is used as is")
	})
	t.Run("unset reference", func(t *testing.T) {
		tr := finance(bin)
		tr.Env = map[string]string{"TOKEN": "${MINIME_UNSET_VARIABLE}"}
		_, err := mcp.Connect(context.Background(), tr, nil)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "TOKEN")
		assert.Contains(t, err.Error(), "MINIME_UNSET_VARIABLE")
	})
}

func testStdioServerRequests(t *testing.T, bin string) {
	c := stdioConnect(t, finance(bin, "-era", "legacy"), nil)
	for method, want := range map[string]string{
		"ping":                   `{"result":{}}`,
		"sampling/createMessage": fmt.Sprintf(`{"error":%d}`, mcp.CodeMethodNotFound),
		"roots/list":             fmt.Sprintf(`{"error":%d}`, mcp.CodeMethodNotFound),
	} {
		assert.JSONEq(t, want, call(t, c, "ask_client", map[string]string{"method": method}), method)
	}
	c = stdioConnect(t, finance(bin, "-era", "legacy"), &mcp.Options{ServerName: "fin", Sample: func(_ context.Context, req *mcp.SampleRequest) (*mcp.SampleResult, error) {
		return &mcp.SampleResult{Content: mcp.SamplingContents{{Type: "text", Text: req.Server + " " + req.Messages[0].Content[0].Text}}, Model: "m"}, nil
	}})
	params := json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":3}`)
	assert.JSONEq(t, `{"result":{"role":"assistant","content":{"type":"text","text":"fin hi"},"model":"m"}}`,
		call(t, c, "ask_client", map[string]any{"method": "sampling/createMessage", "params": params}))
}

func testStdioOversized(t *testing.T, bin string) {
	c := stdioConnect(t, finance(bin, "-era", "modern"), &mcp.Options{MaxMessageSize: 4096})
	pid := serverPID(t, c).PID
	assert.Len(t, call(t, c, "big", map[string]int{"bytes": 1000}), 1000)
	_, err := c.CallTool(context.Background(), "big", map[string]int{"bytes": 10000})
	require.ErrorIs(t, err, mcp.ErrTooLarge)
	_, err = c.CallTool(context.Background(), "echo", map[string]string{"text": "x"})
	require.ErrorIs(t, err, mcp.ErrTooLarge, "the connection is broken")
	require.NoError(t, c.Close())
	assert.True(t, reaped(pid))
}

func testStdioBadTransport(t *testing.T, bin string) {
	withStdout := exec.Command(bin)
	withStdout.Stdout = os.Stdout
	for name, tr := range map[string]*mcp.CommandTransport{
		"nothing":          {},
		"cmd and command":  {Cmd: exec.Command(bin), Command: bin},
		"cmd with stdout":  {Cmd: withStdout},
		"negative restart": {Command: bin, Restart: mcp.RestartPolicy{MaxRestarts: -1}},
	} {
		_, err := mcp.Connect(context.Background(), tr, nil)
		assert.Error(t, err, name)
	}
	assert.Nil(t, withStdout.Process)
}

func testStdioClosed(t *testing.T, bin string) {
	c, err := mcp.Connect(context.Background(), finance(bin, "-era", "legacy"), nil)
	require.NoError(t, err)
	require.NoError(t, c.Close())
	require.NoError(t, c.Close())
	_, err = c.CallTool(context.Background(), "echo", nil)
	require.ErrorIs(t, err, mcp.ErrClosed)
}

// logRecorder is a slog handler that keeps every record.
type logRecorder struct {
	mu      sync.Mutex
	records []logRecord
	attrs   []slog.Attr
	root    *logRecorder
}

type logRecord struct {
	level slog.Level
	msg   string
	attrs map[string]string
}

func (h *logRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (h *logRecorder) Handle(_ context.Context, r slog.Record) error {
	rec := logRecord{level: r.Level, msg: r.Message, attrs: map[string]string{}}
	for _, a := range h.attrs {
		rec.attrs[a.Key] = a.Value.String()
	}
	r.Attrs(func(a slog.Attr) bool {
		rec.attrs[a.Key] = a.Value.String()
		return true
	})
	root := h.rootOf()
	root.mu.Lock()
	root.records = append(root.records, rec)
	root.mu.Unlock()
	return nil
}

func (h *logRecorder) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &logRecorder{root: h.rootOf(), attrs: append(append([]slog.Attr(nil), h.attrs...), attrs...)}
}

func (h *logRecorder) WithGroup(string) slog.Handler { return h }

func (h *logRecorder) rootOf() *logRecorder {
	if h.root != nil {
		return h.root
	}
	return h
}

func (h *logRecorder) count(match func(logRecord) bool) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, r := range h.records {
		if match(r) {
			n++
		}
	}
	return n
}

// testStdioRestartFailedInitialize: a restarted legacy server that dies
// during initialize leaves the next restart to initialize again.
func testStdioRestartFailedInit(t *testing.T, bin string) {
	starts := filepath.Join(t.TempDir(), "starts")
	tr := finance(bin, "-era", "legacy", "-crash-on", "get_summary", "-starts", starts, "-exit-on-initialize", "2")
	tr.Restart = mcp.RestartPolicy{MaxRestarts: 5, Backoff: 10 * time.Millisecond}
	c := stdioConnect(t, tr, nil)
	ctx := context.Background()
	var exit *mcp.ExitError
	_, err := c.CallTool(ctx, "get_summary", nil)
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 3, exit.Code)

	_, err = c.CallTool(ctx, "echo", map[string]string{"text": "x"})
	require.ErrorAs(t, err, &exit, "the second start dies during initialize")
	assert.Equal(t, 4, exit.Code)
	assert.Contains(t, err.Error(), "initialize")

	assert.Equal(t, []string{"initialize", "notifications/initialized", "tools/call"}, history(t, c).Methods,
		"the third start is initialized before any call")
	n, err := os.ReadFile(starts)
	require.NoError(t, err)
	assert.Equal(t, "3", string(n))
	assert.Equal(t, mcp.EraLegacy, c.Era())
}

// testStdioBlockedHandler: an Elicit handler that never returns (a prompt
// that ignores its context) holds up neither a restart nor Close beyond
// its bound.
func testStdioBlockedHandler(t *testing.T, bin string) {
	blocking := func() (*mcp.Options, chan struct{}, chan struct{}) {
		block, entered := make(chan struct{}), make(chan struct{}, 1)
		return &mcp.Options{Elicit: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			entered <- struct{}{}
			<-block
			return &mcp.ElicitResult{Action: "cancel"}, nil
		}}, block, entered
	}
	ask := func(c *mcp.Client, entered chan struct{}) chan error {
		asked := make(chan error, 1)
		go func() {
			_, err := c.CallTool(context.Background(), "ask_client", map[string]string{"method": "elicitation/create"})
			asked <- err
		}()
		select {
		case <-entered:
		case <-time.After(5 * time.Second):
			t.Fatal("the server's elicitation/create did not reach the handler")
		}
		return asked
	}
	t.Run("restart", func(t *testing.T) {
		opts, block, entered := blocking()
		tr := finance(bin, "-era", "legacy", "-crash-on", "get_summary")
		tr.Restart = mcp.RestartPolicy{MaxRestarts: 1, Backoff: 10 * time.Millisecond}
		c := stdioConnect(t, tr, opts)
		defer close(block) // before the cleanup's Close
		asked := ask(c, entered)
		_, err := c.CallTool(context.Background(), "get_summary", nil)
		var exit *mcp.ExitError
		require.ErrorAs(t, err, &exit)
		require.ErrorAs(t, <-asked, &exit)

		res := make(chan error, 1)
		start := time.Now()
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_, err := c.CallTool(ctx, "echo", map[string]string{"text": "x"})
			res <- err
		}()
		select {
		case err := <-res:
			require.NoError(t, err)
			// Short of closeTimeout (5 s), the wait of a restart that
			// waited for the dead process's handler as Close does.
			assert.Less(t, time.Since(start), 4*time.Second)
		case <-time.After(10 * time.Second):
			t.Fatal("the restart waits for the dead process's handler")
		}
	})
	t.Run("close", func(t *testing.T) {
		opts, block, entered := blocking()
		defer close(block)
		c, err := mcp.Connect(context.Background(), finance(bin, "-era", "legacy"), opts)
		require.NoError(t, err)
		pid := serverPID(t, c).PID
		asked := ask(c, entered)
		start := time.Now()
		closed := make(chan error, 1)
		go func() { closed <- c.Close() }()
		select {
		case err := <-closed:
			took := time.Since(start)
			t.Logf("Close with a handler that never returns: %v", took.Round(time.Millisecond))
			assert.NoError(t, err)
			assert.Less(t, took, 6500*time.Millisecond, "the close bound is 5 s")
		case <-time.After(15 * time.Second):
			t.Fatal("Close waits for a handler that never returns")
		}
		assert.True(t, reaped(pid))
		require.ErrorIs(t, <-asked, mcp.ErrClosed)
	})
}

// testStdioListChanged: the server says its tools changed (modern: on the
// subscription the client opened, legacy: as is), and OnToolsChanged,
// calling the client back, lists them again without a deadlock.
func testStdioListChanged(t *testing.T, bin string) {
	for _, tc := range []struct {
		era           string
		subscriptions int
	}{
		{"modern", 1},
		{"legacy", 0},
	} {
		t.Run(tc.era, func(t *testing.T) {
			var client atomic.Pointer[mcp.Client]
			lists := make(chan []string, 1)
			logs := &logRecorder{}
			c, err := mcp.Connect(context.Background(), finance(bin, "-era", tc.era, "-list-changed"), &mcp.Options{
				Logger: slog.New(logs),
				OnToolsChanged: func() {
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					defer cancel()
					tools, err := client.Load().ListTools(ctx)
					names := []string{fmt.Sprint(err)}
					for _, tool := range tools {
						names = append(names, tool.Name)
					}
					select {
					case lists <- names:
					default:
					}
				}})
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.Close() })
			client.Store(c)
			assert.True(t, c.Capabilities().Tools.ListChanged)
			h := history(t, c)
			assert.Equal(t, tc.subscriptions, h.Listening)
			assert.Equal(t, tc.subscriptions, count(h.Methods, "subscriptions/listen"))

			want := fmt.Sprintf("add_tool: %d subscriptions", tc.subscriptions)
			assert.Equal(t, want, call(t, c, "add_tool", map[string]string{"text": "budget"}))
			select {
			case names := <-lists:
				assert.Equal(t, "<nil>", names[0], "ListTools from OnToolsChanged")
				assert.Contains(t, names, "budget")
			case <-time.After(5 * time.Second):
				t.Fatal("OnToolsChanged did not list the tools")
			}
			require.NoError(t, c.Close())
			// Stdio cancels the subscription with notifications/cancelled.
			assert.Equal(t, tc.subscriptions, logs.count(func(r logRecord) bool {
				return r.msg == "mcp: server stderr" && strings.HasPrefix(r.attrs["line"], "finance: subscription ") && strings.HasSuffix(r.attrs["line"], " cancelled")
			}))
		})
	}
}

func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

// testStdioResubscribe: a modern server that ends the subscription, or
// dies and is restarted, is subscribed again and the host told to
// re-fetch, since nothing is replayed.
func testStdioResubscribe(t *testing.T, bin string) {
	changed := make(chan struct{}, 16)
	tr := finance(bin, "-era", "modern", "-list-changed", "-crash-on", "get_summary")
	tr.Restart = mcp.RestartPolicy{MaxRestarts: 1, Backoff: 10 * time.Millisecond}
	c := stdioConnect(t, tr, &mcp.Options{OnToolsChanged: func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}})
	subscribedAgain := func(what string) {
		t.Helper()
		select {
		case <-changed:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: OnToolsChanged not called", what)
		}
		require.Eventually(t, func() bool { return history(t, c).Listening == 1 }, 5*time.Second, 10*time.Millisecond, what)
	}
	require.Equal(t, 1, history(t, c).Listening)
	for i, how := range []string{"result", "cancel"} {
		assert.Equal(t, "end_subscriptions: 1 subscriptions", call(t, c, "end_subscriptions", map[string]string{"text": how}))
		subscribedAgain("ended with " + how)
		assert.Equal(t, i+2, count(history(t, c).Methods, "subscriptions/listen"))
	}
	assert.Empty(t, changed)

	_, err := c.CallTool(context.Background(), "get_summary", nil)
	var exit *mcp.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, "x", call(t, c, "echo", map[string]string{"text": "x"}), "restarts the server")
	subscribedAgain("restarted")
	assert.Equal(t, 1, count(history(t, c).Methods, "subscriptions/listen"))

	assert.Equal(t, "add_tool: 1 subscriptions", call(t, c, "add_tool", map[string]string{"text": "budget"}))
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no change notified on the new subscription")
	}
}

// testStdioSlowCallbacks: while a callback blocks, notifications queue up
// to a bound, then are dropped, except the tool list change, which is
// kept; calls keep working meanwhile.
func testStdioSlowCallbacks(t *testing.T, bin string) {
	release := make(chan struct{})
	defer close(release) // in case of failure, before the cleanup's Close
	var logged, changed atomic.Int32
	logs := &logRecorder{}
	c := stdioConnect(t, finance(bin, "-era", "legacy"), &mcp.Options{
		Logger: slog.New(logs),
		OnLog: func(mcp.LogMessage) {
			if logged.Add(1) == 1 {
				<-release
			}
		},
		OnToolsChanged: func() { changed.Add(1) },
	})
	assert.Equal(t, "sent", call(t, c, "log_burst", map[string]int{"n": 1000}))
	assert.Equal(t, "ok", call(t, c, "echo", map[string]string{"text": "ok"}), "calls go on while a callback blocks")
	release <- struct{}{}
	// The callback that blocked, the 256 queued, and the change, kept
	// apart.
	require.Eventually(t, func() bool { return logged.Load() == 1+256 }, 5*time.Second, 10*time.Millisecond)
	assert.Equal(t, "ok", call(t, c, "echo", map[string]string{"text": "ok"}), "nothing more comes")
	assert.Equal(t, int32(1+256), logged.Load())
	assert.Equal(t, int32(1), changed.Load())
	assert.Equal(t, 1, logs.count(func(r logRecord) bool {
		return r.level == slog.LevelWarn && strings.Contains(r.msg, "notifications dropped")
	}))
}

// testStdioToolsetRefresh: a Toolset over a modern stdio server follows
// its tool list.
func testStdioToolsetRefresh(t *testing.T, bin string) {
	changes := make(chan toolset.ToolsChange, 16)
	ts, err := toolset.Discover(context.Background(), []config.Server{{Name: "fin", Command: bin, Args: []string{"-era", "modern", "-list-changed"}}},
		&toolset.Options{OnChange: func(c toolset.ToolsChange) { changes <- c }})
	require.NoError(t, err)
	defer ts.Close()
	_, ok := ts.Tool("fin_budget")
	require.False(t, ok)
	res, err := ts.Call(context.Background(), "fin_add_tool", map[string]string{"text": "budget"})
	require.NoError(t, err)
	assert.Equal(t, "add_tool: 1 subscriptions", res.Text())
	select {
	case c := <-changes:
		assert.Equal(t, toolset.ToolsChange{Server: "fin", Added: []string{"fin_budget"}}, c)
	case <-time.After(5 * time.Second):
		t.Fatal("no refresh reported")
	}
	_, ok = ts.Tool("fin_budget")
	assert.True(t, ok)
}

// testStdioResourceSubscription subscribes to a 2026-07-28 stdio server's
// resource: in force when SubscribeResource returns, cancelled with
// notifications/cancelled, and made again on a restarted process.
func testStdioResourceSubscription(t *testing.T, bin string) {
	updates := make(chan string, 8)
	tr := finance(bin, "-era", "modern", "-resources", "-crash-on", "get_summary")
	tr.Restart = mcp.RestartPolicy{MaxRestarts: 1, Backoff: 20 * time.Millisecond}
	c := stdioConnect(t, tr, &mcp.Options{ServerName: "fin", OnResourceUpdated: func(u mcp.ResourceUpdate) { updates <- u.Server + " " + u.URI }})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, c.SubscribeResource(ctx, "finance://ledger"))
	assert.Equal(t, "1 subscribers", call(t, c, "touch_ledger", nil), "in force once SubscribeResource returns")
	select {
	case u := <-updates:
		assert.Equal(t, "fin finance://ledger", u, "the update names its server")
	case <-ctx.Done():
		t.Fatal("no update")
	}

	// A restarted server knows no subscription: the client makes it again.
	_, err := c.CallTool(ctx, "get_summary", nil)
	var exit *mcp.ExitError
	require.ErrorAs(t, err, &exit)
	require.Eventually(t, func() bool { return call(t, c, "touch_ledger", nil) == "1 subscribers" }, 10*time.Second, 20*time.Millisecond)

	require.NoError(t, c.UnsubscribeResource(ctx, "finance://ledger"))
	require.Eventually(t, func() bool { return call(t, c, "touch_ledger", nil) == "0 subscribers" }, 10*time.Second, 20*time.Millisecond,
		"unsubscribing cancels the request")
}

//go:build unix

package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/internal/jsonrpc"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

// The fault matrix: every misbehaviour of a server the SDK is meant to
// survive, run over Streamable HTTP in both eras and over stdio where it
// applies. Each run puts the faulty server ("bad") in a Toolset next to a
// healthy one ("good") and checks:
//
//   - the documented typed error, or the documented recovery;
//   - no panic, and a bounded time (no hang past the call's deadline);
//   - the healthy server answers while the faulty call is in flight (the
//     HTTP fault holds the faulty request until it has);
//   - the tool ran as often as it may (a call is replayed only when it
//     provably did not run);
//   - after Close, no goroutine (goleak, once every row is done) and no
//     process (the stdio child is reaped).
//
// testdata/FAULTS.md is this table in prose; TestFaultMatrixTable keeps it
// in step (go test -run TestFaultMatrixTable -update-faults rewrites it).
// A row whose fix is on another branch says so in needs: it asserts the
// correct behaviour and fails until that branch is merged.
var faultRows = []faultRow{
	{
		name: "connection refused at Discover", want: "Discover skips the server with ErrUnreachable (never connected); the others work",
		needs: "rel (defect 7)", http: modern, refused: true, atDiscover: true,
		check: func(t *testing.T, r *faultRun) {
			require.ErrorIs(t, r.err, mcp.ErrUnreachable)
		},
	},
	{
		name: "connection refused mid-session", want: "the call fails with ErrUnreachable (the dial is refused), or ErrStreamBroken when it went out on a pooled connection the server closed meanwhile (the client cannot know it was not delivered); the tool did not run",
		needs: "rel (defect 7)", http: both,
		before: func(r *faultRun) { r.bad.Close() },
		check: func(t *testing.T, r *faultRun) {
			if !errors.Is(r.err, mcp.ErrUnreachable) {
				require.ErrorIs(t, r.err, mcp.ErrStreamBroken, "neither ErrUnreachable nor ErrStreamBroken")
			}
			assert.Zero(t, r.ran.Load())
		},
	},
	{
		name: "reset mid-response", want: "ErrStreamBroken; the tool ran once and is not replayed",
		needs: "rel (defect 7)", http: both, do: plain(mcptest.Reset),
		check: brokenOnce,
	},
	{
		name: "server killed mid-SSE", want: "ErrStreamBroken after the progress seen; the tool ran once and is not replayed; stdio: *ExitError, the call in flight fails at once",
		http: both, sse: true, do: plain(mcptest.KillMidSSE),
		stdio: []string{"-crash-on", "get_summary"}, tool: "get_summary",
		check: func(t *testing.T, r *faultRun) {
			if r.stdio {
				var exit *mcp.ExitError
				require.ErrorAs(t, r.err, &exit)
				assert.Equal(t, 3, exit.Code)
				assert.Contains(t, exit.Stderr, "database disk image is malformed")
				return
			}
			brokenOnce(t, r)
		},
	},
	{
		name: "truncated JSON by length", want: "ErrStreamBroken (the body ended before its Content-Length); the tool ran once and is not replayed",
		needs: "rel (defect 7)", http: both, do: plain(mcptest.TruncateByLength),
		check: brokenOnce,
	},
	{
		name: "truncated JSON by EOF", want: "ErrProtocol (a complete body, malformed JSON); the tool ran once; stdio: the cut line is skipped as garbage and the call ends at its deadline with ErrProtocol quoting it",
		http: both, do: plain(mcptest.TruncateByEOF),
		stdio: []string{"-fault", "truncate"}, timeout: 500 * time.Millisecond,
		check: func(t *testing.T, r *faultRun) {
			require.ErrorIs(t, r.err, mcp.ErrProtocol)
			if r.stdio {
				require.ErrorIs(t, r.err, context.DeadlineExceeded)
				return
			}
			assert.EqualValues(t, 1, r.ran.Load())
		},
	},
	{
		name: "truncated JSON inside SSE", want: "ErrProtocol (malformed event); the tool ran once",
		http: both, sse: true, do: plain(mcptest.TruncateInSSE),
		check: func(t *testing.T, r *faultRun) {
			require.ErrorIs(t, r.err, mcp.ErrProtocol)
			assert.EqualValues(t, 1, r.ran.Load())
		},
	},
	{
		name: "invalid UTF-8 (JSON)", want: "the call succeeds; each bad byte becomes U+FFFD, the text is valid UTF-8",
		http: both, do: plain(mcptest.InvalidUTF8(false)),
		stdio: []string{"-fault", "invalid-utf8"},
		check: validUTF8,
	},
	{
		name: "invalid UTF-8 (SSE)", want: "as with JSON",
		http: both, do: plain(mcptest.InvalidUTF8(true)),
		check: validUTF8,
	},
	{
		name: "64 MiB line (JSON)", want: "ErrTooLarge at the 32 MiB limit; heap growth under the limit plus 8 MiB (bounded by the bytes allocated meanwhile, runtime/metrics); the client stays usable (HTTP) or reports the broken pipe (stdio)",
		needs: "rel (defect 8; stdio too)", http: both, serial: true, times: 1, do: plain(mcptest.HugeLine(64<<20, false)), again: true,
		stdio: []string{}, tool: "big", args: map[string]int{"bytes": 64 << 20},
		check: tooLarge,
	},
	{
		name: "64 MiB line (SSE)", want: "as with JSON: the SSE decoder keeps a long event's bytes in pooled chunks until it is complete, so refusing one grows no buffer by doubling",
		needs: "rel (defect 8)", http: both, serial: true, do: plain(mcptest.HugeLine(64<<20, true)),
		check: tooLarge,
	},
	{
		name: "byte-a-second trickle", want: "the call ends at its deadline (the server's configured timeout, 300 ms here) with context.DeadlineExceeded; a legacy server gets notifications/cancelled",
		http: both, do: plain(mcptest.Trickle(100 * time.Millisecond)), timeout: 300 * time.Millisecond,
		stdio: []string{}, tool: "slow", args: map[string]int{"ms": 60000},
		check: deadline,
	},
	{
		name: "stream that never ends", want: "as the trickle: context.DeadlineExceeded at the deadline, log notifications delivered meanwhile",
		http: both, do: plain(mcptest.Endless(20 * time.Millisecond)), timeout: 300 * time.Millisecond,
		check: func(t *testing.T, r *faultRun) {
			deadline(t, r)
			assert.Positive(t, r.logs.Load(), "log notifications of the endless stream")
		},
	},
	{
		name: "500 with HTML and Retry-After", want: "*HTTPError 500, text/html, body quoted in 200 bytes; no replay, no wait for Retry-After; the next call works",
		http: both, times: 1, do: plain(mcptest.HTMLStatus(500, "3600", "")), again: true,
		check: httpStatus(500),
	},
	{
		name: "502 with HTML", want: "*HTTPError 502, as 500",
		http: both, times: 1, do: plain(mcptest.HTMLStatus(502, "", "")), again: true,
		check: httpStatus(502),
	},
	{
		name: "503 with HTML and Retry-After", want: "*HTTPError 503, as 500",
		http: both, times: 1, do: plain(mcptest.HTMLStatus(503, "120", "")), again: true,
		check: httpStatus(503),
	},
	{
		name: "200 as text/plain", want: "ErrProtocol (wrong content type); the next call works",
		needs: "rel (defect 7)", http: both, times: 1, do: plain(mcptest.ContentType("text/plain")), again: true,
		check: protocolOnce,
	},
	{
		name: "200 as text/html", want: "ErrProtocol, as text/plain",
		needs: "rel (defect 7)", http: both, times: 1, do: plain(mcptest.ContentType("text/html")), again: true,
		check: protocolOnce,
	},
	{
		name: "200 without Content-Type", want: "ErrProtocol, as text/plain",
		needs: "rel (defect 7)", http: both, times: 1, do: plain(mcptest.ContentType("")), again: true,
		check: protocolOnce,
	},
	{
		name: "mismatched response id (JSON)", want: "ErrProtocol (response does not answer the request); stdio: the stray response is dropped and the call ends at its deadline",
		http: both, times: 1, do: plain(mcptest.WrongID(false)), again: true,
		stdio: []string{"-fault", "wrong-id"}, timeout: 500 * time.Millisecond,
		check: func(t *testing.T, r *faultRun) {
			if r.stdio {
				require.ErrorIs(t, r.err, context.DeadlineExceeded)
				return
			}
			protocolOnce(t, r)
		},
	},
	{
		name: "mismatched response id (SSE)", want: "the stray response is skipped; the stream ends without the response: ErrStreamBroken, not replayed",
		http: both, do: plain(mcptest.WrongID(true)),
		check: brokenOnce,
	},
	{
		name: "session lost before the call ran", want: "a 404 does not prove the call did not run: ErrSessionExpired after one new session, no replay (the tool never ran); the next call works",
		needs: "rel (defect 2)", http: legacy, times: 1, again: true, do: func(s *mcptest.Server) mcptest.DoFunc { return s.LoseSession(false) },
		check: func(t *testing.T, r *faultRun) {
			require.ErrorIs(t, r.err, mcp.ErrSessionExpired)
			assert.Zero(t, r.ran.Load())
			assert.Equal(t, 2, r.initializes())
		},
	},
	{
		name: "session lost, tool trusted read-only", want: "with TrustToolHints and readOnlyHint: one new session, the call replayed and answered; the tool ran once",
		http: legacy, times: 1, trusted: true, do: func(s *mcptest.Server) mcptest.DoFunc { return s.LoseSession(false) },
		check: func(t *testing.T, r *faultRun) {
			require.NoError(t, r.err)
			assert.EqualValues(t, 1, r.ran.Load())
			assert.Equal(t, 2, r.initializes())
		},
	},
	{
		name: "session lost after the call ran", want: "ErrSessionExpired after one new session, no replay (the tool ran once); the next call works",
		needs: "rel (defect 2)", http: legacy, times: 1, again: true, do: func(s *mcptest.Server) mcptest.DoFunc { return s.LoseSession(true) },
		check: func(t *testing.T, r *faultRun) {
			require.ErrorIs(t, r.err, mcp.ErrSessionExpired)
			assert.EqualValues(t, 1, r.ran.Load())
			assert.Equal(t, 2, r.initializes())
		},
	},
	{
		name: "session lost on every request", want: "ErrSessionExpired after one new session: no loop; the tool never ran",
		http: legacy, do: func(s *mcptest.Server) mcptest.DoFunc { return s.LoseSession(false) },
		check: func(t *testing.T, r *faultRun) {
			require.ErrorIs(t, r.err, mcp.ErrSessionExpired)
			assert.Zero(t, r.ran.Load())
			assert.Equal(t, 2, r.initializes())
		},
	},
	{
		name: "notification flood, blocked callback", want: "the call returns its result while the progress (HTTP) or log (stdio) callback is blocked; notifications beyond the queue are dropped, never the response",
		needs: "rel (defect 1)", http: both, do: plain(mcptest.Flood(2000)), blockCallbacks: true,
		stdio: []string{"-list-log-burst"}, tool: "log_burst", args: map[string]int{"n": 2000},
		check: func(t *testing.T, r *faultRun) {
			require.NoError(t, r.err)
			assert.False(t, r.res.IsError())
			// Delivered off the reader, maybe after the call returned.
			require.Eventually(t, func() bool { return r.callbacks.Load() > 0 }, 10*time.Second, time.Millisecond, "the callback was reached")
		},
	},
	{
		name: "server lies in discover", want: "discover says 2026-07-28, the call gets -32022 listing only 2025-11-25: the client falls back to initialize once and stays legacy; the call and the next work",
		needs: "rel (defect 4)", http: modern, versions: []string{mcptest.Modern, mcptest.Legacy}, again: true,
		match: func(m *jsonrpc.Message) bool { return m.Method == "tools/call" },
		do: func(s *mcptest.Server) mcptest.DoFunc {
			// Only the modern requests are refused; initialize and the
			// legacy calls reach the server.
			refuse := mcptest.UnsupportedVersion(mcptest.Legacy)
			return func(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message, run func() []byte) {
				if r.Header.Get("Mcp-Protocol-Version") != mcptest.Modern {
					w.Header().Set("Content-Type", "application/json")
					_, _ = w.Write(run())
					return
				}
				refuse(w, r, msg, run)
			}
		},
		check: func(t *testing.T, r *faultRun) {
			require.NoError(t, r.err)
			assert.EqualValues(t, 1, r.ran.Load())
			assert.Equal(t, 1, r.initializes())
		},
	},
	{
		name: "401 with a challenge", want: "ErrAuth as *AuthError with the parsed challenge (scheme Bearer, error invalid_token, resource_metadata)",
		http: both, times: 1, again: true,
		do:    plain(mcptest.Challenge(401, `Bearer error="invalid_token", error_description="expired", resource_metadata="https://as.example/.well-known/oauth-protected-resource"`)),
		check: authFailed,
	},
	{
		name: "403 with a challenge", want: "ErrAuth as *AuthError with the parsed challenge (error insufficient_scope, scope tools:write)",
		http: both, times: 1, again: true,
		do:    plain(mcptest.Challenge(403, `Bearer error="insufficient_scope", scope="tools:write"`)),
		check: authFailed,
	},
	{
		name: "307 to another origin", want: "the token is not sent to the other origin (it answers 401: ErrAuth)",
		http: both, token: true, redirect: "localhost",
		check: notForwarded,
	},
	{
		name: "307 to another port of the same host", want: "the token is not sent to the other port (Go's http.Client would forward it; the origin check stops it); ErrAuth",
		http: both, token: true, redirect: "127.0.0.1",
		check: notForwarded,
	},
	{
		name: "child hangs on stdin EOF", want: "Close ends it with SIGTERM within its 2 s grace; the process is reaped",
		stdio: []string{"-ignore-stdin-eof"}, tool: "echo", args: map[string]string{"text": "ok"},
		check: func(t *testing.T, r *faultRun) {
			require.NoError(t, r.err)
			assert.Less(t, r.closeTook, 3800*time.Millisecond, "short of SIGKILL at 4 s")
		},
	},
	{
		name: "child ignores SIGTERM", want: "Close ends it with SIGKILL after both graces (about 4 s); the process is reaped",
		stdio: []string{"-ignore-stdin-eof", "-ignore-sigterm"}, tool: "echo", args: map[string]string{"text": "ok"},
		check: func(t *testing.T, r *faultRun) {
			require.NoError(t, r.err)
			assert.Less(t, r.closeTook, 5500*time.Millisecond)
		},
	},
	{
		name: "child floods stderr", want: "calls are answered; stderr goes to the logger line by line",
		stdio: []string{"-flood-stderr"}, tool: "echo", args: map[string]string{"text": "ok"},
		check: func(t *testing.T, r *faultRun) {
			require.NoError(t, r.err)
			assert.Equal(t, "ok", r.res.Text())
		},
	},
	{
		name: "child writes a banner to stdout", want: "the banner lines are skipped (logged once at warn, then at debug); calls are answered",
		stdio: []string{"-garbage-stdout", "3"}, tool: "echo",
		check: func(t *testing.T, r *faultRun) {
			require.NoError(t, r.err)
			assert.Equal(t, "ok", r.res.Text())
		},
	},
	{
		name: "child answers with garbage", want: "Discover skips the server at its connect timeout (1 s here) with ErrProtocol quoting the garbage; the others work",
		stdio: []string{"-garbage-replies"}, connectTimeout: time.Second, atDiscover: true,
		check: func(t *testing.T, r *faultRun) {
			require.ErrorIs(t, r.err, mcp.ErrProtocol)
			assert.Contains(t, r.err.Error(), "ok: server/discover done")
		},
	},
	{
		name: "child exits at once", want: "Discover skips the server with *ExitError (code, stderr tail); the others work",
		stdio: []string{"-exit-immediately"}, atDiscover: true,
		check: func(t *testing.T, r *faultRun) {
			var exit *mcp.ExitError
			require.ErrorAs(t, r.err, &exit)
			assert.Equal(t, 2, exit.Code)
			assert.Contains(t, exit.Stderr, "cannot open database ledger.db")
		},
	},
	{
		name: "command not found", want: "Discover skips the server with exec.ErrNotFound wrapped in ErrUnreachable (never started); the others work",
		needs: "rel (defect 7)", stdio: []string{}, command: "mini-me-no-such-server", atDiscover: true,
		check: func(t *testing.T, r *faultRun) {
			require.ErrorIs(t, r.err, exec.ErrNotFound)
			require.ErrorIs(t, r.err, mcp.ErrUnreachable)
		},
	},
}

var (
	both   = []string{mcptest.Modern, mcptest.Legacy}
	modern = []string{mcptest.Modern}
	legacy = []string{mcptest.Legacy}
)

// faultRow is one fault of the matrix.
type faultRow struct {
	name string
	// want is the documented outcome, needs the branch that brings it when
	// main does not have it yet.
	want, needs string

	// HTTP: the eras run (nil: not over HTTP), the server's SSE mode and
	// versions (default: the era alone), and the fault: do answers the
	// requests match picks (default tools/call), times of them (0: all),
	// from the call on (Discover is left alone).
	http     []string
	sse      bool
	versions []string
	match    func(*jsonrpc.Message) bool
	times    int
	do       func(*mcptest.Server) mcptest.DoFunc
	// token sends a bearer token; redirect, when set, makes the bad
	// server redirect the call with 307 to another server on that host.
	token    bool
	redirect string
	// trusted annotates the bad tool read-only and sets TrustToolHints.
	trusted bool
	// refused points the bad server at a port nothing listens on.
	refused bool

	// stdio: the finance flags (nil: not over stdio), another command,
	// and the tool called with args (default: echo).
	stdio   []string
	command string
	tool    string
	args    any

	timeout        time.Duration // the bad server's call timeout
	connectTimeout time.Duration // the bad server's connect timeout
	serial         bool          // measures the heap: runs alone
	atDiscover     bool          // the fault hits Discover: r.err is the server's skip error
	blockCallbacks bool          // progress and log callbacks block until the call returned
	again          bool          // a second call must work
	before         func(*faultRun)
	check          func(*testing.T, *faultRun)
}

// faultRun is one run of a row, what check looks at.
type faultRun struct {
	stdio bool
	era   string
	bad   *mcptest.Server // HTTP only
	ran   atomic.Int32    // runs of the bad server's tool (HTTP)
	res   *toolset.ToolResult
	err   error
	took  time.Duration // of the faulty call
	// closeTook is how long the Toolset's Close took.
	closeTook time.Duration
	// heapGrowth is what the process allocated during the call (serial
	// rows): a bound of the heap growth the call caused.
	heapGrowth uint64
	logs       atomic.Int32 // log notifications received
	callbacks  atomic.Int32 // progress and log callbacks entered
	elsewhere  *mcptest.Server
}

// hangAfter is how long a faulty call may take before the matrix calls it
// a hang. It is generous: a row's own check bounds the time its outcome
// may take, and the 64 MiB rows under -race on a loaded 2-core machine take
// several seconds to read their 32 MiB.
const hangAfter = 30 * time.Second

func (r *faultRun) initializes() int {
	n := 0
	for _, q := range r.bad.Requests() {
		if q.Method == "initialize" {
			n++
		}
	}
	return n
}

// plain adapts a fault that needs no server.
func plain(do mcptest.DoFunc) func(*mcptest.Server) mcptest.DoFunc {
	return func(*mcptest.Server) mcptest.DoFunc { return do }
}

func brokenOnce(t *testing.T, r *faultRun) {
	require.ErrorIs(t, r.err, mcp.ErrStreamBroken)
	assert.EqualValues(t, 1, r.ran.Load(), "runs of the tool")
}

func protocolOnce(t *testing.T, r *faultRun) {
	require.ErrorIs(t, r.err, mcp.ErrProtocol)
	assert.EqualValues(t, 1, r.ran.Load(), "runs of the tool")
}

func validUTF8(t *testing.T, r *faultRun) {
	require.NoError(t, r.err)
	text := r.res.Text()
	assert.True(t, utf8.ValidString(text), "%q", text)
	assert.Equal(t, "caf\uFFFD \uFFFD\uFFFD ok", text)
}

// heapSlack is what may grow on top of MaxMessageSize while a message
// over the limit is rejected.
const heapSlack = 8 << 20

func tooLarge(t *testing.T, r *faultRun) {
	require.ErrorIs(t, r.err, mcp.ErrTooLarge)
	bound := uint64(mcp.DefaultMaxMessageSize + heapSlack)
	t.Logf("allocated rejecting a 64 MiB line: %.1f MiB (bound %d MiB)", float64(r.heapGrowth)/(1<<20), bound>>20)
	assert.Less(t, r.heapGrowth, bound, "bytes allocated, a bound of the heap growth")
}

func deadline(t *testing.T, r *faultRun) {
	require.ErrorIs(t, r.err, context.DeadlineExceeded)
	// Short of the trickle's whole body (a byte per 100 ms: over 7 s).
	assert.Less(t, r.took, 5*time.Second, "ends at the 300 ms deadline")
	if r.era == mcptest.Legacy {
		var cancelled int
		for _, q := range r.bad.Requests() {
			if q.Method == "notifications/cancelled" {
				cancelled++
			}
		}
		assert.Equal(t, 1, cancelled, "notifications/cancelled")
	}
}

func httpStatus(code int) func(*testing.T, *faultRun) {
	return func(t *testing.T, r *faultRun) {
		var he *mcp.HTTPError
		require.ErrorAs(t, r.err, &he)
		assert.Equal(t, code, he.StatusCode)
		assert.Equal(t, "text/html", he.ContentType)
		assert.LessOrEqual(t, len(he.Body), 200+len("…"))
		assert.True(t, strings.HasPrefix(he.Body, "<html>"), he.Body)
		assert.Less(t, r.took, 10*time.Second, "Retry-After (120 s, 3600 s) is not waited for")
		assert.Equal(t, 1, r.bad.FaultHits(), "not replayed")
	}
}

func authFailed(t *testing.T, r *faultRun) {
	require.ErrorIs(t, r.err, mcp.ErrAuth)
	assert.Equal(t, 1, r.bad.FaultHits(), "not replayed")
	// The error carries the parsed WWW-Authenticate challenge.
	var ae *mcp.AuthError
	require.ErrorAs(t, r.err, &ae)
	assert.Equal(t, "Bearer", ae.Scheme)
	switch ae.StatusCode {
	case 401:
		assert.Equal(t, "invalid_token", ae.Code)
		assert.Equal(t, "https://as.example/.well-known/oauth-protected-resource", ae.ResourceMetadata)
	case 403:
		assert.Equal(t, "insufficient_scope", ae.Code)
		assert.Equal(t, "tools:write", ae.Scope)
	default:
		t.Errorf("status %d, want 401 or 403", ae.StatusCode)
	}
}

func notForwarded(t *testing.T, r *faultRun) {
	require.ErrorIs(t, r.err, mcp.ErrAuth)
	reqs := r.elsewhere.Requests()
	require.NotEmpty(t, reqs, "the redirect was followed")
	for _, q := range reqs {
		for name, v := range q.Header {
			assert.NotContains(t, strings.Join(v, " "), matrixToken, "header %s at the redirect target", name)
		}
		assert.NotContains(t, string(q.Body), matrixToken)
	}
}

// matrixToken is the bearer token of the rows that send one.
const matrixToken = "sk-matrix-7f3a9c"

// TestFaultMatrix runs every row of faultRows.
func TestFaultMatrix(t *testing.T) {
	bin := mcptest.BuildFinance(t)
	t.Setenv("MATRIX_TOKEN", matrixToken)
	t.Run("rows", func(t *testing.T) {
		for _, row := range faultRows {
			for _, era := range row.http {
				t.Run(row.name+"/"+era, func(t *testing.T) {
					if !row.serial {
						t.Parallel()
					}
					runFault(t, row, &faultRun{era: era}, bin)
				})
			}
			if row.stdio != nil {
				t.Run(row.name+"/stdio", func(t *testing.T) {
					if !row.serial {
						t.Parallel()
					}
					runFault(t, row, &faultRun{stdio: true}, bin)
				})
			}
		}
	})
	// Every row is done and closed: nothing of theirs may remain.
	goleak.VerifyNone(t)
}

func runFault(t *testing.T, row faultRow, r *faultRun, bin string) {
	if row.needs != "" {
		t.Logf("needs branch %s", row.needs)
	}
	good := &mcptest.Server{Versions: both, Tools: []mcptest.Tool{mcptest.EchoTool()}}
	servers := []config.Server{{Name: "good", URL: mcptest.Start(t, good)}, {Name: "bad", Timeout: row.timeout, ConnectTimeout: row.connectTimeout}}
	hit, hold := make(chan struct{}, 1), make(chan struct{})
	var armed atomic.Bool
	if r.stdio {
		servers[1].Command, servers[1].Args = bin, append([]string{"-era", "both"}, row.stdio...)
		if row.command != "" {
			servers[1].Command = row.command
		}
	} else {
		r.bad = &mcptest.Server{Versions: []string{r.era}, SSE: row.sse, Tools: []mcptest.Tool{countingTool(&r.ran, row.trusted)}}
		if row.versions != nil {
			r.bad.Versions = row.versions
		}
		match := row.match
		if match == nil {
			match = mcptest.OnMethod("tools/call")
		}
		if row.redirect != "" {
			r.elsewhere = &mcptest.Server{Versions: both, Fault: &mcptest.Fault{Do: mcptest.Challenge(401, `Bearer error="invalid_token"`)}}
			u := mcptest.Start(t, r.elsewhere)
			u = strings.Replace(u, "127.0.0.1", row.redirect, 1)
			row.do = plain(mcptest.Redirect(http.StatusTemporaryRedirect, u))
		}
		if row.do != nil {
			r.bad.Fault = &mcptest.Fault{
				Match: func(m *jsonrpc.Message) bool { return armed.Load() && match(m) },
				Times: row.times, Hit: hit, Hold: hold, Do: row.do(r.bad),
			}
		}
		servers[1].URL = mcptest.Start(t, r.bad)
		if row.refused {
			servers[1].URL = mcptest.ClosedURL(t)
		}
		if row.token {
			servers[1].Auth = &config.Auth{Type: config.AuthBearer, TokenEnv: "MATRIX_TOKEN"}
		}
	}

	release := make(chan struct{}) // unblocks blocked callbacks
	var releaseOnce sync.Once
	unblock := func() { releaseOnce.Do(func() { close(release) }) }
	defer unblock()
	wait := func() {
		r.callbacks.Add(1)
		if row.blockCallbacks {
			<-release
		}
	}
	opts := &toolset.Options{Client: mcp.Options{
		Logger:         slog.New(&logRecorder{}),
		OnProgress:     func(mcp.Progress) { wait() },
		OnLog:          func(mcp.LogMessage) { r.logs.Add(1); wait() },
		TrustToolHints: row.trusted,
	}}
	ts, err := toolset.Discover(context.Background(), servers, opts)
	require.NoError(t, err)
	closed := false
	closeToolset := func() {
		if closed {
			return
		}
		closed = true
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err := ts.Shutdown(ctx)
		r.closeTook = time.Since(start)
		assert.NotErrorIs(t, err, context.DeadlineExceeded, "Close hung")
	}
	defer closeToolset()

	status := ts.Servers()
	require.True(t, status[0].Connected, "the good server: %v", status[0].Err)
	if row.atDiscover {
		require.False(t, status[1].Connected, "the bad server was not skipped")
		r.err = status[1].Err
		assertGood(t, ts)
		row.check(t, r)
		return
	}
	require.True(t, status[1].Connected, "the bad server, before the fault: %v", status[1].Err)

	var pid int
	if r.stdio && row.command == "" {
		res, err := ts.Call(context.Background(), "bad_pid", nil)
		require.NoError(t, err)
		var p pids
		require.NoError(t, json.Unmarshal([]byte(res.Text()), &p))
		pid = p.PID
	}
	if row.before != nil {
		row.before(r)
	}
	armed.Store(true)

	tool, args := "bad_work", row.args
	if r.stdio {
		tool = "bad_" + or(row.tool, "echo")
		if args == nil {
			args = map[string]string{"text": "ok"}
		}
	}
	type outcome struct {
		res *toolset.ToolResult
		err error
		at  time.Time
	}
	done := make(chan outcome, 1)
	allocBefore := allocated()
	began := time.Now()
	go func() {
		res, err := ts.Call(context.Background(), tool, args)
		done <- outcome{res, err, time.Now()}
	}()

	// The good server answers while the bad one misbehaves: over HTTP
	// the faulty request is held until it has.
	if r.bad != nil && r.bad.Fault != nil {
		select {
		case <-hit:
		case o := <-done:
			t.Fatalf("the fault never hit: %v, %v", o.res, o.err)
		case <-time.After(10 * time.Second):
			t.Fatal("the fault never hit")
		}
	}
	assertGood(t, ts)
	close(hold)

	select {
	case o := <-done:
		r.res, r.err, r.took = o.res, o.err, o.at.Sub(began)
	case <-time.After(hangAfter):
		unblock()
		t.Fatalf("the faulty call hangs (%s)", row.name)
	}
	unblock()
	if row.serial {
		r.heapGrowth = allocated() - allocBefore
	}
	t.Logf("%s: %v in %v", tool, errOrText(r.res, r.err), r.took.Round(time.Millisecond))
	row.check(t, r)

	if row.again && !r.stdio {
		res, err := ts.Call(context.Background(), tool, args)
		if assert.NoError(t, err, "the call after the fault") {
			assert.False(t, res.IsError())
		}
	}
	assertGood(t, ts)
	closeToolset()
	if pid != 0 {
		assert.True(t, reaped(pid), "process %d left", pid)
	}
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func errOrText(res *toolset.ToolResult, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return fmt.Sprintf("result %.80q", res.Text())
}

// assertGood checks that the good server answers.
func assertGood(t *testing.T, ts *toolset.Toolset) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := ts.Call(ctx, "good_echo", map[string]string{"text": "still here"})
	require.NoError(t, err, "the good server")
	assert.Equal(t, "still here", res.Text())
}

// countingTool is the bad server's tool: it counts its runs.
// Annotated read-only, a trusting client may send it again.
func countingTool(n *atomic.Int32, readOnly bool) mcptest.Tool {
	def := `{"name":"work","inputSchema":{"type":"object"}}`
	if readOnly {
		def = `{"name":"work","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`
	}
	return mcptest.Tool{
		Def: json.RawMessage(def),
		Call: func(context.Context, json.RawMessage, func(string, any)) (any, error) {
			return map[string]any{"content": []any{map[string]any{"type": "text", "text": fmt.Sprintf("run %d", n.Add(1))}}}, nil
		},
	}
}

// allocated reads the bytes the heap has handed out since the process
// started (runtime/metrics). What a call allocates bounds the heap growth
// it causes, and unlike a sampled peak it does not depend on when the GC
// runs.
func allocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

var updateFaults = flag.Bool("update-faults", false, "rewrite testdata/FAULTS.md from the fault matrix")

// TestFaultMatrixTable keeps testdata/FAULTS.md, the matrix in prose, in
// step with faultRows.
func TestFaultMatrixTable(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Fault matrix\n\n")
	b.WriteString("Generated from `faultRows` in `mcp/matrix_test.go` by\n`go test ./mcp -run TestFaultMatrixTable -update-faults`; `TestFaultMatrix` runs it.\n")
	b.WriteString("Each fault runs in a Toolset next to a healthy server, which must answer while the\nfault is in flight; after Close no goroutine and no process may remain.\n\n")
	b.WriteString("| Fault | Runs over | Expected | Fixed by |\n|---|---|---|---|\n")
	for _, row := range faultRows {
		var over []string
		for _, era := range row.http {
			over = append(over, "HTTP "+era)
		}
		if row.stdio != nil {
			over = append(over, "stdio")
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", row.name, strings.Join(over, ", "), row.want, row.needs)
	}
	path := filepath.Join("testdata", "FAULTS.md")
	if *updateFaults {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	}
	got, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("%s is missing: run with -update-faults", path)
	}
	require.NoError(t, err)
	assert.Equal(t, b.String(), string(got), "%s is stale: run with -update-faults", path)
}

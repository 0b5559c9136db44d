package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"git.rickub.com/bots-garden/mini-me/internal/jsonrpc"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func failTool() mcptest.Tool {
	return mcptest.Tool{
		Def: json.RawMessage(`{"name":"fail","inputSchema":{"type":"object"}}`),
		Call: func(context.Context, json.RawMessage, func(string, any)) (any, error) {
			return map[string]any{"content": []any{map[string]any{"type": "text", "text": "no such account"}}, "isError": true}, nil
		},
	}
}

func connect(t testing.TB, url string, opts *mcp.Options) *mcp.Client {
	t.Helper()
	c, err := mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: url}, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestEraDetection(t *testing.T) {
	for _, tc := range []struct {
		name     string
		versions []string
		sse      bool
		era      mcp.Era
		version  string
	}{
		{"modern only", []string{mcptest.Modern}, false, mcp.EraModern, mcp.Version20260728},
		{"legacy only", []string{mcptest.Legacy}, false, mcp.EraLegacy, mcp.Version20251125},
		{"both eras prefer modern", []string{mcptest.Modern, mcptest.Legacy}, false, mcp.EraModern, mcp.Version20260728},
		{"legacy over sse", []string{mcptest.Legacy}, true, mcp.EraLegacy, mcp.Version20251125},
		{"modern over sse", []string{mcptest.Modern}, true, mcp.EraModern, mcp.Version20260728},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &mcptest.Server{Versions: tc.versions, SSE: tc.sse, Tools: []mcptest.Tool{mcptest.EchoTool(), failTool()}}
			c := connect(t, mcptest.Start(t, s), nil)
			assert.Equal(t, tc.era, c.Era())
			assert.Equal(t, tc.version, c.ProtocolVersion())
			assert.Equal(t, "mcptest", c.ServerInfo().Name)

			tools, err := c.ListTools(context.Background())
			require.NoError(t, err)
			require.Len(t, tools, 2)
			assert.Equal(t, "echo", tools[0].Name)
			assert.JSONEq(t, `{"type":"object","properties":{"text":{"type":"string"}}}`, string(tools[0].InputSchema))

			res, err := c.CallTool(context.Background(), "echo", map[string]string{"text": "héllo"})
			require.NoError(t, err)
			assert.False(t, res.IsError)
			assert.Equal(t, "héllo", res.Text())

			res, err = c.CallTool(context.Background(), "fail", nil)
			require.NoError(t, err)
			assert.True(t, res.IsError)
			assert.Equal(t, "no such account", res.Text())

			_, err = c.CallTool(context.Background(), "nope", nil)
			var rpc *mcp.RPCError
			require.ErrorAs(t, err, &rpc)
			assert.Equal(t, mcp.CodeInvalidParams, rpc.Code)

			// Every modern request carries the per-request fields, every
			// legacy one after initialize carries the session.
			for _, r := range s.Requests() {
				if r.Method == "" || r.Method == "server/discover" || r.Method == "initialize" {
					continue
				}
				if tc.era == mcp.EraModern {
					assert.Equal(t, mcp.Version20260728, r.Header.Get("Mcp-Protocol-Version"), r.Method)
					assert.Equal(t, r.Method, r.Header.Get("Mcp-Method"))
					assert.Contains(t, string(r.Body), `"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}`, "tasks by default")
				} else {
					assert.NotEmpty(t, r.Header.Get("Mcp-Session-Id"), r.Method)
					assert.Equal(t, mcp.Version20251125, r.Header.Get("Mcp-Protocol-Version"), r.Method)
					assert.Empty(t, r.Header.Get("Mcp-Method"))
				}
			}
			require.NoError(t, c.Close())
			if tc.era == mcp.EraLegacy {
				assert.Equal(t, 1, s.Deletes(), "legacy session deleted on close")
			}
		})
	}
}

func TestPagination(t *testing.T) {
	s := &mcptest.Server{Versions: []string{mcptest.Modern}, PageSize: 7}
	for i := range 50 {
		s.Tools = append(s.Tools, mcptest.Tool{Def: json.RawMessage(fmt.Sprintf(`{"name":"t%02d","inputSchema":{"type":"object"}}`, i))})
	}
	c := connect(t, mcptest.Start(t, s), nil)
	tools, err := c.ListTools(context.Background())
	require.NoError(t, err)
	require.Len(t, tools, 50)
	assert.Equal(t, "t49", tools[49].Name)
}

func TestRepeatedCursorIsAnError(t *testing.T) {
	s := &mcptest.Server{Versions: []string{mcptest.Modern}}
	s.Intercept = func(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) bool {
		if msg.Method != "tools/list" {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[],"nextCursor":""}}`, msg.ID)
		return true
	}
	c := connect(t, mcptest.Start(t, s), nil)
	_, err := c.ListTools(context.Background())
	require.ErrorIs(t, err, mcp.ErrProtocol)
	assert.Contains(t, err.Error(), "repeated cursor")
}

func TestProgressNotifications(t *testing.T) {
	s := &mcptest.Server{Versions: []string{mcptest.Modern}, SSE: true}
	s.Tools = []mcptest.Tool{{
		Def: json.RawMessage(`{"name":"slow","inputSchema":{"type":"object"}}`),
		Call: func(_ context.Context, _ json.RawMessage, send func(string, any)) (any, error) {
			for i := 1; i <= 3; i++ {
				send("notifications/progress", map[string]any{"progressToken": s.LastProgressToken(), "progress": i, "total": 3})
			}
			send("notifications/message", map[string]any{"level": "info", "data": "working"})
			return map[string]any{"content": []any{}}, nil
		},
	}}
	var mu sync.Mutex
	var got []mcp.Progress
	var logs []mcp.LogMessage
	c := connect(t, mcptest.Start(t, s), &mcp.Options{
		OnProgress: func(p mcp.Progress) { mu.Lock(); got = append(got, p); mu.Unlock() },
		OnLog:      func(m mcp.LogMessage) { mu.Lock(); logs = append(logs, m); mu.Unlock() },
	})
	_, err := c.CallTool(context.Background(), "slow", nil)
	require.NoError(t, err)
	// Callbacks run on the connection's queue, after the reader moved on.
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == 3 && len(logs) == 1 }, 5*time.Second, time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, 3)
	assert.Equal(t, mcp.Progress{Method: "tools/call", Name: "slow", Progress: 3, Total: 3}, got[2])
	require.Len(t, logs, 1)
	assert.Equal(t, "info", logs[0].Level)
}

func TestSessionExpiryReinitializesOnce(t *testing.T) {
	s := &mcptest.Server{Versions: []string{mcptest.Legacy}, Tools: []mcptest.Tool{mcptest.EchoTool(), failTool()}}
	c := connect(t, mcptest.Start(t, s), &mcp.Options{TrustToolHints: true})

	s.ExpireSessions()
	// echo is read-only, and hints are trusted: replayed on the new
	// session. The client lists the tools itself to learn the hints.
	res, err := c.CallTool(context.Background(), "echo", map[string]string{"text": "again"})
	require.NoError(t, err)
	assert.Equal(t, "again", res.Text())
	inits := 0
	for _, r := range s.Requests() {
		if r.Method == "initialize" {
			inits++
		}
	}
	assert.Equal(t, 2, inits)

	s.ExpireSessions()
	// A 404 does not prove the server did not run the call: a tool with
	// no safety hints is not sent again, but the next call finds a new
	// session ready.
	_, err = c.CallTool(context.Background(), "fail", nil)
	require.ErrorIs(t, err, mcp.ErrSessionExpired)
	res, err = c.CallTool(context.Background(), "fail", nil)
	require.NoError(t, err)
	assert.True(t, res.IsError)
	calls, inits := 0, 0
	for _, r := range s.Requests() {
		if r.Method == "tools/call" && strings.Contains(string(r.Body), `"fail"`) {
			calls++
		}
		if r.Method == "initialize" {
			inits++
		}
	}
	assert.Equal(t, 2, calls, "refused once with 404, then run once by the next call")
	assert.Equal(t, 3, inits, "one new session per expiry")
}

func TestStreamDroppedMidResponse(t *testing.T) {
	for _, tc := range []struct {
		era   string
		trust bool
	}{{mcptest.Modern, true}, {mcptest.Modern, false}, {mcptest.Legacy, true}, {mcptest.Legacy, false}} {
		era := tc.era
		t.Run(fmt.Sprint(era, " trust=", tc.trust), func(t *testing.T) {
			var calls atomic.Int32
			s := &mcptest.Server{Versions: []string{era}, SSE: true, Tools: []mcptest.Tool{mcptest.EchoTool()}}
			s.Intercept = func(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) bool {
				if msg.Method != "tools/call" || calls.Add(1) > 1 {
					return false
				}
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = w.Write([]byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":1}}\n\n"))
				return true // the stream ends with no response
			}
			c := connect(t, mcptest.Start(t, s), &mcp.Options{TrustToolHints: tc.trust})
			_, err := c.ListTools(context.Background())
			require.NoError(t, err)
			res, err := c.CallTool(context.Background(), "echo", map[string]string{"text": "x"})
			// A stream that cannot be resumed (modern, or legacy without
			// an event id) loses its request, in both eras alike.
			if tc.trust {
				// A read-only call is re-issued with a new id.
				require.NoError(t, err)
				assert.Equal(t, "x", res.Text())
				assert.Equal(t, int32(2), calls.Load())
			} else {
				// Hints not trusted: the caller decides.
				require.ErrorIs(t, err, mcp.ErrStreamBroken)
				assert.Equal(t, int32(1), calls.Load())
			}
		})
	}
}

func TestLegacyStreamResumesWithLastEventID(t *testing.T) {
	var resumed atomic.Value
	s := &mcptest.Server{Versions: []string{mcptest.Legacy}, SSE: true}
	s.Intercept = func(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) bool {
		if msg.Method != "tools/call" {
			return false
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte("id: ev-1\nretry: 20\ndata:\n\n"))
		return true
	}
	url := mcptest.Start(t, s)
	// GET resumptions are served by a wrapper in front of the server.
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			if r.Header.Get("Last-Event-ID") == "" {
				w.WriteHeader(http.StatusMethodNotAllowed) // no standalone stream
				return
			}
			resumed.Store(r.Header.Get("Last-Event-ID"))
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write([]byte(`data: {"jsonrpc":"2.0","id":` + lastID(s) + `,"result":{"content":[{"type":"text","text":"resumed"}]}}` + "\n\n"))
			return
		}
		s.ServeHTTP(w, r)
	}))
	defer front.Close()
	_ = url
	c := connect(t, front.URL, nil)
	res, err := c.CallTool(context.Background(), "anything", nil)
	require.NoError(t, err)
	assert.Equal(t, "resumed", res.Text())
	assert.Equal(t, "ev-1", resumed.Load())
}

// lastID returns the JSON-RPC id of the last request the server saw.
func lastID(s *mcptest.Server) string {
	reqs := s.Requests()
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(reqs[len(reqs)-1].Body, &m)
	return string(m.ID)
}

func TestStatusAndBodyCombinations(t *testing.T) {
	for _, tc := range []struct {
		name   string
		handle func(w http.ResponseWriter, msg *jsonrpc.Message)
		check  func(t *testing.T, err error)
	}{
		{"202 where a response is due", func(w http.ResponseWriter, _ *jsonrpc.Message) {
			w.WriteHeader(http.StatusAccepted)
		}, func(t *testing.T, err error) { assert.ErrorIs(t, err, mcp.ErrProtocol) }},
		{"401 is authentication", func(w http.ResponseWriter, _ *jsonrpc.Message) {
			w.WriteHeader(http.StatusUnauthorized)
		}, func(t *testing.T, err error) { assert.ErrorIs(t, err, mcp.ErrAuth) }},
		{"403 is authentication", func(w http.ResponseWriter, _ *jsonrpc.Message) {
			w.WriteHeader(http.StatusForbidden)
		}, func(t *testing.T, err error) { assert.ErrorIs(t, err, mcp.ErrAuth) }},
		{"500 text body", func(w http.ResponseWriter, _ *jsonrpc.Message) {
			http.Error(w, "database on fire", http.StatusInternalServerError)
		}, func(t *testing.T, err error) {
			var h *mcp.HTTPError
			require.ErrorAs(t, err, &h)
			assert.Equal(t, 500, h.StatusCode)
			assert.Contains(t, h.Body, "database on fire")
		}},
		{"400 with a modern error body", func(w http.ResponseWriter, msg *jsonrpc.Message) {
			mcptest.WriteError(w, http.StatusBadRequest, msg.ID, mcp.CodeMissingCapability, "needs elicitation")
		}, func(t *testing.T, err error) {
			var rpc *mcp.RPCError
			require.ErrorAs(t, err, &rpc)
			assert.Equal(t, mcp.CodeMissingCapability, rpc.Code)
		}},
		{"200 with malformed JSON", func(w http.ResponseWriter, _ *jsonrpc.Message) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":`))
		}, func(t *testing.T, err error) { assert.ErrorIs(t, err, mcp.ErrProtocol) }},
		{"200 answering another id", func(w http.ResponseWriter, _ *jsonrpc.Message) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":999999,"result":{"content":[]}}`))
		}, func(t *testing.T, err error) { assert.ErrorIs(t, err, mcp.ErrProtocol) }},
		{"garbage SSE", func(w http.ResponseWriter, _ *jsonrpc.Message) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write([]byte("data: {not json\n\n"))
		}, func(t *testing.T, err error) { assert.ErrorIs(t, err, mcp.ErrProtocol) }},
		{"unknown content type", func(w http.ResponseWriter, _ *jsonrpc.Message) {
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte("<html>"))
		}, func(t *testing.T, err error) {
			var h *mcp.HTTPError
			assert.ErrorAs(t, err, &h)
		}},
		{"unknown resultType", func(w http.ResponseWriter, msg *jsonrpc.Message) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"task","content":[]}}`, msg.ID)
		}, func(t *testing.T, err error) { assert.ErrorIs(t, err, mcp.ErrProtocol) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &mcptest.Server{Versions: []string{mcptest.Modern}}
			s.Intercept = func(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) bool {
				if msg.Method != "tools/call" {
					return false
				}
				tc.handle(w, msg)
				return true
			}
			c := connect(t, mcptest.Start(t, s), nil)
			_, err := c.CallTool(context.Background(), "x", nil)
			require.Error(t, err)
			tc.check(t, err)
		})
	}
}

// A modern server that refuses the probe's version yet lists it as
// supported (the conformance suite's request-metadata scenario) gets the
// probe once more, and the client stays modern: no handshake.
func TestProbeRetriedWhenOurVersionIsListed(t *testing.T) {
	s := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{mcptest.EchoTool()}}
	var refused atomic.Bool
	s.Intercept = func(w http.ResponseWriter, _ *http.Request, msg *jsonrpc.Message) bool {
		if msg.Method != "server/discover" || !refused.CompareAndSwap(false, true) {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32022,"message":"unsupported","data":{"supported":["2026-07-28"],"requested":"2026-07-28"}}}`, msg.ID)
		return true
	}
	c := connect(t, mcptest.Start(t, s), nil)
	assert.Equal(t, mcp.EraModern, c.Era())
	assert.Equal(t, 2, s.Count("server/discover"), "the refused probe is sent once more")
	assert.Equal(t, 0, s.Count("initialize"))
}

func TestFallbackOnNonModernErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		handle func(w http.ResponseWriter, msg *jsonrpc.Message)
		offer  string // the version initialize offers
	}{
		{"400 -32000 not initialized", func(w http.ResponseWriter, _ *jsonrpc.Message) {
			mcptest.WriteError(w, http.StatusBadRequest, nil, -32000, "Bad Request: Server not initialized")
		}, mcp.Version20251125},
		{"400 empty body", func(w http.ResponseWriter, _ *jsonrpc.Message) { w.WriteHeader(http.StatusBadRequest) }, mcp.Version20251125},
		{"200 -32601", func(w http.ResponseWriter, msg *jsonrpc.Message) {
			mcptest.WriteError(w, http.StatusOK, msg.ID, mcp.CodeMethodNotFound, "unknown method")
		}, mcp.Version20251125},
		{"discover without our version", func(w http.ResponseWriter, msg *jsonrpc.Message) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"supportedVersions":["2025-11-25"],"capabilities":{}}}`, msg.ID)
		}, mcp.Version20251125},
		{"-32022 listing legacy versions", func(w http.ResponseWriter, msg *jsonrpc.Message) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32022,"message":"unsupported","data":{"supported":["2025-06-18"],"requested":"2026-07-28"}}}`, msg.ID)
		}, "2025-06-18"},
		{"200 code 0", func(w http.ResponseWriter, msg *jsonrpc.Message) {
			mcptest.WriteError(w, http.StatusOK, msg.ID, 0, "unknown method")
		}, mcp.Version20251125},
		{"400 text/plain", func(w http.ResponseWriter, _ *jsonrpc.Message) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, "Bad Request: unknown method")
		}, mcp.Version20251125},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &mcptest.Server{Versions: []string{mcptest.Legacy}, Tools: []mcptest.Tool{mcptest.EchoTool()}}
			s.Intercept = func(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) bool {
				if msg.Method != "server/discover" {
					return false
				}
				tc.handle(w, msg)
				return true
			}
			var mu sync.Mutex
			var traced []string
			ctx := mcp.WithTrace(context.Background(), &mcp.ClientTrace{RequestStart: func(ctx context.Context, info *mcp.RequestInfo) context.Context {
				mu.Lock()
				traced = append(traced, info.Method+" "+info.ProtocolVersion)
				mu.Unlock()
				return ctx
			}})
			c, err := mcp.Connect(ctx, &mcp.HTTPTransport{URL: mcptest.Start(t, s)}, nil)
			require.NoError(t, err)
			assert.Equal(t, mcp.EraLegacy, c.Era())
			_, err = c.ListTools(context.Background())
			require.NoError(t, err)
			// One probe, one handshake, one session: nothing is sent
			// again after the probe's answer, whatever it was.
			assert.Equal(t, 1, s.Count("server/discover"), "discover probes")
			assert.Equal(t, 1, s.Count("initialize"), "initialize requests")
			assert.Equal(t, 1, s.Count("notifications/initialized"), "initialized notifications")
			mu.Lock()
			assert.Equal(t, []string{"server/discover " + mcp.Version20260728, "initialize " + tc.offer}, traced)
			mu.Unlock()
			require.NoError(t, c.Close())
			assert.Equal(t, 1, s.Deletes(), "the one session ended")
		})
	}
}

func TestModernErrorOnDiscoverDoesNotFallBack(t *testing.T) {
	s := &mcptest.Server{Versions: []string{mcptest.Modern, mcptest.Legacy}}
	s.Intercept = func(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) bool {
		if msg.Method != "server/discover" {
			return false
		}
		mcptest.WriteError(w, http.StatusBadRequest, msg.ID, mcp.CodeHeaderMismatch, "header mismatch")
		return true
	}
	_, err := mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: mcptest.Start(t, s)}, nil)
	var rpc *mcp.RPCError
	require.ErrorAs(t, err, &rpc)
	assert.Equal(t, mcp.CodeHeaderMismatch, rpc.Code)
	for _, r := range s.Requests() {
		assert.NotEqual(t, "initialize", r.Method)
	}
}

func TestHeaderParams(t *testing.T) {
	s := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{
		{Def: json.RawMessage(`{"name":"geo","inputSchema":{"type":"object","properties":{
			"region":{"type":"string","x-mcp-header":"Region"},
			"n":{"type":"integer","x-mcp-header":"Count"},
			"dry":{"type":["boolean","null"],"x-mcp-header":"Dry"},
			"opts":{"type":"object","properties":{"tenant":{"type":"string","x-mcp-header":"Tenant"}}}}}}`),
			Call: func(context.Context, json.RawMessage, func(string, any)) (any, error) {
				return map[string]any{"content": []any{}}, nil
			}},
		{Def: json.RawMessage(`{"name":"bad","inputSchema":{"type":"object","properties":{"x":{"type":"number","x-mcp-header":"X"}}}}`)},
	}}
	var dropped []string
	c := connect(t, mcptest.Start(t, s), &mcp.Options{OnInvalidTool: func(name string, _ error) { dropped = append(dropped, name) }})
	tools, err := c.ListTools(context.Background())
	require.NoError(t, err)
	require.Len(t, tools, 1)
	assert.Equal(t, []string{"bad"}, dropped)

	_, err = c.CallTool(context.Background(), "geo", json.RawMessage(`{"region":"Hello, 世界","n":42,"dry":null,"opts":{"tenant":" padded"}}`))
	require.NoError(t, err)
	reqs := s.Requests()
	h := reqs[len(reqs)-1].Header
	assert.Equal(t, "geo", h.Get("Mcp-Name"))
	assert.Equal(t, "=?base64?SGVsbG8sIOS4lueVjA==?=", h.Get("Mcp-Param-Region"))
	assert.Equal(t, "42", h.Get("Mcp-Param-Count"))
	assert.Empty(t, h.Values("Mcp-Param-Dry"), "null value: header omitted")
	assert.Equal(t, "=?base64?IHBhZGRlZA==?=", h.Get("Mcp-Param-Tenant"))

	_, err = c.CallTool(context.Background(), "geo", json.RawMessage(`{"n":9007199254740993}`))
	require.Error(t, err, "integer outside the safe range fails locally")
	assert.Contains(t, err.Error(), "outside")
}

func TestOversizedMessage(t *testing.T) {
	for _, sse := range []bool{false, true} {
		t.Run(fmt.Sprint("sse=", sse), func(t *testing.T) {
			big := strings.Repeat("x", 4096)
			s := &mcptest.Server{Versions: []string{mcptest.Modern}, SSE: sse, Tools: []mcptest.Tool{{
				Def: json.RawMessage(`{"name":"big","inputSchema":{"type":"object"}}`),
				Call: func(context.Context, json.RawMessage, func(string, any)) (any, error) {
					return map[string]any{"content": []any{map[string]any{"type": "text", "text": big}}}, nil
				},
			}}}
			c := connect(t, mcptest.Start(t, s), &mcp.Options{MaxMessageSize: 1024})
			_, err := c.CallTool(context.Background(), "big", nil)
			require.ErrorIs(t, err, mcp.ErrTooLarge)
		})
	}
}

func TestCancelSlowCall(t *testing.T) {
	for _, era := range []string{mcptest.Modern, mcptest.Legacy} {
		t.Run(era, func(t *testing.T) {
			started := make(chan struct{})
			s := &mcptest.Server{Versions: []string{era}, SSE: true, Tools: []mcptest.Tool{{
				Def: json.RawMessage(`{"name":"slow","inputSchema":{"type":"object"}}`),
				Call: func(ctx context.Context, _ json.RawMessage, _ func(string, any)) (any, error) {
					close(started)
					<-ctx.Done()
					return nil, ctx.Err()
				},
			}}}
			c := connect(t, mcptest.Start(t, s), nil)
			ctx, cancel := context.WithCancel(context.Background())
			go func() { <-started; cancel() }()
			_, err := c.CallTool(ctx, "slow", nil)
			require.ErrorIs(t, err, context.Canceled)
			if era == mcptest.Legacy {
				var methods []string
				for _, r := range s.Requests() {
					methods = append(methods, r.Method)
				}
				assert.Contains(t, methods, "notifications/cancelled")
			}
		})
	}
}

// cutOnCancel answers every tools/call with an SSE stream that breaks, with
// no event id to resume from, the moment the request's context ends: what
// net/http does to a body when its request is cancelled. started receives
// each such call; the other requests go to the server.
func cutOnCancel(started chan<- struct{}) roundTripper {
	return func(req *http.Request) (*http.Response, error) {
		if req.Body == nil {
			return http.DefaultTransport.RoundTrip(req)
		}
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		if !bytes.Contains(body, []byte(`"tools/call"`)) {
			req.Body = io.NopCloser(bytes.NewReader(body))
			return http.DefaultTransport.RoundTrip(req)
		}
		started <- struct{}{}
		return &http.Response{
			StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header:  http.Header{"Content-Type": {"text/event-stream"}},
			Body:    io.NopCloser(cutReader{req.Context()}),
			Request: req,
		}, nil
	}
}

// cutReader blocks until ctx ends, then fails.
type cutReader struct{ ctx context.Context }

func (r cutReader) Read([]byte) (int, error) {
	<-r.ctx.Done()
	return 0, io.ErrUnexpectedEOF
}

// A legacy call whose stream breaks because its context ended is a
// cancelled call, never a broken stream: it returns the context's error
// and tells the server. The stream's end races the context's own
// propagation, so the test runs it many times.
func TestCancelRacesTheBrokenStream(t *testing.T) {
	s := &mcptest.Server{Versions: []string{mcptest.Legacy}, SSE: true}
	started := make(chan struct{})
	c, err := mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: mcptest.Start(t, s), HTTPClient: &http.Client{Transport: cutOnCancel(started)}}, nil)
	require.NoError(t, err)
	defer c.Close()
	const calls = 200
	for range calls {
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-started; cancel() }()
		_, err := c.CallTool(ctx, "slow", nil)
		require.ErrorIs(t, err, context.Canceled)
		require.NotErrorIs(t, err, mcp.ErrStreamBroken)
	}
	assert.Equal(t, calls, s.Count("notifications/cancelled"), "a cancellation sent for each call")
}

func TestAuthTokenFromEnvironment(t *testing.T) {
	const secret = "s3cr3t-token-value"
	t.Setenv("MINIME_TEST_TOKEN", secret)
	s := &mcptest.Server{Versions: []string{mcptest.Modern}}
	s.Intercept = func(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) bool {
		if r.Header.Get("X-Api-Key") != secret {
			http.Error(w, "bad key "+r.Header.Get("X-Api-Key"), http.StatusInternalServerError)
			return true
		}
		if msg.Method == "tools/call" {
			// An error body that echoes the key must not leak it.
			http.Error(w, "echo: "+secret, http.StatusInternalServerError)
			return true
		}
		return false
	}
	url := mcptest.Start(t, s)
	c, err := mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: url, TokenEnv: "MINIME_TEST_TOKEN", TokenHeader: "X-API-Key"}, nil)
	require.NoError(t, err)
	defer c.Close()
	_, err = c.CallTool(context.Background(), "x", nil)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), secret)

	_, err = mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: url, TokenEnv: "MINIME_TEST_UNSET_TOKEN"}, nil)
	require.ErrorIs(t, err, mcp.ErrMissingToken)
	assert.EqualError(t, err, "mcp: token missing: environment variable MINIME_TEST_UNSET_TOKEN is not set")
	// A variable set but empty is told apart from one not set.
	t.Setenv("MINIME_TEST_EMPTY_TOKEN", " ")
	_, err = mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: url, TokenEnv: "MINIME_TEST_EMPTY_TOKEN"}, nil)
	require.ErrorIs(t, err, mcp.ErrMissingToken)
	assert.EqualError(t, err, "mcp: token missing: environment variable MINIME_TEST_EMPTY_TOKEN is set but empty")
}

func TestTokenNotSentAcrossOrigins(t *testing.T) {
	const secret = "bearer-secret"
	t.Setenv("MINIME_TEST_BEARER", secret)
	var leaked atomic.Bool
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.Header.Get("Authorization"), secret) {
			leaked.Store(true)
		}
		w.WriteHeader(http.StatusNotFound)
	}))
	defer other.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()
	_, err := mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: redirector.URL, TokenEnv: "MINIME_TEST_BEARER"}, &mcp.Options{ConnectTimeout: 5 * time.Second})
	require.Error(t, err)
	assert.False(t, leaked.Load(), "token sent to another origin")
	assert.NotContains(t, err.Error(), secret)
}

func TestLegacyServerRequestsAnswered(t *testing.T) {
	// During a call the legacy server pings the client and asks for an
	// unsupported sampling; it gets {} and method-not-found.
	var answers sync.Map
	s := &mcptest.Server{Versions: []string{mcptest.Legacy}, SSE: true}
	s.Intercept = func(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) bool {
		if msg.Method == "" && len(msg.ID) > 0 { // a response from the client
			answers.Store(string(msg.ID), msg)
			w.WriteHeader(http.StatusAccepted)
			return true
		}
		if msg.Method != "tools/call" {
			return false
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\"method\":\"ping\"}\n\n")
		fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"srv-2\",\"method\":\"sampling/createMessage\",\"params\":{}}\n\n")
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[]}}\n\n", msg.ID)
		return true
	}
	c := connect(t, mcptest.Start(t, s), nil)
	_, err := c.CallTool(context.Background(), "x", nil)
	require.NoError(t, err)
	// The answers go out from their own goroutines, maybe after the call.
	require.Eventually(t, func() bool {
		_, ping := answers.Load(`"srv-1"`)
		_, sampling := answers.Load(`"srv-2"`)
		return ping && sampling
	}, 5*time.Second, time.Millisecond)
	ping, ok := answers.Load(`"srv-1"`)
	require.True(t, ok, "ping answered")
	assert.Nil(t, ping.(*jsonrpc.Message).Error)
	sampling, ok := answers.Load(`"srv-2"`)
	require.True(t, ok, "sampling answered")
	require.NotNil(t, sampling.(*jsonrpc.Message).Error)
	assert.Equal(t, mcp.CodeMethodNotFound, sampling.(*jsonrpc.Message).Error.Code)
}

func TestInputRequired(t *testing.T) {
	const round = `{"resultType":"input_required","requestState":"st\u00e9-1","inputRequests":{"who":{"method":"elicitation/create","params":{"message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"},"n":{"type":"integer","default":7}}}}}}}`
	// Without a handler: no capability offered, a clear error.
	c := connect(t, mcptest.Start(t, inputRoundServer(round)), nil)
	_, err := c.CallTool(context.Background(), "ask", nil)
	require.ErrorIs(t, err, mcp.ErrInputRequired)

	s := inputRoundServer(round)
	c = connect(t, mcptest.Start(t, s), &mcp.Options{Elicit: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		assert.Equal(t, "Name?", req.Message)
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
	}})
	res, err := c.CallTool(context.Background(), "ask", nil)
	require.NoError(t, err)
	var params struct {
		Meta           map[string]json.RawMessage `json:"_meta"`
		RequestState   json.RawMessage            `json:"requestState"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.Text()), &params))
	assert.Equal(t, `"st\u00e9-1"`, string(params.RequestState), "echoed byte for byte")
	assert.JSONEq(t, `{"action":"accept","content":{"name":"Ada","n":7}}`, string(params.InputResponses["who"]))
	assert.JSONEq(t, `{"elicitation":{"form":{}},"extensions":{"io.modelcontextprotocol/tasks":{}}}`, string(params.Meta["io.modelcontextprotocol/clientCapabilities"]))
	reqs := s.Requests()
	ids := map[string]bool{}
	for _, r := range reqs[len(reqs)-2:] {
		ids[lastIDOf(r.Body)] = true
	}
	assert.Len(t, ids, 2, "the retry uses a new id")
}

func lastIDOf(body []byte) string {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(body, &m)
	return string(m.ID)
}

func TestConcurrentCalls(t *testing.T) {
	for _, era := range []string{mcptest.Modern, mcptest.Legacy} {
		t.Run(era, func(t *testing.T) {
			s := &mcptest.Server{Versions: []string{era}, SSE: true, Tools: []mcptest.Tool{mcptest.EchoTool()}}
			c := connect(t, mcptest.Start(t, s), nil)
			var wg sync.WaitGroup
			errs := make(chan error, 50)
			for i := range 50 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					want := fmt.Sprint("msg-", i)
					res, err := c.CallTool(context.Background(), "echo", map[string]string{"text": want})
					if err == nil && res.Text() != want {
						err = fmt.Errorf("got %q, want %q", res.Text(), want)
					}
					errs <- err
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
		})
	}
}

func TestClosedClient(t *testing.T) {
	s := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{mcptest.EchoTool()}}
	c := connect(t, mcptest.Start(t, s), nil)
	require.NoError(t, c.Close())
	require.NoError(t, c.Close(), "idempotent")
	_, err := c.ListTools(context.Background())
	require.True(t, errors.Is(err, mcp.ErrClosed))
}

func TestUnreachableServer(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	_, err := mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: url}, &mcp.Options{ConnectTimeout: 2 * time.Second})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "connect")
}

func TestLegacyElicitationWhileStreamIsOpen(t *testing.T) {
	// The server asks for input on the call's stream and waits for the
	// answer before it responds: the request must reach the client while
	// the stream is still open.
	answered := make(chan json.RawMessage, 1)
	s := &mcptest.Server{Versions: []string{mcptest.Legacy}, SSE: true}
	s.Intercept = func(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) bool {
		if msg.Method == "" && len(msg.ID) > 0 {
			answered <- *msg.Result.(*json.RawMessage)
			w.WriteHeader(http.StatusAccepted)
			return true
		}
		if msg.Method != "tools/call" {
			return false
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"jsonrpc":"2.0","id":"e1","method":"elicitation/create","params":{"message":"Size?","requestedSchema":{"type":"object","properties":{"size":{"type":"integer","default":3}}}}}`+"\n\n")
		w.(http.Flusher).Flush()
		select {
		case res := <-answered:
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":%q}]}}\n\n", msg.ID, string(res))
		case <-r.Context().Done():
		}
		return true
	}
	c := connect(t, mcptest.Start(t, s), &mcp.Options{Elicit: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept"}, nil
	}})
	// A call stuck on its stream (the request not reaching the client)
	// ends at this deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, "ask", nil)
	require.NoError(t, err)
	assert.JSONEq(t, `{"action":"accept","content":{"size":3}}`, res.Text())
}

func TestInvalidHeaderAnnotationsDropTheTool(t *testing.T) {
	schemas := map[string]string{
		"ok_nested":        `{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"string","x-mcp-header":"B"}}}}}`,
		"ok_nullable":      `{"type":"object","properties":{"a":{"type":["integer","null"],"x-mcp-header":"A"}}}`,
		"ok_const_data":    `{"type":"object","properties":{"a":{"type":"string","const":{"x-mcp-header":"not a schema"}}}}`,
		"bad_empty":        `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}`,
		"bad_space":        `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"My Region"}}}`,
		"bad_colon":        `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A:B"}}}`,
		"bad_non_ascii":    `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Région"}}}`,
		"bad_control":      `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A\tB"}}}`,
		"bad_number":       `{"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}}}`,
		"bad_object":       `{"type":"object","properties":{"a":{"type":"object","x-mcp-header":"A"}}}`,
		"bad_array":        `{"type":"object","properties":{"a":{"type":"array","items":{"type":"string"},"x-mcp-header":"A"}}}`,
		"bad_null":         `{"type":"object","properties":{"a":{"type":"null","x-mcp-header":"A"}}}`,
		"bad_union":        `{"type":"object","properties":{"a":{"type":["string","integer"],"x-mcp-header":"A"}}}`,
		"bad_duplicate":    `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Dup"},"b":{"type":"string","x-mcp-header":"dup"}}}`,
		"bad_under_items":  `{"type":"object","properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}`,
		"bad_under_anyof":  `{"type":"object","properties":{"a":{"anyOf":[{"type":"string","x-mcp-header":"A"}]}}}`,
		"bad_under_ref":    `{"type":"object","$defs":{"s":{"type":"string","x-mcp-header":"A"}},"properties":{"a":{"$ref":"#/$defs/s"}}}`,
		"bad_on_root":      `{"type":"object","x-mcp-header":"Root"}`,
		"bad_not_a_string": `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":7}}}`,
	}
	s := &mcptest.Server{Versions: []string{mcptest.Modern}}
	for name, schema := range schemas {
		s.Tools = append(s.Tools, mcptest.Tool{Def: json.RawMessage(fmt.Sprintf(`{"name":%q,"inputSchema":%s}`, name, schema))})
	}
	dropped := map[string]string{}
	c := connect(t, mcptest.Start(t, s), &mcp.Options{OnInvalidTool: func(name string, err error) { dropped[name] = err.Error() }})
	tools, err := c.ListTools(context.Background())
	require.NoError(t, err)
	kept := map[string]bool{}
	for _, tool := range tools {
		kept[tool.Name] = true
	}
	for name := range schemas {
		if strings.HasPrefix(name, "ok_") {
			assert.True(t, kept[name], "%s kept", name)
			assert.NotContains(t, dropped, name)
		} else {
			assert.False(t, kept[name], "%s dropped", name)
			assert.Contains(t, dropped, name)
		}
	}
}

func TestLegacyServerKeepsToolsWithHeaderAnnotations(t *testing.T) {
	// x-mcp-header rules belong to the 2026-07-28 transport: a legacy
	// server's tools are not dropped over them.
	s := &mcptest.Server{Versions: []string{mcptest.Legacy}, Tools: []mcptest.Tool{
		{Def: json.RawMessage(`{"name":"t","inputSchema":{"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}}}}`)},
	}}
	c := connect(t, mcptest.Start(t, s), nil)
	tools, err := c.ListTools(context.Background())
	require.NoError(t, err)
	assert.Len(t, tools, 1)
}

func TestDeprecatedHTTPSSETransport(t *testing.T) {
	s := &mcptest.HTTPSSEServer{Tools: []mcptest.Tool{mcptest.EchoTool(), failTool()}}
	url := s.Start()
	defer s.Close()
	c, err := mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: url}, nil)
	require.NoError(t, err)
	defer c.Close()
	assert.Equal(t, mcp.EraLegacy, c.Era())
	assert.Equal(t, mcp.Version20241105, c.ProtocolVersion())
	assert.Equal(t, "mcptest-httpsse", c.ServerInfo().Name)
	tools, err := c.ListTools(context.Background())
	require.NoError(t, err)
	assert.Len(t, tools, 2)
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := c.CallTool(context.Background(), "echo", map[string]string{"text": fmt.Sprint(i)})
			if assert.NoError(t, err) {
				assert.Equal(t, fmt.Sprint(i), res.Text())
			}
		}()
	}
	wg.Wait()
	require.NoError(t, c.Close())
}

func TestModernListenStreamDeliversToolsChanged(t *testing.T) {
	s := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{mcptest.EchoTool()}}
	changed := make(chan struct{}, 4)
	c := connect(t, mcptest.Start(t, s), &mcp.Options{OnToolsChanged: func() { changed <- struct{}{} }})
	require.Eventually(t, func() bool { return s.Listeners() == 1 }, 5*time.Second, 10*time.Millisecond, "listen stream opened")
	for _, r := range s.Requests() {
		if r.Method == "subscriptions/listen" {
			assert.Equal(t, "subscriptions/listen", r.Header.Get("Mcp-Method"))
			assert.Contains(t, string(r.Body), `"toolsListChanged":true`)
		}
	}
	require.Equal(t, 1, s.NotifyToolsChanged())
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("tools/list_changed did not reach the callback")
	}
	// Calls are unaffected by the open stream.
	res, err := c.CallTool(context.Background(), "echo", map[string]string{"text": "still here"})
	require.NoError(t, err)
	assert.Equal(t, "still here", res.Text())
	require.NoError(t, c.Close())
	require.Eventually(t, func() bool { return s.Listeners() == 0 }, 5*time.Second, 10*time.Millisecond, "listen stream closed")
}

func TestHeaderMismatchRelistsAndRetries(t *testing.T) {
	// The server's tool gained an x-mcp-header after the client listed it;
	// the first call is refused with -32020, the retry carries the header.
	s := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{
		{Def: json.RawMessage(`{"name":"geo","inputSchema":{"type":"object","properties":{"region":{"type":"string"}}}}`)},
	}}
	s.Intercept = func(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) bool {
		if msg.Method != "tools/call" {
			return false
		}
		if r.Header.Get("Mcp-Param-Region") != "eu" {
			mcptest.WriteError(w, http.StatusBadRequest, msg.ID, mcp.CodeHeaderMismatch, "missing Mcp-Param-Region")
			return true
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"ok"}]}}`, msg.ID)
		return true
	}
	c := connect(t, mcptest.Start(t, s), nil)
	_, err := c.ListTools(context.Background())
	require.NoError(t, err)
	s.SetTools([]mcptest.Tool{
		{Def: json.RawMessage(`{"name":"geo","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}}`)},
	})
	res, err := c.CallTool(context.Background(), "geo", map[string]string{"region": "eu"})
	require.NoError(t, err)
	assert.Equal(t, "ok", res.Text())
}

func TestPinnedHTTPSSETransport(t *testing.T) {
	s := &mcptest.HTTPSSEServer{Tools: []mcptest.Tool{mcptest.EchoTool()}}
	url := s.Start()
	defer s.Close()
	c, err := mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: url, HTTPSSE: true}, nil)
	require.NoError(t, err)
	defer c.Close()
	assert.Equal(t, mcp.Version20241105, c.ProtocolVersion())
	res, err := c.CallTool(context.Background(), "echo", map[string]string{"text": "pinned"})
	require.NoError(t, err)
	assert.Equal(t, "pinned", res.Text())

	_, err = mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: url, HTTPSSE: true}, &mcp.Options{ProtocolVersion: mcp.Version20260728})
	require.Error(t, err, "the stateless revision has no HTTP+SSE transport")
}

// Over HTTP+SSE a request is delivered by its POST, which the server may
// act on before its 202 arrives: a call cancelled while the POST waits for
// it tells the server, as one cancelled while its answer is awaited does.
func TestHTTPSSECancelWhilePosting(t *testing.T) {
	s := &mcptest.HTTPSSEServer{Tools: []mcptest.Tool{mcptest.EchoTool()}}
	s.Start()
	defer s.Close()
	posted := make(chan struct{})
	var mu sync.Mutex
	var callID, cancelledID string
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			s.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				RequestID json.RawMessage `json:"requestId"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &m)
		switch m.Method {
		case "tools/call":
			// Received, and the 202 held back until the client gives up.
			mu.Lock()
			callID = string(m.ID)
			mu.Unlock()
			close(posted)
			<-r.Context().Done()
			return
		case "notifications/cancelled":
			mu.Lock()
			cancelledID = string(m.Params.RequestID)
			mu.Unlock()
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		s.ServeHTTP(w, r)
	}))
	defer front.Close()
	c, err := mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: front.URL + "/sse", HTTPSSE: true}, nil)
	require.NoError(t, err)
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-posted; cancel() }()
	_, err = c.CallTool(ctx, "echo", map[string]string{"text": "x"})
	require.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, mcp.ErrStreamBroken)
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, callID)
	assert.Equal(t, callID, cancelledID, "the server is told the call was cancelled")
}

func TestNotificationAnswered200(t *testing.T) {
	// A server that answers a notification with 200 and a body instead of
	// 202 still gets a working session.
	s := &mcptest.Server{Versions: []string{mcptest.Legacy}, Tools: []mcptest.Tool{mcptest.EchoTool()}}
	s.Intercept = func(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) bool {
		if msg.Method != "notifications/initialized" {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","result":{}}`))
		return true
	}
	c := connect(t, mcptest.Start(t, s), nil)
	res, err := c.CallTool(context.Background(), "echo", map[string]string{"text": "ok"})
	require.NoError(t, err)
	assert.Equal(t, "ok", res.Text())
}

// A reconnect that passes the version the first connection found skips
// detection: against a legacy server, no server/discover probe, just the
// handshake; against a modern one, discover stays the only request.
func TestReconnectWithKnownVersion(t *testing.T) {
	for _, version := range []string{mcptest.Legacy, mcptest.Modern} {
		t.Run(version, func(t *testing.T) {
			s := &mcptest.Server{Versions: []string{version}, Tools: []mcptest.Tool{mcptest.EchoTool()}}
			url := s.Start()
			defer s.Close()
			first, err := mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: url}, nil)
			require.NoError(t, err)
			known := first.ProtocolVersion()
			require.Equal(t, version, known)
			require.NoError(t, first.Close())
			before := len(s.Requests())
			assert.Equal(t, "server/discover", s.Requests()[0].Method, "the first connection detects")

			again, err := mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: url}, &mcp.Options{ProtocolVersion: known})
			require.NoError(t, err)
			defer again.Close()
			var methods []string
			for _, r := range s.Requests()[before:] {
				methods = append(methods, r.Method)
			}
			if version == mcptest.Legacy {
				assert.Equal(t, []string{"initialize", "notifications/initialized"}, methods)
			} else {
				assert.Equal(t, []string{"server/discover"}, methods)
			}
			assert.Equal(t, version, again.ProtocolVersion())
			_, err = again.CallTool(context.Background(), "echo", map[string]string{"text": "hi"})
			require.NoError(t, err)
		})
	}
}

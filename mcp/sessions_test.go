package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/internal/jsonrpc"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

// counterTool counts its runs; it has no safety hints.
func counterTool(runs *atomic.Int32) mcptest.Tool {
	return mcptest.Tool{
		Def: json.RawMessage(`{"name":"count","inputSchema":{"type":"object"}}`),
		Call: func(context.Context, json.RawMessage, func(string, any)) (any, error) {
			n := runs.Add(1)
			return map[string]any{"content": []any{map[string]any{"type": "text", "text": fmt.Sprint(n)}}}, nil
		},
	}
}

// A legacy server that ran a call and then lost the session answers 404:
// the call is not replayed (it ran), the caller gets ErrSessionExpired, and
// the next call works on the new session.
func TestSessionLostAfterTheCallRanIsNotReplayed(t *testing.T) {
	var runs atomic.Int32
	s := &mcptest.Server{Versions: []string{mcptest.Legacy}, Tools: []mcptest.Tool{counterTool(&runs)}}
	var lose atomic.Bool
	lose.Store(true)
	s.Intercept = func(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) bool {
		if msg.Method != "tools/call" || !lose.Swap(false) {
			return false
		}
		runs.Add(1) // it ran...
		s.ExpireSessions()
		mcptest.WriteError(w, http.StatusNotFound, nil, -32001, "Session not found") // ...then the session was lost
		return true
	}
	c := connect(t, mcptest.Start(t, s), &mcp.Options{TrustToolHints: true})
	_, err := c.CallTool(context.Background(), "count", nil)
	require.ErrorIs(t, err, mcp.ErrSessionExpired)
	assert.Equal(t, int32(1), runs.Load(), "not run twice")
	res, err := c.CallTool(context.Background(), "count", nil)
	require.NoError(t, err)
	assert.Equal(t, "2", res.Text())
	assert.Equal(t, 2, s.Count("initialize"))
}

// A modern response stream that breaks re-issues a tool trusted to be
// read-only even when the host never listed the tools on that Client.
func TestTrustToolHintsWithoutListing(t *testing.T) {
	var calls atomic.Int32
	s := &mcptest.Server{Versions: []string{mcptest.Modern}, SSE: true, Tools: []mcptest.Tool{mcptest.EchoTool()}}
	s.Intercept = func(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) bool {
		if msg.Method != "tools/call" || calls.Add(1) > 1 {
			return false
		}
		w.Header().Set("Content-Type", "text/event-stream")
		return true // the stream ends with no response
	}
	c := connect(t, mcptest.Start(t, s), &mcp.Options{TrustToolHints: true})
	res, err := c.CallTool(context.Background(), "echo", map[string]string{"text": "x"})
	require.NoError(t, err)
	assert.Equal(t, "x", res.Text())
	assert.Equal(t, int32(2), calls.Load())
}

// Servers that answer an unknown session with 400 (server-everything after
// a restart) lose the session once; the client starts a new one.
func TestSessionUnknownAnswered400(t *testing.T) {
	s := &mcptest.Server{Versions: []string{mcptest.Legacy}, Tools: []mcptest.Tool{mcptest.EchoTool()}}
	var restarted atomic.Bool
	s.Intercept = func(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) bool {
		if msg.Method == "initialize" {
			restarted.Store(false)
			return false
		}
		if !restarted.Load() || r.Header.Get("Mcp-Session-Id") == "" {
			return false
		}
		mcptest.WriteError(w, http.StatusBadRequest, nil, -32000, "Bad Request: No valid session ID provided")
		return true
	}
	c := connect(t, mcptest.Start(t, s), nil)
	restarted.Store(true)
	tools, err := c.ListTools(context.Background())
	require.NoError(t, err, "a listing is safe to send again")
	assert.Len(t, tools, 1)
	assert.Equal(t, 2, s.Count("initialize"))

	// A 400 that says nothing of the session stays an HTTP error.
	s.Intercept = func(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) bool {
		if msg.Method != "tools/list" {
			return false
		}
		mcptest.WriteError(w, http.StatusBadRequest, msg.ID, mcp.CodeInvalidParams, "bad cursor")
		return true
	}
	_, err = c.ListTools(context.Background())
	var rpc *mcp.RPCError
	require.ErrorAs(t, err, &rpc)
	assert.Equal(t, 2, s.Count("initialize"))
}

// A 404 on notifications/initialized is a session lost during the
// handshake: one new session, then ErrSessionExpired; never the HTTP+SSE
// fallback.
func TestNotFoundOnInitialized(t *testing.T) {
	for _, always := range []bool{false, true} {
		t.Run(fmt.Sprint("always=", always), func(t *testing.T) {
			s := &mcptest.Server{Versions: []string{mcptest.Legacy}, Tools: []mcptest.Tool{mcptest.EchoTool()}}
			var lost atomic.Int32
			s.Intercept = func(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) bool {
				if msg.Method != "notifications/initialized" || (!always && lost.Load() > 0) {
					return false
				}
				lost.Add(1)
				s.ExpireSessions()
				w.WriteHeader(http.StatusNotFound)
				return true
			}
			url := mcptest.Start(t, s)
			c, err := mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: url}, nil)
			if always {
				require.ErrorIs(t, err, mcp.ErrSessionExpired)
				assert.Equal(t, int32(2), lost.Load(), "one new session, no more")
				return
			}
			require.NoError(t, err)
			defer c.Close()
			assert.Equal(t, mcp.EraLegacy, c.Era())
			assert.Equal(t, 2, s.Count("initialize"))
			_, err = c.CallTool(context.Background(), "echo", map[string]string{"text": "ok"})
			require.NoError(t, err)
		})
	}
}

// A server whose server/discover succeeds but whose requests then answer
// -32022 listing only legacy versions is spoken to in the legacy era from
// then on, after one initialize.
func TestUnsupportedVersionAfterDiscoverFallsBack(t *testing.T) {
	s := &mcptest.Server{Versions: []string{mcptest.Modern, mcptest.Legacy}, Tools: []mcptest.Tool{mcptest.EchoTool()}}
	s.Intercept = func(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) bool {
		if msg.Method == "server/discover" || r.Header.Get("Mcp-Protocol-Version") != mcptest.Modern {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32022,"message":"unsupported","data":{"supported":["2025-11-25"],"requested":"2026-07-28"}}}`, msg.ID)
		return true
	}
	c := connect(t, mcptest.Start(t, s), nil)
	require.Equal(t, mcp.EraModern, c.Era())
	for range 2 {
		tools, err := c.ListTools(context.Background())
		require.NoError(t, err)
		assert.Len(t, tools, 1)
	}
	assert.Equal(t, mcp.EraLegacy, c.Era())
	assert.Equal(t, mcptest.Legacy, c.ProtocolVersion())
	assert.Equal(t, 1, s.Count("initialize"), "fell back once, stayed legacy")
}

// roundTripper is an http.RoundTripper in a function.
type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A fall back to legacy ends the modern listen stream the server had
// accepted, and the legacy session opens its GET stream in its place.
func TestFallBackEndsTheModernListenStream(t *testing.T) {
	s := &mcptest.Server{Versions: []string{mcptest.Modern, mcptest.Legacy}, Tools: []mcptest.Tool{mcptest.EchoTool()}}
	listenEnded, getOpened := make(chan struct{}), make(chan struct{}, 4)
	s.Intercept = func(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) bool {
		if msg.Method == "server/discover" || r.Header.Get("Mcp-Protocol-Version") != mcptest.Modern {
			return false
		}
		if msg.Method == "subscriptions/listen" { // accepted, and held open
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/subscriptions/acknowledged\",\"params\":{}}\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			close(listenEnded)
			return true
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32022,"message":"unsupported","data":{"supported":["2025-11-25"],"requested":"2026-07-28"}}}`, msg.ID)
		return true
	}
	// mcptest has no GET stream (405): the client's attempt is what counts.
	gets := roundTripper(func(r *http.Request) (*http.Response, error) {
		if r.Method == http.MethodGet {
			getOpened <- struct{}{}
		}
		return http.DefaultTransport.RoundTrip(r)
	})
	c, err := mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: mcptest.Start(t, s), HTTPClient: &http.Client{Transport: gets}}, &mcp.Options{OnToolsChanged: func() {}})
	require.NoError(t, err)
	defer c.Close()
	require.Equal(t, mcp.EraModern, c.Era())
	_, err = c.ListTools(context.Background())
	require.NoError(t, err)
	require.Equal(t, mcp.EraLegacy, c.Era())
	for name, ch := range map[string]<-chan struct{}{"the modern listen stream ended": listenEnded, "the legacy GET stream opened": getOpened} {
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
			t.Fatalf("after the fall back, not so: %s", name)
		}
	}
}

// A tool that changes after the first listing but before the server
// acknowledged subscriptions/listen is noticed: the acknowledgement makes
// the client re-fetch.
func TestToolChangeBeforeListenAcknowledged(t *testing.T) {
	s := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{mcptest.EchoTool()}}
	listed := make(chan struct{})
	s.Intercept = func(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) bool {
		switch msg.Method {
		case "tools/list":
			select {
			case <-listed:
				return false
			default:
			}
			// The first listing is answered with the tools before the
			// change, and only then is the change made.
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[%s]}}`, msg.ID, mcptest.EchoTool().Def)
			close(listed)
			return true
		case "subscriptions/listen":
			select {
			case <-listed:
			case <-r.Context().Done():
				return true
			}
			s.SetTools([]mcptest.Tool{mcptest.EchoTool(), failTool()}) // in the window
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/subscriptions/acknowledged\",\"params\":{}}\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return true
		}
		return false
	}
	changed := make(chan struct{}, 4)
	c := connect(t, mcptest.Start(t, s), &mcp.Options{OnToolsChanged: func() { changed <- struct{}{} }})
	tools, err := c.ListTools(context.Background()) // before the acknowledgement
	require.NoError(t, err)
	require.Len(t, tools, 1)
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("the change before the acknowledgement went unnoticed")
	}
	tools, err = c.ListTools(context.Background())
	require.NoError(t, err)
	assert.Len(t, tools, 2)
}

// Arguments that are only white space are refused with an error, never a
// panic, by the Client and the Toolset alike.
func TestWhitespaceArguments(t *testing.T) {
	s := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{mcptest.EchoTool()}}
	url := mcptest.Start(t, s)
	c := connect(t, url, nil)
	for _, args := range []any{json.RawMessage(" "), []byte("\t\n"), json.RawMessage("[1]")} {
		_, err := c.CallTool(context.Background(), "echo", args)
		assert.ErrorContains(t, err, "arguments must be a JSON object")
	}
	ts, err := toolset.Discover(context.Background(), []config.Server{{Name: "e", URL: url}}, nil)
	require.NoError(t, err)
	defer ts.Close()
	_, err = ts.Call(context.Background(), "e_echo", json.RawMessage(" "))
	assert.ErrorContains(t, err, "arguments must be a JSON object")
	assert.Equal(t, 0, s.Count("tools/call"), "nothing was sent")
}

package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
)

// floodTool sends n progress notifications, then answers "done".
func floodTool(s *mcptest.Server, n int) mcptest.Tool {
	return mcptest.Tool{
		Def: json.RawMessage(`{"name":"flood","inputSchema":{"type":"object"}}`),
		Call: func(_ context.Context, _ json.RawMessage, send func(string, any)) (any, error) {
			tok := s.LastProgressToken()
			for i := 1; i <= n; i++ {
				send("notifications/progress", map[string]any{"progressToken": tok, "progress": i, "total": n})
			}
			return map[string]any{"content": []any{map[string]any{"type": "text", "text": "done"}}}, nil
		},
	}
}

// A callback that blocks holds up no call, over Streamable HTTP in either
// era: the call gets its result, later notifications are dropped, and the
// callback is released at the end.
func TestBlockedCallbackDoesNotStallCall(t *testing.T) {
	for _, v := range []string{mcptest.Modern, mcptest.Legacy} {
		t.Run(v, func(t *testing.T) {
			s := &mcptest.Server{Versions: []string{v}, SSE: true}
			s.Tools = []mcptest.Tool{floodTool(s, 2000)}
			release := make(chan struct{})
			var calls atomic.Int32
			c := connect(t, mcptest.Start(t, s), &mcp.Options{OnProgress: func(mcp.Progress) {
				calls.Add(1)
				<-release
			}})
			defer close(release) // before the Close of the cleanup
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			res, err := c.CallTool(ctx, "flood", nil)
			require.NoError(t, err)
			assert.Equal(t, "done", res.Text())
			// Delivered off the reader: the first callback may start after
			// the call returned. Once it has, it blocks, so the count stays.
			require.Eventually(t, func() bool { return calls.Load() > 0 }, 10*time.Second, time.Millisecond, "the callback was reached")
			assert.Equal(t, int32(1), calls.Load(), "the blocked callback was called once, nothing ran beside it")
		})
	}
}

// A callback that blocks does not make a call ignore its deadline: the
// call whose response never comes ends when its context does.
func TestBlockedCallbackKeepsTheDeadline(t *testing.T) {
	s := &mcptest.Server{Versions: []string{mcptest.Modern}, SSE: true}
	s.Tools = []mcptest.Tool{{
		Def: json.RawMessage(`{"name":"hang","inputSchema":{"type":"object"}}`),
		Call: func(ctx context.Context, _ json.RawMessage, send func(string, any)) (any, error) {
			send("notifications/message", map[string]any{"level": "info", "data": "started"})
			<-ctx.Done() // the client leaving ends it
			return nil, ctx.Err()
		},
	}}
	release := make(chan struct{})
	logged := make(chan struct{}, 1)
	c := connect(t, mcptest.Start(t, s), &mcp.Options{OnLog: func(mcp.LogMessage) {
		logged <- struct{}{}
		<-release
	}})
	defer close(release)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctx, "hang", nil)
		errc <- err
	}()
	<-logged // the callback now blocks
	cancel()
	select {
	case err := <-errc:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("the call ignored its context while a callback blocked")
	}
}

// Close returns in bounded time while a handler of a server request, sent
// on the legacy GET stream, ignores its context.
func TestCloseWhileHandlerIgnoresContext(t *testing.T) {
	s := &mcptest.Server{Versions: []string{mcptest.Legacy}}
	inner := s.Start()
	defer s.Close()
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			r.URL.Path = "/mcp"
			rp, _ := http.NewRequestWithContext(r.Context(), r.Method, inner, r.Body)
			rp.Header = r.Header
			resp, err := http.DefaultClient.Do(rp)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			defer resp.Body.Close()
			for k, v := range resp.Header {
				w.Header()[k] = v
			}
			w.WriteHeader(resp.StatusCode)
			buf := make([]byte, 32<<10)
			n, _ := resp.Body.Read(buf)
			_, _ = w.Write(buf[:n])
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"e1\",\"method\":\"elicitation/create\",\"params\":{\"message\":\"ok?\",\"requestedSchema\":{\"type\":\"object\",\"properties\":{}}}}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer proxy.Close()
	asked := make(chan struct{})
	release := make(chan struct{})
	c, err := mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: proxy.URL}, &mcp.Options{
		Elicit: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			close(asked)
			<-release // ignores its context
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	})
	require.NoError(t, err)
	<-asked
	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close blocked behind a handler that ignores its context")
	}
	close(release)
}

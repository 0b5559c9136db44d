package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/internal/jsonrpc"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
)

// Each way a request can fail to be answered has a sentinel a caller can
// branch on.
func TestFailureSentinels(t *testing.T) {
	t.Run("refused", func(t *testing.T) {
		_, err := mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: mcptest.ClosedURL(t)}, nil)
		require.ErrorIs(t, err, mcp.ErrUnreachable)
		assert.NotErrorIs(t, err, mcp.ErrStreamBroken)
		// Once the package's prefix: "mcp: server/discover: server
		// unreachable: Post ...", not "mcp: server/discover: mcp: ...".
		assert.Equal(t, 1, strings.Count(err.Error(), "mcp:"), "%v", err)
		assert.True(t, strings.HasPrefix(err.Error(), "mcp: server/discover: server unreachable: "), "%v", err)
	})
	t.Run("unknown command", func(t *testing.T) {
		_, err := mcp.Connect(context.Background(), &mcp.CommandTransport{Command: "/nonexistent/mini-me-server"}, nil)
		require.ErrorIs(t, err, mcp.ErrUnreachable)
	})
	t.Run("cut before the answer", func(t *testing.T) {
		s := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{mcptest.EchoTool()}}
		s.Intercept = func(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) bool {
			if msg.Method != "tools/call" {
				return false
			}
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.Close() // no status line at all
			}
			return true
		}
		c := connect(t, mcptest.Start(t, s), nil)
		_, err := c.CallTool(context.Background(), "echo", map[string]string{"text": "x"})
		require.ErrorIs(t, err, mcp.ErrStreamBroken)
		assert.NotErrorIs(t, err, mcp.ErrUnreachable)
	})
	t.Run("JSON cut by EOF", func(t *testing.T) {
		s := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{mcptest.EchoTool()}}
		s.Intercept = func(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) bool {
			if msg.Method != "tools/call" {
				return false
			}
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "100")
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":`))
			return true // shorter than announced
		}
		c := connect(t, mcptest.Start(t, s), nil)
		_, err := c.CallTool(context.Background(), "echo", map[string]string{"text": "x"})
		require.ErrorIs(t, err, mcp.ErrStreamBroken)
	})
	t.Run("wrong content type on 200", func(t *testing.T) {
		s := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{mcptest.EchoTool()}}
		s.Intercept = func(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) bool {
			if msg.Method != "tools/call" {
				return false
			}
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte("<html>login</html>"))
			return true
		}
		c := connect(t, mcptest.Start(t, s), nil)
		_, err := c.CallTool(context.Background(), "echo", map[string]string{"text": "x"})
		require.ErrorIs(t, err, mcp.ErrProtocol)
		var herr *mcp.HTTPError
		require.ErrorAs(t, err, &herr)
		assert.Equal(t, "text/html", herr.ContentType)
	})
	t.Run("process exited", func(t *testing.T) {
		sh, err := exec.LookPath("sh")
		require.NoError(t, err)
		_, err = mcp.Connect(context.Background(), &mcp.CommandTransport{Command: sh, Args: []string{"-c", "exit 3"}}, nil)
		require.ErrorIs(t, err, mcp.ErrStreamBroken)
		var exit *mcp.ExitError
		require.ErrorAs(t, err, &exit)
		assert.Equal(t, 3, exit.Code)
	})
}

// Redacting the token from an error's text keeps what errors.Is finds.
func TestRedactionKeepsErrorsIs(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := strings.TrimPrefix(srv.URL, "http://")
	srv.Close()
	// A token that the dial error quotes: the address itself.
	t.Setenv("MINIME_TEST_TOKEN", addr)
	_, err := mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: srv.URL, TokenEnv: "MINIME_TEST_TOKEN"}, nil)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), addr)
	assert.Contains(t, err.Error(), "[redacted]")
	assert.ErrorIs(t, err, mcp.ErrUnreachable)
}

//go:build unix

package mcp_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
)

// serveUnix serves h on a unix socket of t's and returns its path.
func serveUnix(t *testing.T, h http.Handler) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "mcp.sock")
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	srv := &http.Server{Handler: h}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	t.Cleanup(func() {
		_ = srv.Close()
		require.ErrorIs(t, <-done, http.ErrServerClosed)
	})
	return sock
}

func TestUnixSocket(t *testing.T) {
	for _, tc := range []struct {
		name     string
		versions []string
		sse      bool
		era      mcp.Era
	}{
		{"modern", []string{mcptest.Modern}, false, mcp.EraModern},
		{"legacy sse", []string{mcptest.Legacy}, true, mcp.EraLegacy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &mcptest.Server{Versions: tc.versions, SSE: tc.sse, Tools: []mcptest.Tool{mcptest.EchoTool()}}
			s.Start() // its state; it is served on the socket below, not on its port
			defer s.Close()
			mux := http.NewServeMux()
			mux.Handle("/mcp", s)
			sock := serveUnix(t, mux)
			c, err := mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: "unix://" + sock + ":/mcp"}, nil)
			require.NoError(t, err)
			defer c.Close()
			assert.Equal(t, tc.era, c.Era())
			res, err := c.CallTool(context.Background(), "echo", map[string]string{"text": "over the socket"})
			require.NoError(t, err)
			assert.Equal(t, "over the socket", res.Text())
			assert.NotEmpty(t, s.Requests(), "served at /mcp")
		})
	}
	t.Run("no path means /", func(t *testing.T) {
		s := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{mcptest.EchoTool()}}
		mux := http.NewServeMux()
		mux.Handle("/{$}", s)
		c, err := mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: "unix://" + serveUnix(t, mux)}, nil)
		require.NoError(t, err)
		require.NoError(t, c.Close())
	})
	t.Run("bad", func(t *testing.T) {
		for _, u := range []string{"unix://host/x.sock", "unix:relative.sock"} {
			_, err := mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: u}, nil)
			assert.ErrorContains(t, err, "unix:///absolute/path.sock", u)
		}
		_, err := mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: "unix:///x.sock",
			HTTPClient: &http.Client{Transport: otherRoundTripper{}}}, nil)
		assert.ErrorContains(t, err, "*http.Transport")
		_, err = mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: "unix://" + filepath.Join(t.TempDir(), "none.sock")}, nil)
		assert.True(t, errors.Is(err, mcp.ErrUnreachable), "%v", err)
	})
}

// otherRoundTripper is a RoundTripper that is not an *http.Transport.
type otherRoundTripper struct{}

func (otherRoundTripper) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("not used")
}

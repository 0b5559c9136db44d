package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/oauth"
)

const challengeHeader = `Bearer error="invalid_token", resource_metadata="https://rs.example/.well-known/oauth-protected-resource/mcp", scope="mcp:read"`

// gate answers 401 with challengeHeader to the requests refuse selects
// unless they carry "Bearer good", and passes everything else to next.
func gate(next http.Handler, refuse func(method, rpc string) bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct{ Method string }
		_ = json.Unmarshal(body, &msg)
		if refuse(r.Method, msg.Method) && r.Header.Get("Authorization") != "Bearer good" {
			w.Header().Set("WWW-Authenticate", challengeHeader)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// renewing is a Credentials that has no token until challenged once.
type renewing struct {
	mu         sync.Mutex
	tok        string
	challenged atomic.Int32
	status     int
	code       string
}

func (c *renewing) Token(context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tok, nil
}

func (c *renewing) Challenged(_ context.Context, status int, ch []oauth.Challenge, _ string) error {
	c.challenged.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tok, c.status = "good", status
	if len(ch) > 0 {
		c.code = ch[0].Param("error")
	}
	return nil
}

// authKinds are the request kinds a server may refuse, each with how to
// reach it and the Method its AuthError names.
var authKinds = []struct {
	name   string
	sse    bool // the deprecated HTTP+SSE transport
	refuse func(method, rpc string) bool
	run    func(ctx context.Context, tr *mcp.HTTPTransport) error
	method string
}{
	{"POST call", false, func(_, rpc string) bool { return rpc == "tools/call" }, connectAndCall, "tools/call"},
	{"notification", false, func(_, rpc string) bool { return rpc == "notifications/initialized" }, connectAndCall, "notification"},
	{"DELETE", false, func(m, _ string) bool { return m == http.MethodDelete }, connectAndCall, "DELETE"},
	{"HTTP+SSE GET", true, func(m, _ string) bool { return m == http.MethodGet }, connectAndCall, "GET"},
	{"HTTP+SSE POST", true, func(m, rpc string) bool { return m == http.MethodPost && rpc == "tools/call" }, connectAndCall, "POST"},
}

func connectAndCall(ctx context.Context, tr *mcp.HTTPTransport) error {
	c, err := mcp.Connect(ctx, tr, nil)
	if err != nil {
		return err
	}
	_, err = c.CallTool(ctx, "echo", map[string]any{"text": "hi"})
	return errors.Join(err, c.Close())
}

func authServer(t *testing.T, sse bool, refuse func(method, rpc string) bool) string {
	t.Helper()
	var h http.Handler
	if sse {
		s := &mcptest.HTTPSSEServer{Tools: []mcptest.Tool{mcptest.EchoTool()}}
		s.Start()
		t.Cleanup(s.Close)
		h = s
	} else {
		s := &mcptest.Server{Versions: []string{mcptest.Legacy}, Tools: []mcptest.Tool{mcptest.EchoTool()}}
		s.Start()
		t.Cleanup(s.Close)
		h = s
	}
	srv := httptest.NewServer(gate(h, refuse))
	t.Cleanup(srv.Close)
	if sse {
		return srv.URL + "/sse"
	}
	return srv.URL + "/mcp"
}

// Every kind of request maps 401 to the same *AuthError, challenge parsed.
func TestAuthErrorEveryRequest(t *testing.T) {
	for _, k := range authKinds {
		t.Run(k.name, func(t *testing.T) {
			u := authServer(t, k.sse, k.refuse)
			t.Setenv("AUTH_TEST_TOKEN", "wrong")
			err := k.run(context.Background(), &mcp.HTTPTransport{URL: u, HTTPSSE: k.sse, TokenEnv: "AUTH_TEST_TOKEN"})
			require.ErrorIs(t, err, mcp.ErrAuth)
			var ae *mcp.AuthError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, k.method, ae.Method)
			assert.Equal(t, http.StatusUnauthorized, ae.StatusCode)
			assert.Equal(t, "Bearer", ae.Scheme)
			assert.Equal(t, "invalid_token", ae.Code)
			assert.Equal(t, "mcp:read", ae.Scope)
			assert.Equal(t, "https://rs.example/.well-known/oauth-protected-resource/mcp", ae.ResourceMetadata)
			assert.NotContains(t, err.Error(), "wrong")
		})
	}
}

// Every kind of request hands a 401 to the Credentials, then goes through.
func TestCredentialsRenewEveryRequest(t *testing.T) {
	for _, k := range authKinds {
		t.Run(k.name, func(t *testing.T) {
			u := authServer(t, k.sse, k.refuse)
			creds := &renewing{}
			require.NoError(t, k.run(context.Background(), &mcp.HTTPTransport{URL: u, HTTPSSE: k.sse, Credentials: creds}))
			assert.Equal(t, int32(1), creds.challenged.Load())
			assert.Equal(t, http.StatusUnauthorized, creds.status)
			assert.Equal(t, "invalid_token", creds.code)
		})
	}
}

// refusing is a Credentials that cannot renew anything.
type refusing struct{ calls atomic.Int32 }

func (*refusing) Token(context.Context) (string, error) { return "stale", nil }
func (r *refusing) Challenged(context.Context, int, []oauth.Challenge, string) error {
	r.calls.Add(1)
	return oauth.ErrInsufficientScope
}

func TestCredentialsErrorInsideAuthError(t *testing.T) {
	u := authServer(t, false, func(_, rpc string) bool { return rpc == "tools/call" })
	creds := &refusing{}
	err := connectAndCall(context.Background(), &mcp.HTTPTransport{URL: u, Credentials: creds})
	require.ErrorIs(t, err, mcp.ErrAuth)
	require.ErrorIs(t, err, oauth.ErrInsufficientScope)
	assert.Equal(t, int32(1), creds.calls.Load())
	assert.NotContains(t, err.Error(), "stale")
}

// A redirect off the configured origin never carries the token: not to
// another host, and not to another port of the same host, where Go's
// http.Client would keep Authorization.
func TestTokenNotRedirected(t *testing.T) {
	var seen atomic.Value
	seen.Store("")
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Store(r.Header.Get("Authorization") + r.Header.Get("X-Api-Key"))
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer other.Close()
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	defer first.Close()
	require.NotEqual(t, first.Listener.Addr().String(), other.Listener.Addr().String())
	require.True(t, strings.HasPrefix(other.URL, "http://127.0.0.1:"), "both on 127.0.0.1, ports apart")

	t.Setenv("REDIRECT_TEST_TOKEN", "sentinel-token")
	for _, tr := range []*mcp.HTTPTransport{
		{URL: first.URL + "/mcp", TokenEnv: "REDIRECT_TEST_TOKEN"},
		{URL: first.URL + "/mcp", TokenEnv: "REDIRECT_TEST_TOKEN", TokenHeader: "X-Api-Key"},
		{URL: first.URL + "/mcp", Credentials: &fixedToken{"sentinel-token"}},
	} {
		seen.Store("unset")
		_, err := mcp.Connect(context.Background(), tr, nil)
		require.Error(t, err)
		assert.Equal(t, "", seen.Load(), "the token followed a 307 to another port")
		assert.NotContains(t, err.Error(), "sentinel-token")
	}
}

type fixedToken struct{ tok string }

func (f *fixedToken) Token(context.Context) (string, error) { return f.tok, nil }
func (f *fixedToken) Challenged(context.Context, int, []oauth.Challenge, string) error {
	return errors.New("no renewal")
}

// optimist claims every challenge fixed, and is wrong.
type optimist struct{ calls atomic.Int32 }

func (*optimist) Token(context.Context) (string, error) { return "never-good", nil }
func (o *optimist) Challenged(context.Context, int, []oauth.Challenge, string) error {
	o.calls.Add(1)
	return nil
}

// A request is sent again at most twice after a 401 or 403, whatever the
// Credentials say; a 403's challenge reaches the caller parsed.
func TestAuthRetriesBounded(t *testing.T) {
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="mcp:write"`)
		w.WriteHeader(http.StatusForbidden)
	}))
	defer srv.Close()
	creds := &optimist{}
	_, err := mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: srv.URL, Credentials: creds}, nil)
	var ae *mcp.AuthError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, http.StatusForbidden, ae.StatusCode)
	assert.Equal(t, "insufficient_scope", ae.Code)
	assert.Equal(t, "mcp:write", ae.Scope)
	assert.Equal(t, int32(2), creds.calls.Load(), "challenges handed to the credentials")
	assert.Equal(t, int32(3), posts.Load(), "the probe and its two retries, then nothing")
	require.Error(t, ae.Err, "the AuthError of credentials that could not fix it says so")
	assert.Contains(t, ae.Err.Error(), "3 times")
}

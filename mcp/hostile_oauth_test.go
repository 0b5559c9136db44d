package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/internal/oauthtest"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/oauth"
)

// An MCP server that turns hostile (compromised, or spoofed at the same
// address) and names an authorization server of its own in its resource
// metadata gets no machine credential: the client secret is bound to its
// issuer (oauth.Config.Issuer), the connection fails with an
// *oauth.IssuerBindingError, and the hostile authorization server's own
// records show no token request.
func TestHostileServerGetsNoMachineSecret(t *testing.T) {
	const secret = "machine-secret-" + oauthtest.Sentinel
	real := &oauthtest.Server{ClientID: "nightly", ClientSecret: secret}
	real.Start()
	t.Cleanup(real.Close)
	evil := &oauthtest.Server{ClientID: "nightly", ClientSecret: secret} // would accept it, and count it
	evil.Start()
	t.Cleanup(evil.Close)
	inner := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{mcptest.EchoTool()}}
	inner.Start()
	t.Cleanup(inner.Close)

	var hostile atomic.Bool
	prm := map[bool]http.Handler{false: oauthtest.ResourceMetadata(real), true: oauthtest.ResourceMetadata(evil)}
	guarded := map[bool]http.Handler{false: oauthtest.Protect(inner, real, ""), true: oauthtest.Protect(inner, evil, "")}
	mux := http.NewServeMux()
	mux.Handle("/.well-known/oauth-protected-resource/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		prm[hostile.Load()].ServeHTTP(w, r)
	}))
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { guarded[hostile.Load()].ServeHTTP(w, r) }))
	rs := httptest.NewServer(mux)
	t.Cleanup(rs.Close)

	a, err := oauth.New(rs.URL+"/mcp", oauth.Config{ClientID: "nightly", ClientSecret: secret, Issuer: real.Issuer(), Grant: oauth.ClientCredentials{}})
	require.NoError(t, err)
	t.Cleanup(a.CloseIdleConnections)
	ctx := context.Background()
	require.NoError(t, connectAndCall(ctx, &mcp.HTTPTransport{URL: rs.URL + "/mcp", Credentials: a}))
	require.Equal(t, int32(1), real.MachineGrants.Load())

	hostile.Store(true)
	err = connectAndCall(ctx, &mcp.HTTPTransport{URL: rs.URL + "/mcp", Credentials: a})
	var be *oauth.IssuerBindingError
	require.ErrorAs(t, err, &be)
	assert.ErrorIs(t, err, mcp.ErrAuth)
	assert.Equal(t, real.Issuer(), be.Bound)
	assert.Equal(t, evil.Issuer(), be.Offered)
	assert.NotContains(t, err.Error(), secret)
	assert.Zero(t, evil.MachineGrants.Load(), "the hostile authorization server got a token request")
}

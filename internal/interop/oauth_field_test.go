//go:build unix

package interop

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/oauth"
)

// TestOAuthDynamicRegistration: the first sign-in registers a client, signs
// in once and exchanges one code; a step-up asked by 20 concurrent calls is
// one more sign-in and no registration.
func TestOAuthDynamicRegistration(t *testing.T) {
	as := startAuthServer(t, 60, false)
	r := startJWTResource(t, as.issuer)
	c, _ := oauthClient(t, r, oauth.Config{})
	requireNoErrors(t, concurrentCalls(c, "read", 5))
	assert.Equal(t, 1, as.count("registration_create.success", ""), "registrations")
	assert.Equal(t, 1, as.count("authorization.success", ""), "sign-ins")
	assert.Equal(t, 1, as.tokenRequests("authorization_code"), "code exchanges")

	requireNoErrors(t, concurrentCalls(c, "write", 20))
	assert.Equal(t, 1, as.count("registration_create.success", ""), "registrations after the step-up")
	assert.Equal(t, 2, as.count("authorization.success", ""), "sign-ins after the step-up")
	assert.Equal(t, 2, as.tokenRequests("authorization_code"), "code exchanges after the step-up")
}

// TestOAuthPreRegistered: the basic, post and public clients each sign in
// once, registering nothing (the server holds each client to its
// registered authentication method).
func TestOAuthPreRegistered(t *testing.T) {
	as := startAuthServer(t, 60, false)
	r := startJWTResource(t, as.issuer)
	for _, cfg := range []oauth.Config{
		{ClientID: "basic", ClientSecret: "basic-secret", TokenEndpointAuth: oauth.AuthBasic, Issuer: as.issuer},
		{ClientID: "post", ClientSecret: "post-secret", TokenEndpointAuth: oauth.AuthPost, Issuer: as.issuer},
		{ClientID: "public"},
	} {
		c, _ := oauthClient(t, r, cfg)
		require.NoError(t, callTool(c, "read"), cfg.ClientID)
	}
	assert.Equal(t, 0, as.count("registration_create.success", ""), "registrations")
	ok := map[string]int{}
	for _, e := range as.events() {
		if e.Event == "grant.success" && e.GrantType == "authorization_code" {
			ok[e.ClientID]++
		}
	}
	assert.Equal(t, map[string]int{"basic": 1, "post": 1, "public": 1}, ok, "code exchanges per client")
	assert.Equal(t, 0, as.count("grant.error", ""), "refused token requests")
}

// TestOAuthFileStoreNewProcess: a token a run stored is used by a new
// process, which neither registers nor signs in.
func TestOAuthFileStoreNewProcess(t *testing.T) {
	as := startAuthServer(t, 60, false)
	r := startJWTResource(t, as.issuer)
	path := filepath.Join(t.TempDir(), "tokens.json")
	c, _ := oauthClient(t, r, oauth.Config{Store: &oauth.FileStore{Path: path}})
	require.NoError(t, callTool(c, "read"))

	cmd := exec.Command(os.Args[0], "-test.run=^TestOAuthStoredTokenProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "MINIME_OAUTH_RESOURCE="+r.url(), "MINIME_OAUTH_STORE="+path)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "stored token served")
	assert.Equal(t, 1, as.count("registration_create.success", ""), "registrations")
	assert.Equal(t, 1, as.count("authorization.success", ""), "sign-ins")
}

// TestOAuthStoredTokenProcess is the new process of
// TestOAuthFileStoreNewProcess: it calls the server with the stored token
// and no way to sign in. It does nothing in a normal run.
func TestOAuthStoredTokenProcess(t *testing.T) {
	resource, path := os.Getenv("MINIME_OAUTH_RESOURCE"), os.Getenv("MINIME_OAUTH_STORE")
	if resource == "" {
		return
	}
	a, err := oauth.New(resource, oauth.Config{Store: &oauth.FileStore{Path: path}, Browser: oauth.NonInteractive{}})
	require.NoError(t, err)
	defer a.CloseIdleConnections()
	c, err := mcp.Connect(t.Context(), &mcp.HTTPTransport{URL: resource, Credentials: a}, nil)
	require.NoError(t, err)
	defer c.Close()
	res, err := c.CallTool(t.Context(), "read", map[string]any{})
	require.NoError(t, err)
	require.False(t, res.IsError)
	t.Log("stored token served")
	os.Stdout.WriteString("stored token served\n")
}

// TestOAuthShortTokensUnderLoad: 5 s access tokens, 50 calls at a time,
// across three renewals: exactly one token request per renewal, every
// refresh token used once (no reuse, so no revoked grant), every call
// served.
func TestOAuthShortTokensUnderLoad(t *testing.T) {
	as, _, c := signedInPeer(t, 5, false)
	start := time.Now()
	for as.tokenRequests("refresh_token") < 3 {
		requireNoErrors(t, concurrentCalls(c, "read", 50))
		require.Less(t, time.Since(start), 30*time.Second, "three renewals of 5 s tokens take 15 s")
	}
	var at []int64
	for _, e := range as.events() {
		if e.GrantType == "refresh_token" {
			require.Equal(t, "grant.success", e.Event, "refresh refused: %s", e.Error)
			at = append(at, e.At)
		}
	}
	require.Len(t, at, 3, "refresh requests")
	for i := 1; i < len(at); i++ {
		assert.GreaterOrEqual(t, at[i]-at[i-1], int64(4000), "two refreshes %d ms apart: more than one for one expiry", at[i]-at[i-1])
	}
	assert.Equal(t, 0, as.count("grant.revoked", ""), "revoked grants")
	assert.Equal(t, 1, as.count("authorization.success", ""), "sign-ins")
}

// TestOAuthServerRestarted: after the authorization server restarts and
// forgets its clients, the token in hand serves until its renewal, which
// registers once and signs in once.
func TestOAuthServerRestarted(t *testing.T) {
	as, _, c := signedInPeer(t, 5, false)
	as.restart()
	pace(t, 20*time.Second, func() bool {
		require.NoError(t, callTool(c, "read"))
		return as.count("authorization.success", "") == 1
	})
	requireNoErrors(t, concurrentCalls(c, "read", 10))
	assert.Equal(t, 1, as.count("registration_create.success", ""), "registrations at the restarted server")
	assert.Equal(t, 1, as.count("authorization.success", ""), "sign-ins at the restarted server")
}

// TestOAuthServerDown: with the authorization server down, calls keep
// working until the token expires; then they fail with a typed error.
func TestOAuthServerDown(t *testing.T) {
	as, r, c := signedInPeer(t, 5, false)
	as.proc.stop()
	exp := r.lastExpiry()
	var err error
	var last time.Time
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for err == nil {
		if err = callTool(c, "read"); err == nil {
			last = time.Now()
		}
		<-tick.C
		require.Less(t, time.Since(exp), 10*time.Second, "calls still served 10 s after the token expired")
	}
	assert.True(t, errors.Is(err, mcp.ErrAuth) && errors.Is(err, oauth.ErrUnreachable), "error %v, want ErrAuth wrapping oauth.ErrUnreachable", err)
	assert.WithinDuration(t, exp, last, 1500*time.Millisecond, "the last call served (token expiry %v)", exp)
}

// TestOAuthClientCredentials: a machine client gets one token for many
// calls; with a wrong secret, one token request and a typed error.
func TestOAuthClientCredentials(t *testing.T) {
	as := startAuthServer(t, 60, false)
	r := startJWTResource(t, as.issuer)
	c, _ := oauthClient(t, r, oauth.Config{Grant: oauth.ClientCredentials{}, ClientID: "machine", ClientSecret: "machine-secret", Issuer: as.issuer})
	requireNoErrors(t, concurrentCalls(c, "read", 20))
	assert.Equal(t, 1, as.tokenRequests("client_credentials"), "client credentials requests")

	a, err := oauth.New(r.url(), oauth.Config{Grant: oauth.ClientCredentials{}, ClientID: "machine", ClientSecret: "wrong-secret", Issuer: as.issuer})
	require.NoError(t, err)
	defer a.CloseIdleConnections()
	_, err = mcp.Connect(t.Context(), &mcp.HTTPTransport{URL: r.url(), Credentials: a}, nil)
	var oe *oauth.OAuthError
	require.True(t, errors.Is(err, oauth.ErrToken) && errors.As(err, &oe), "error %v, want ErrToken", err)
	assert.Equal(t, "invalid_client", oe.Code)
	assert.NotContains(t, err.Error(), "wrong-secret")
	assert.Equal(t, 2, as.tokenRequests("client_credentials"), "client credentials requests (one for the wrong secret)")
}

// TestOAuthNoRefreshTokens: a server that issues no refresh token: the
// token serves for its whole lifetime, then one new sign-in.
func TestOAuthNoRefreshTokens(t *testing.T) {
	as, _, c := signedInPeer(t, 5, true)
	pace(t, 20*time.Second, func() bool {
		require.NoError(t, callTool(c, "read"))
		return as.count("authorization.success", "") == 2
	})
	var signIns []int64
	for _, e := range as.events() {
		if e.Event == "authorization.success" {
			signIns = append(signIns, e.At)
		}
	}
	// The JWT's exp counts from its iat, in whole seconds: the server
	// refuses the token up to 1 s before the 5 s the client was told.
	assert.GreaterOrEqual(t, signIns[1]-signIns[0], int64(3900), "the second sign-in came %d ms after the first, before the 5 s token expired", signIns[1]-signIns[0])
	requireNoErrors(t, concurrentCalls(c, "read", 10))
	assert.Equal(t, 2, as.count("authorization.success", ""), "sign-ins (one per expiry)")
	assert.Equal(t, 0, as.tokenRequests("refresh_token"), "refresh requests")
	assert.Equal(t, 1, as.count("registration_create.success", ""), "registrations")
}

// TestOAuthSignOutRevokes: SignOut forgets the token and revokes its
// refresh token at the server, which then refuses it.
func TestOAuthSignOutRevokes(t *testing.T) {
	as := startAuthServer(t, 60, false)
	r := startJWTResource(t, as.issuer)
	store := &oauth.FileStore{Path: filepath.Join(t.TempDir(), "tokens.json")}
	c, a := oauthClient(t, r, oauth.Config{Store: store})
	require.NoError(t, callTool(c, "read"))
	key := oauth.Key{Resource: r.url(), Issuer: as.issuer}
	tok, err := store.Load(t.Context(), key)
	require.NoError(t, err)
	require.NotNil(t, tok)
	require.NotEmpty(t, tok.RefreshToken)
	st := a.State()
	require.True(t, st.Expiry.Equal(tok.Expiry), "state expiry %v, stored %v", st.Expiry, tok.Expiry)
	st.Expiry = tok.Expiry
	require.Equal(t, oauth.State{Issuer: as.issuer, ClientID: tok.Client.ID, Scopes: tok.Scopes, Expiry: tok.Expiry, HasToken: true, Refreshable: true}, st)

	require.NoError(t, a.SignOut(t.Context()))
	gone, err := store.Load(t.Context(), key)
	require.NoError(t, err)
	assert.Nil(t, gone, "the store still holds the token")
	resp, err := http.PostForm(as.issuer+"/token", url.Values{
		"grant_type": {"refresh_token"}, "refresh_token": {string(tok.RefreshToken)}, "client_id": {tok.Client.ID}, "resource": {r.url()},
	})
	require.NoError(t, err)
	defer resp.Body.Close()
	var reply struct{ Error string }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&reply))
	assert.Equal(t, "invalid_grant", reply.Error, "the revoked refresh token (http %d)", resp.StatusCode)
}

// TestOAuthServerRestartedNoRefresh: with no refresh token, the sign-in
// after a restart lands on the server's error page for the client it
// forgot (the Browser reports it): one new registration, one sign-in.
func TestOAuthServerRestartedNoRefresh(t *testing.T) {
	as, _, c := signedInPeer(t, 5, true)
	as.restart()
	pace(t, 20*time.Second, func() bool {
		require.NoError(t, callTool(c, "read"))
		return as.count("authorization.success", "") == 1
	})
	requireNoErrors(t, concurrentCalls(c, "read", 10))
	assert.Equal(t, 1, as.count("authorization.error", ""), "sign-ins refused (the forgotten client's)")
	assert.Equal(t, 1, as.count("registration_create.success", ""), "registrations at the restarted server")
	assert.Equal(t, 1, as.count("authorization.success", ""), "sign-ins at the restarted server")
}

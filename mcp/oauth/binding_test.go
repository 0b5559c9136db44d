package oauth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"git.rickub.com/bots-garden/mini-me/mcp/oauth"
)

// A pre-registered credential without the issuer it belongs to is
// refused by New (issue 35 #5): else a spoofed MCP server met first, which
// names an authorization server of its own, would receive it.
func TestCredentialWithoutIssuerRefused(t *testing.T) {
	const secret = "pre-registered-secret"
	const jwt = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ3b3JrbG9hZCJ9.c2lnbmF0dXJl"
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	key, err := oauth.NewPrivateKey(ec)
	if err != nil {
		t.Fatal(err)
	}
	assertion := func(context.Context) (oauth.Secret, error) { return jwt, nil }
	for _, tc := range []struct {
		name string
		cfg  oauth.Config
	}{
		{"code flow secret", oauth.Config{ClientID: "pre", ClientSecret: secret}},
		{"client credentials secret", oauth.Config{ClientID: "pre", ClientSecret: secret, Grant: oauth.ClientCredentials{}}},
		{"client credentials key", oauth.Config{ClientID: "pre", ClientKey: key, Grant: oauth.ClientCredentials{}}},
		{"workload JWT", oauth.Config{Grant: oauth.JWTBearer{Assertion: assertion}}},
		{"enterprise managed", oauth.Config{ClientID: "pre", Grant: oauth.EnterpriseManaged{IDToken: assertion, TokenEndpoint: "http://127.0.0.1:1/idp"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evil, rs := newRecorder(t), newRecorder(t)
			serveAS(evil)
			cfg := tc.cfg
			cfg.Browser, cfg.RedirectURL = follow, "http://127.0.0.1:1/callback"
			a, err := oauth.New(serveResource(rs, evil.url), cfg)
			if err == nil {
				defer a.CloseIdleConnections()
				_, _ = authorizeNow(t, a)
				t.Fatalf("New accepted a credential without its issuer (the spoofed authorization server got it: %v)",
					evil.saw(secret) || evil.saw(jwt) || evil.saw("client_assertion="))
			}
			if !errors.Is(err, oauth.ErrUnboundCredential) || !strings.Contains(err.Error(), "Issuer") {
				t.Errorf("error %v, want one matching ErrUnboundCredential that names Issuer", err)
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), jwt) {
				t.Errorf("the credential is in the error: %v", err)
			}
			if evil.count() != 0 || rs.count() != 0 {
				t.Errorf("requests sent: %d to the authorization server, %d to the server", evil.count(), rs.count())
			}
		})
	}
}

// A machine grant's credential goes to its issuer, and never to the one a
// server names later.
func TestMachineCredentialStaysAtItsIssuer(t *testing.T) {
	const jwt = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ3b3JrbG9hZCJ9.c2lnbmF0dXJl"
	for _, tc := range []struct {
		name   string
		cfg    oauth.Config
		secret string
	}{
		{"client secret", oauth.Config{ClientID: "cc", ClientSecret: "cc-secret-of-as1", Grant: oauth.ClientCredentials{}}, "cc-secret-of-as1"},
		{"workload JWT", oauth.Config{Grant: oauth.JWTBearer{Assertion: func(context.Context) (oauth.Secret, error) { return jwt, nil }}}, jwt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			as1, evil, rs := newRecorder(t), newRecorder(t), newRecorder(t)
			serveAS(as1)
			serveAS(evil)
			as1.handle("/token", func(w http.ResponseWriter, _ *http.Request) { // a machine grant: no refresh token
				writeTestJSON(w, 200, map[string]any{"access_token": "at-" + randomHex(), "token_type": "Bearer", "expires_in": 3600}, nil)
			})
			var current atomic.Value
			current.Store(as1.url())
			cfg := tc.cfg
			cfg.Issuer = as1.url()
			a := newAuthorizer(t, serveResource(rs, func() string { return current.Load().(string) }), cfg)
			if _, err := authorizeNow(t, a); err != nil {
				t.Fatal(err)
			}
			if !as1.saw(tc.secret) {
				t.Fatal("the authorization server never got the credential")
			}
			current.Store(evil.url()) // the server now names another authorization server
			_, err := authorizeNow(t, a)
			var be *oauth.IssuerBindingError
			if !errors.As(err, &be) || be.Bound != as1.url() || be.Offered != evil.url() || !errors.Is(err, oauth.ErrIssuerMismatch) {
				t.Fatalf("error %v, want an *IssuerBindingError (bound %s, offered %s)", err, as1.url(), evil.url())
			}
			if evil.saw(tc.secret) || evil.saw("POST") {
				t.Error("the credential (or a token request) reached the other authorization server")
			}
		})
	}
}

// A configured Issuer binds the credential before its first use.
func TestMachineCredentialBoundToConfiguredIssuer(t *testing.T) {
	as1, evil, rs := newRecorder(t), newRecorder(t), newRecorder(t)
	serveAS(as1)
	serveAS(evil)
	a := newAuthorizer(t, serveResource(rs, evil.url), oauth.Config{ClientID: "cc", ClientSecret: "cc-secret", Issuer: as1.url(), Grant: oauth.ClientCredentials{}})
	_, err := authorizeNow(t, a)
	var be *oauth.IssuerBindingError
	if !errors.As(err, &be) || be.Bound != as1.url() {
		t.Fatalf("error %v, want an *IssuerBindingError", err)
	}
	if evil.saw("cc-secret") || evil.saw("POST") {
		t.Error("the secret reached an authorization server it is not bound to")
	}
}

// A pre-registered client secret of the authorization code flow stays at
// its issuer too: at another issuer the client registers instead.
func TestCodeFlowSecretStaysAtItsIssuer(t *testing.T) {
	const secret = "code-flow-secret"
	as1, evil, rs := newRecorder(t), newRecorder(t), newRecorder(t)
	serveAS(as1)
	serveAS(evil)
	as1.handle("/token", func(w http.ResponseWriter, _ *http.Request) { // no refresh token: the next 401 authorizes again
		writeTestJSON(w, 200, map[string]any{"access_token": "at-" + randomHex(), "token_type": "Bearer", "expires_in": 3600}, nil)
	})
	var current atomic.Value
	current.Store(as1.url())
	a := newAuthorizer(t, serveResource(rs, func() string { return current.Load().(string) }), oauth.Config{ClientID: "pre", ClientSecret: secret, Issuer: as1.url()})
	if _, err := authorizeNow(t, a); err != nil {
		t.Fatal(err)
	}
	basic := base64.StdEncoding.EncodeToString([]byte("pre:" + secret))
	if !as1.saw(basic) {
		t.Fatal("the authorization server never got the secret")
	}
	current.Store(evil.url())
	if _, err := authorizeNow(t, a); err != nil {
		t.Fatal(err) // a registration and a sign-in at the new server
	}
	if evil.saw(basic) || evil.saw(secret) || !evil.saw("POST /register") {
		t.Error("the secret reached the other authorization server, or the client did not register there")
	}
}

package oauth_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"git.rickub.com/bots-garden/mini-me/mcp/oauth"
)

// A token is refreshed only at the authorization server that issued it:
// when the server moves to another one, and a stored token there cannot be
// used, the old refresh token and the client secret stay home.
func TestRefreshStaysAtItsIssuer(t *testing.T) {
	const secret = "secret-of-as1"
	as1, evil, rs := newRecorder(t), newRecorder(t), newRecorder(t)
	serveAS(as1)
	serveAS(evil)
	evil.handle("/token", func(w http.ResponseWriter, _ *http.Request) {
		writeTestJSON(w, 400, map[string]any{"error": "invalid_grant"}, nil)
	})
	evil.handle("/authorize", http.NotFound) // no sign-in there
	var current atomic.Value
	current.Store(as1.url())
	resource := serveResource(rs, func() string { return current.Load().(string) })
	store := &oauth.MemoryStore{}
	a := newAuthorizer(t, resource, oauth.Config{ClientID: "pre", ClientSecret: secret, Issuer: as1.url(), Store: store})
	ctx := context.Background()
	t1, err := authorizeNow(t, a)
	if err != nil {
		t.Fatal(err)
	}
	var refresh string
	if err := func() error {
		tok, err := store.Load(ctx, oauth.Key{Resource: resource, Issuer: as1.url(), Client: "pre"})
		if tok == nil {
			return fmt.Errorf("no stored token (%v)", err)
		}
		refresh = string(tok.RefreshToken)
		return nil
	}(); err != nil || refresh == "" {
		t.Fatalf("%v (refresh token %q)", err, refresh)
	}
	// The first server goes down; the server names the other one, for
	// which the store holds an expired token.
	as1.srv.Close()
	current.Store(evil.url())
	_ = store.Save(ctx, oauth.Key{Resource: resource, Issuer: evil.url(), Client: "pre"}, &oauth.Token{AccessToken: "old", RefreshToken: "rt-old", Expiry: time.Now().Add(-time.Hour)})
	for i := range 2 {
		if err := a.Challenged(ctx, 401, challenge(t, `Bearer error="invalid_token"`), t1); err == nil {
			t.Fatalf("attempt %d: authorized with no server to sign in at", i)
		}
	}
	if evil.saw(refresh) || evil.saw(secret) || evil.saw(base64.StdEncoding.EncodeToString([]byte("pre:"+secret))) {
		t.Error("the refresh token or the client secret reached the other authorization server")
	}
}

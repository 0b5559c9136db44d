package oauth_test

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"git.rickub.com/bots-garden/mini-me/internal/oauthtest"
	"git.rickub.com/bots-garden/mini-me/mcp/oauth"
)

// The tests of this file are those of an authorization server in the
// field: short-lived tokens, refresh failures, forgotten registrations,
// tokens shared by processes.

// signedIn returns an Authorizer of resource that signed in once, its
// clock, and its token.
func signedIn(t *testing.T, resource string, cfg oauth.Config) (*oauth.Authorizer, *fakeClock, string) {
	t.Helper()
	a := newAuthorizer(t, resource, cfg)
	clock := withClock(a)
	ctx := context.Background()
	if err := a.Challenged(ctx, 401, challenge(t, `Bearer scope="read"`), ""); err != nil {
		t.Fatal(err)
	}
	tok, err := a.Token(ctx)
	if err != nil || tok == "" {
		t.Fatalf("token %q, %v", tok, err)
	}
	return a, clock, tok
}

// concurrently runs f n times at once and returns their tokens and errors.
func concurrently(n int, f func() (string, error)) ([]string, []error) {
	toks, errs := make([]string, n), make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			toks[i], errs[i] = f()
		}()
	}
	close(start)
	wg.Wait()
	return toks, errs
}

// oneRenewed returns a check that every call got one token, not first,
// and no error.
func oneRenewed(t *testing.T, first string) func([]string, []error) {
	return func(toks []string, errs []error) {
		t.Helper()
		for i := range toks {
			if errs[i] != nil || toks[i] == first || toks[i] != toks[0] {
				t.Fatalf("call %d: %q, %v; want the one renewed token", i, toks[i], errs[i])
			}
		}
	}
}

// TestHugeLifetimeNotExpired: a token whose expires_in is too large for a
// time.Duration (9,999,999,999 s, 317 years) is a long-lived token, not
// one that expired when it was issued: the overflowed lifetime made every
// Token call refresh it (issue 35 #17, review: a hostile authorization
// server kept the client renewing on each request).
func TestHugeLifetimeNotExpired(t *testing.T) {
	as := &oauthtest.Server{Refresh: true, ExpiresIn: 9_999_999_999}
	resource, _ := setup(t, as)
	a, clock, first := signedIn(t, resource, oauth.Config{})
	ctx := context.Background()
	for range 10 {
		clock.advance(24 * time.Hour)
		if tok, err := a.Token(ctx); tok != first || err != nil {
			t.Fatalf("a token of 317 years, a day later: %q, %v; want the same token", tok, err)
		}
	}
	if n := as.RefreshGrants.Load(); n != 0 {
		t.Fatalf("%d refreshes of a token of 317 years within 10 days", n)
	}
}

// TestRenewalMarginProportional: a 30 s token is renewed 3 s before its
// expiry (a tenth of its lifetime), not 30 s before (every request), and
// 50 concurrent calls at its renewal point make one refresh.
func TestRenewalMarginProportional(t *testing.T) {
	as := &oauthtest.Server{Refresh: true, ExpiresIn: 30}
	resource, _ := setup(t, as)
	a, clock, first := signedIn(t, resource, oauth.Config{})
	ctx := context.Background()
	clock.advance(26 * time.Second) // 4 s left: no renewal yet
	if tok, err := a.Token(ctx); tok != first || err != nil {
		t.Fatalf("26 s into a 30 s token: %q, %v; want the same token", tok, err)
	}
	if n := as.RefreshGrants.Load(); n != 0 {
		t.Fatalf("%d refreshes of a token with 4 s left of 30: the margin is not proportional", n)
	}
	clock.advance(2 * time.Second) // 2 s left: inside the 3 s margin
	oneRenewed(t, first)(concurrently(50, func() (string, error) { return a.Token(ctx) }))
	if n := as.RefreshGrants.Load(); n != 1 {
		t.Errorf("%d refreshes for 50 concurrent calls, want exactly 1", n)
	}
}

// TestValidTokenUsedWhileRenewalFails: with the authorization server down,
// a token inside its lifetime is still sent; once it expired, Token says
// why it could not be renewed (ErrUnreachable), once for all the callers
// that waited for that renewal.
func TestValidTokenUsedWhileRenewalFails(t *testing.T) {
	as := &oauthtest.Server{Refresh: true, ExpiresIn: 100}
	resource, _ := setup(t, as)
	a, clock, first := signedIn(t, resource, oauth.Config{})
	ctx := context.Background()
	as.Close()
	clock.advance(95 * time.Second) // inside the 10 s margin
	toks, errs := concurrently(20, func() (string, error) { return a.Token(ctx) })
	for i := range toks {
		if toks[i] != first || errs[i] != nil {
			t.Fatalf("call %d with 5 s left and the server down: %q, %v; want the token still valid", i, toks[i], errs[i])
		}
	}
	clock.advance(10 * time.Second) // expired
	tok, err := a.Token(ctx)
	if tok != "" || !errors.Is(err, oauth.ErrUnreachable) {
		t.Fatalf("expired, server down: %q, %v; want an error wrapping ErrUnreachable", tok, err)
	}
	if strings.Contains(err.Error(), oauthtest.Sentinel) {
		t.Errorf("a token in the error: %v", err)
	}
}

// TestNoRefreshTokenUsedToExpiry: a server that issues no refresh token
// gets its token sent for its whole lifetime, then one new sign-in.
func TestNoRefreshTokenUsedToExpiry(t *testing.T) {
	as := &oauthtest.Server{ExpiresIn: 100}
	resource, _ := setup(t, as)
	a, clock, first := signedIn(t, resource, oauth.Config{})
	ctx := context.Background()
	clock.advance(99 * time.Second)
	if tok, err := a.Token(ctx); tok != first || err != nil {
		t.Fatalf("1 s before its expiry: %q, %v; want the token", tok, err)
	}
	clock.advance(2 * time.Second)
	if tok, err := a.Token(ctx); tok != "" || err != nil {
		t.Fatalf("expired with no refresh token: %q, %v; want none, so the 401 signs in", tok, err)
	}
	_, errs := concurrently(10, func() (string, error) {
		return "", a.Challenged(ctx, 401, challenge(t, `Bearer error="invalid_token"`), "")
	})
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if tok, _ := a.Token(ctx); tok == "" || tok == first {
		t.Errorf("after the sign-in: %q", tok)
	}
	if n := as.Authorizations.Load(); n != 2 {
		t.Errorf("%d sign-ins, want 2 (one at the start, one at the expiry)", n)
	}
}

// TestConcurrentStepUp: 20 calls refused for a missing scope share one
// step-up, even with a short-lived token (20 s, once inside the old fixed
// 30 s margin).
func TestConcurrentStepUp(t *testing.T) {
	as := &oauthtest.Server{Refresh: true, ExpiresIn: 20}
	resource, _ := setup(t, as)
	a, _, first := signedIn(t, resource, oauth.Config{})
	ctx := context.Background()
	_, errs := concurrently(20, func() (string, error) {
		return "", a.Challenged(ctx, 403, challenge(t, `Bearer error="insufficient_scope", scope="write"`), first)
	})
	for i, err := range errs {
		if err != nil {
			t.Errorf("call %d: %v", i, err)
		}
	}
	tok, _ := a.Token(ctx)
	if sc, ok := as.Valid(tok); !ok || !strings.Contains(strings.Join(sc, " "), "write") {
		t.Errorf("token scopes %v (valid %v), want write", sc, ok)
	}
	if n := as.Authorizations.Load(); n != 2 {
		t.Errorf("%d sign-ins, want 2 (one step-up shared)", n)
	}
}

// TestForgottenRegistration: after the authorization server forgot the
// client it registered (a restart), the Authorizer registers again, once,
// whether the refresh said invalid_client or the sign-in page did.
func TestForgottenRegistration(t *testing.T) {
	t.Run("refresh", func(t *testing.T) {
		as := &oauthtest.Server{Refresh: true, ExpiresIn: 100}
		resource, _ := setup(t, as)
		a, clock, first := signedIn(t, resource, oauth.Config{Browser: follow})
		ctx := context.Background()
		as.Forget()
		clock.advance(101 * time.Second)
		if tok, err := a.Token(ctx); tok != "" || err != nil {
			t.Fatalf("refresh refused: %q, %v; want none, so the 401 signs in", tok, err)
		}
		if err := a.Challenged(ctx, 401, challenge(t, `Bearer error="invalid_token"`), first); err != nil {
			t.Fatal(err)
		}
		if n := as.Registrations.Load(); n != 2 {
			t.Errorf("%d registrations, want 2", n)
		}
		if n := as.CodeGrants.Load(); n != 2 {
			t.Errorf("%d sign-ins, want 2", n)
		}
	})
	t.Run("error page", func(t *testing.T) {
		as := &oauthtest.Server{ExpiresIn: 100}
		resource, _ := setup(t, as)
		a, _, first := signedIn(t, resource, oauth.Config{Browser: follow})
		ctx := context.Background()
		as.Forget()
		as.Revoke()
		if err := a.Challenged(ctx, 401, challenge(t, `Bearer error="invalid_token"`), first); err != nil {
			t.Fatal(err)
		}
		if n, m := as.Registrations.Load(), as.Authorizations.Load(); n != 2 || m != 3 {
			t.Errorf("%d registrations, %d authorization pages; want 2 and 3 (the first, the error page, the new client's)", n, m)
		}
	})
	t.Run("once", func(t *testing.T) {
		as := &oauthtest.Server{ExpiresIn: 100}
		resource, _ := setup(t, as)
		// A Browser that lands on the error page every time: one new
		// registration, then the error.
		always := oauth.BrowserFunc(func(context.Context, string, string) (*url.URL, error) {
			return nil, &oauth.ErrorPageError{Code: "invalid_client"}
		})
		a, _, first := signedIn(t, resource, oauth.Config{Browser: follow})
		oauth.SetBrowser(a, always)
		err := a.Challenged(context.Background(), 401, challenge(t, `Bearer error="invalid_token"`), first)
		var pe *oauth.ErrorPageError
		if !errors.As(err, &pe) || !errors.Is(err, oauth.ErrConsent) {
			t.Fatalf("error %v, want the ErrorPageError", err)
		}
		if n := as.Registrations.Load(); n != 2 {
			t.Errorf("%d registrations, want 2 (one new, not a loop)", n)
		}
	})
}

// TestStoreKeyHasClient: two clients of one server sharing a store keep
// a token each.
func TestStoreKeyHasClient(t *testing.T) {
	as := &oauthtest.Server{Refresh: true}
	resource, _ := setup(t, as)
	store := &oauth.MemoryStore{}
	_, _, ta := signedIn(t, resource, oauth.Config{ClientID: "app-a", Store: store})
	_, _, tb := signedIn(t, resource, oauth.Config{ClientID: "app-b", Store: store})
	if ta == tb || as.CodeGrants.Load() != 2 {
		t.Errorf("client b got client a's token (%d sign-ins)", as.CodeGrants.Load())
	}
}

// TestNonInteractiveRegistersNothing: with no Browser, the authorization
// fails before a client is registered.
func TestNonInteractiveRegistersNothing(t *testing.T) {
	as := &oauthtest.Server{}
	resource, _ := setup(t, as)
	a, err := oauth.New(resource, oauth.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.CloseIdleConnections()
	if err := a.Challenged(context.Background(), 401, nil, ""); !errors.Is(err, oauth.ErrInteractionRequired) {
		t.Fatalf("error %v", err)
	}
	if n := as.Registrations.Load(); n != 0 {
		t.Errorf("%d registrations with no way to sign in", n)
	}
}

// TestCorruptTokenFileReplaced: a token file that is not one is replaced
// by the next sign-in, with a warning, and its content kept aside.
func TestCorruptTokenFileReplaced(t *testing.T) {
	as := &oauthtest.Server{}
	resource, _ := setup(t, as)
	path := filepath.Join(t.TempDir(), "tokens.json")
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	store := &oauth.FileStore{Path: path}
	_, _, tok := signedIn(t, resource, oauth.Config{Store: store, Logger: log})
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "not a token file") {
		t.Errorf("no warning: %q", logs.String())
	}
	if old, err := os.ReadFile(path + ".corrupt"); string(old) != "{not json" {
		t.Errorf("old content %q, %v", old, err)
	}
	// A new process finds the token.
	_, _, again := signedIn(t, resource, oauth.Config{Store: &oauth.FileStore{Path: path}, Browser: stopBrowser})
	if again != tok || as.CodeGrants.Load() != 1 {
		t.Errorf("the new process got %q (%d sign-ins), want the stored token", again, as.CodeGrants.Load())
	}
}

// TestSharedFileStoreRefreshedOnce: two processes (two Authorizers, two
// FileStore values over one file) whose stored token reaches its renewal
// point together refresh it once; the second takes the first's token from
// the file instead of sending the rotated refresh token again.
func TestSharedFileStoreRefreshedOnce(t *testing.T) {
	as := &oauthtest.Server{Refresh: true, ExpiresIn: 100}
	resource, _ := setup(t, as)
	path := filepath.Join(t.TempDir(), "tokens.json")
	a, ca, first := signedIn(t, resource, oauth.Config{Store: &oauth.FileStore{Path: path}})
	b, cb, same := signedIn(t, resource, oauth.Config{Store: &oauth.FileStore{Path: path}, Browser: stopBrowser})
	if same != first {
		t.Fatalf("the second process did not take the stored token")
	}
	ca.advance(95 * time.Second)
	cb.advance(95 * time.Second)
	ctx := context.Background()
	var i atomic.Int32
	oneRenewed(t, first)(concurrently(20, func() (string, error) {
		if i.Add(1)%2 == 0 {
			return a.Token(ctx)
		}
		return b.Token(ctx)
	}))
	if n := as.RefreshGrants.Load(); n != 1 {
		t.Errorf("%d refreshes, want 1 (a second one reuses a rotated refresh token)", n)
	}
}

// TestStateRefreshSignOut: a host sees what the Authorizer holds (never a
// secret), renews the token when it wants, and signs out.
func TestStateRefreshSignOut(t *testing.T) {
	as := &oauthtest.Server{Refresh: true}
	resource, _ := setup(t, as)
	store := &oauth.MemoryStore{}
	ctx := context.Background()
	a := newAuthorizer(t, resource, oauth.Config{Store: store})
	if err := a.Refresh(ctx); !errors.Is(err, oauth.ErrToken) {
		t.Errorf("Refresh before any sign-in: %v, want ErrToken", err)
	}
	if err := a.Challenged(ctx, 401, challenge(t, `Bearer scope="read"`), ""); err != nil {
		t.Fatal(err)
	}
	first, _ := a.Token(ctx)
	st := a.State()
	if st.Issuer != as.Issuer() || st.ClientID != "client-1" || !st.HasToken || !st.Refreshable ||
		time.Until(st.Expiry) < time.Hour-time.Minute || !strings.Contains(strings.Join(st.Scopes, " "), "read") {
		t.Errorf("state %+v", st)
	}
	if err := a.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if tok, _ := a.Token(ctx); tok == first || as.RefreshGrants.Load() != 1 {
		t.Errorf("after Refresh: the same token, or %d refreshes", as.RefreshGrants.Load())
	}
	if err := a.SignOut(ctx); err != nil {
		t.Fatal(err)
	}
	if tok, _ := a.Token(ctx); tok != "" || a.State().HasToken {
		t.Errorf("signed out, yet token %q, state %+v", tok, a.State())
	}
	if got, _ := store.Load(ctx, oauth.Key{Resource: resource, Issuer: as.Issuer()}); got != nil {
		t.Errorf("the store still holds the token")
	}
}

// TestMemoryStoreLockPerKey: the lock of one key holds off that key
// only, until it is released.
func TestMemoryStoreLockPerKey(t *testing.T) {
	var m oauth.MemoryStore
	k1, k2 := oauth.Key{Resource: "https://a/mcp"}, oauth.Key{Resource: "https://b/mcp"}
	unlock1, err := m.Lock(context.Background(), k1)
	if err != nil {
		t.Fatal(err)
	}
	unlock2, err := m.Lock(context.Background(), k2)
	if err != nil {
		t.Fatalf("another key: %v", err)
	}
	unlock2()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Lock(ctx, k1); !errors.Is(err, context.Canceled) {
		t.Fatalf("a held key: %v, want the context's error", err)
	}
	unlock1()
	unlock, err := m.Lock(context.Background(), k1)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
}

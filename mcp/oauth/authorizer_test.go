package oauth_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"git.rickub.com/bots-garden/mini-me/internal/oauthtest"
	"git.rickub.com/bots-garden/mini-me/mcp/oauth"
)

// follow is the Browser of these tests (see oauthtest.Follow).
var follow = oauthtest.Follow

// newAuthorizer returns an Authorizer for resource whose HTTP client the
// test closes.
func newAuthorizer(t *testing.T, resource string, cfg oauth.Config) *oauth.Authorizer {
	t.Helper()
	if cfg.Browser == nil {
		cfg.Browser = follow
	}
	if cfg.RedirectURL == "" {
		cfg.RedirectURL = "http://127.0.0.1:1/callback"
	}
	a, err := oauth.New(resource, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.CloseIdleConnections)
	return a
}

// setup starts an authorization server and a resource (PRM at the
// path-based well-known URL) and returns them with the resource URL.
func setup(t *testing.T, as *oauthtest.Server) (string, *httptest.Server) {
	t.Helper()
	as.Start()
	t.Cleanup(as.Close)
	rs := oauthtest.Resource(http.NotFoundHandler(), as, "")
	t.Cleanup(rs.Close)
	return rs.URL + "/mcp", rs
}

// fakeClock is an Authorizer's clock that a test moves forward, so a token
// reaches its renewal point, or its expiry, without the test waiting.
type fakeClock struct{ off atomic.Int64 }

func (c *fakeClock) now() time.Time          { return time.Now().Add(time.Duration(c.off.Load())) }
func (c *fakeClock) advance(d time.Duration) { c.off.Add(int64(d)) }

func withClock(a *oauth.Authorizer) *fakeClock {
	c := &fakeClock{}
	oauth.SetClock(a, c.now)
	return c
}

func challenge(t *testing.T, h string) []oauth.Challenge {
	t.Helper()
	c, err := oauth.ParseChallenges(h)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestAuthorizeCodeFlow(t *testing.T) {
	as := &oauthtest.Server{}
	resource, _ := setup(t, as)
	var authURL string
	a := newAuthorizer(t, resource, oauth.Config{Browser: oauth.BrowserFunc(func(ctx context.Context, u, r string) (*url.URL, error) {
		authURL = u
		return follow(ctx, u, r)
	})})
	ctx := context.Background()
	if tok, _ := a.Token(ctx); tok != "" {
		t.Fatalf("token before any authorization: %q", tok)
	}
	if err := a.Challenged(ctx, 401, challenge(t, `Bearer scope="read"`), ""); err != nil {
		t.Fatal(err)
	}
	tok, err := a.Token(ctx)
	if err != nil || tok == "" {
		t.Fatalf("token %q, %v", tok, err)
	}
	if sc, ok := as.Valid(tok); !ok || !slices.Equal(sc, []string{"read", "offline_access"}) {
		t.Errorf("token scopes %v (valid %v); want read and offline_access (the AS lists it)", sc, ok)
	}
	// PKCE: S256 only, a 43-character verifier (the AS checked it matches).
	q, _ := url.Parse(authURL)
	if m := q.Query().Get("code_challenge_method"); m != "S256" {
		t.Errorf("code_challenge_method %q", m)
	}
	if c := q.Query().Get("code_challenge"); len(c) != 43 {
		t.Errorf("code_challenge %q is not a base64url SHA-256", c)
	}
	// RFC 8707: the PRM resource, on both requests.
	if got := as.Resources(); !slices.Equal(got, []string{resource, resource}) {
		t.Errorf("resource parameters %v, want %s twice", got, resource)
	}
	if as.Registrations.Load() != 1 || as.CodeGrants.Load() != 1 {
		t.Errorf("%d registrations, %d code grants", as.Registrations.Load(), as.CodeGrants.Load())
	}
}

// fixture is a server whose paths answer fixed JSON; every request path is
// recorded, and unknown paths get 404.
type fixture struct {
	srv  *httptest.Server
	mu   sync.Mutex
	hits []string
	docs map[string]func(base string) any
}

func newFixture(t *testing.T, docs map[string]func(base string) any) *fixture {
	f := &fixture{docs: docs}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.hits = append(f.hits, r.URL.Path)
		f.mu.Unlock()
		d, ok := f.docs[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(d(f.srv.URL))
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fixture) paths() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.hits)
}

func asMeta(issuer string) map[string]any {
	return map[string]any{
		"issuer": issuer, "authorization_endpoint": issuer + "/authorize", "token_endpoint": issuer + "/token",
		"code_challenge_methods_supported": []string{"S256"},
	}
}

// errStop ends a flow at the browser step: the discovery was what the
// test looked at.
var errStop = errors.New("stop at the browser")

var stopBrowser = oauth.BrowserFunc(func(context.Context, string, string) (*url.URL, error) { return nil, errStop })

func TestDiscoveryFallbacks(t *testing.T) {
	tests := []struct {
		name      string
		docs      map[string]func(string) any
		challenge string
		want      []string // request paths, in order
		err       error
	}{
		{"header names the PRM",
			map[string]func(string) any{
				"/custom/prm.json": func(b string) any {
					return map[string]any{"resource": b + "/mcp", "authorization_servers": []string{b}}
				},
				"/.well-known/oauth-authorization-server": func(b string) any { return asMeta(b) },
			},
			`Bearer resource_metadata="{base}/custom/prm.json"`,
			[]string{"/custom/prm.json", "/.well-known/oauth-authorization-server"}, errStop},
		{"path-based then root PRM; tenant issuer through OIDC path appending",
			map[string]func(string) any{
				"/.well-known/oauth-protected-resource": func(b string) any {
					return map[string]any{"resource": b, "authorization_servers": []string{b + "/tenant1"}}
				},
				"/tenant1/.well-known/openid-configuration": func(b string) any { return asMeta(b + "/tenant1") },
			},
			`Bearer`,
			[]string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource",
				"/.well-known/oauth-authorization-server/tenant1", "/.well-known/openid-configuration/tenant1", "/tenant1/.well-known/openid-configuration"}, errStop},
		{"2025-03-26: no PRM, metadata at the origin",
			map[string]func(string) any{
				"/.well-known/oauth-authorization-server": func(b string) any { return asMeta(b) },
			},
			`Bearer`,
			[]string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource", "/.well-known/oauth-authorization-server"}, errStop},
		{"2025-03-26: no metadata at all, default endpoints",
			map[string]func(string) any{},
			``,
			[]string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource",
				"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration", "/register"}, oauth.ErrRegistration},
		{"resource mismatch is refused, with no fallback",
			map[string]func(string) any{
				"/.well-known/oauth-protected-resource/mcp": func(b string) any {
					return map[string]any{"resource": "https://evil.example.com/mcp", "authorization_servers": []string{b}}
				},
			},
			``,
			[]string{"/.well-known/oauth-protected-resource/mcp"}, oauth.ErrMetadata},
		{"metadata issuer mismatch",
			map[string]func(string) any{
				"/.well-known/oauth-protected-resource/mcp": func(b string) any {
					return map[string]any{"resource": b + "/mcp", "authorization_servers": []string{b}}
				},
				"/.well-known/oauth-authorization-server": func(b string) any { return asMeta("https://attacker.example.com") },
			},
			``,
			[]string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-authorization-server"}, oauth.ErrIssuerMismatch},
		{"no S256, no authorization",
			map[string]func(string) any{
				"/.well-known/oauth-protected-resource/mcp": func(b string) any {
					return map[string]any{"resource": b + "/mcp", "authorization_servers": []string{b}}
				},
				"/.well-known/oauth-authorization-server": func(b string) any {
					m := asMeta(b)
					m["code_challenge_methods_supported"] = []string{"plain"}
					return m
				},
			},
			``,
			[]string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-authorization-server"}, oauth.ErrMetadata},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.docs)
			// A pre-registered id skips registration, except where the
			// default /register endpoint is what the case checks (it
			// answers 404: registration refused).
			clientID := "app"
			if strings.Contains(tt.name, "default endpoints") {
				clientID = ""
			}
			a := newAuthorizer(t, f.srv.URL+"/mcp", oauth.Config{Browser: stopBrowser, ClientID: clientID})
			h := strings.ReplaceAll(tt.challenge, "{base}", f.srv.URL)
			err := a.Challenged(context.Background(), 401, challenge(t, h), "")
			if !errors.Is(err, tt.err) {
				t.Errorf("error %v, want %v", err, tt.err)
			}
			if got := f.paths(); !slices.Equal(got, tt.want) {
				t.Errorf("requests\n got %v\nwant %v", got, tt.want)
			}
		})
	}
}

func TestIssuerCheck(t *testing.T) {
	tests := []struct {
		name string
		as   *oauthtest.Server
	}{
		{"advertised, missing", &oauthtest.Server{NoIss: true}},
		{"wrong issuer", &oauthtest.Server{WrongIss: "https://evil.example.com"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			as := tt.as
			resource, _ := setup(t, as)
			a := newAuthorizer(t, resource, oauth.Config{})
			err := a.Challenged(context.Background(), 401, nil, "")
			if !errors.Is(err, oauth.ErrIssuerMismatch) {
				t.Fatalf("error %v, want ErrIssuerMismatch", err)
			}
			if as.Authorizations.Load() != 1 || as.CodeGrants.Load() != 0 {
				t.Errorf("%d authorizations, %d code grants: the code must never reach the token endpoint", as.Authorizations.Load(), as.CodeGrants.Load())
			}
		})
	}
	t.Run("trailing slash is not normalised", func(t *testing.T) {
		as := &oauthtest.Server{}
		resource, _ := setup(t, as)
		as.WrongIss = as.Issuer() + "/"
		a := newAuthorizer(t, resource, oauth.Config{})
		if err := a.Challenged(context.Background(), 401, nil, ""); !errors.Is(err, oauth.ErrIssuerMismatch) {
			t.Fatalf("error %v, want ErrIssuerMismatch", err)
		}
	})
}

func TestConsentRefused(t *testing.T) {
	as := &oauthtest.Server{Deny: true}
	resource, _ := setup(t, as)
	a := newAuthorizer(t, resource, oauth.Config{})
	err := a.Challenged(context.Background(), 401, nil, "")
	var oe *oauth.OAuthError
	if !errors.Is(err, oauth.ErrConsent) || !errors.As(err, &oe) || oe.Code != "access_denied" {
		t.Fatalf("error %v, want ErrConsent with access_denied", err)
	}
}

// TestRefreshSingleFlight: 50 calls that find the token expired share one
// refresh (a second use of the rotating refresh token would fail).
func TestRefreshSingleFlight(t *testing.T) {
	for _, via := range []string{"Token", "Challenged"} {
		t.Run(via, func(t *testing.T) {
			// Via Token: the first token (100 s) is 5 s from its expiry,
			// inside its 10 s margin, so every call finds it stale. Via
			// Challenged: it is fresh, and the server refuses it (revoked).
			as := &oauthtest.Server{Refresh: true, ExpiresIn: 100}
			if via == "Challenged" {
				as.ExpiresIn = 3600
			}
			resource, _ := setup(t, as)
			a := newAuthorizer(t, resource, oauth.Config{})
			clock := withClock(a)
			ctx := context.Background()
			if err := a.Challenged(ctx, 401, nil, ""); err != nil {
				t.Fatal(err)
			}
			if via == "Token" {
				clock.advance(95 * time.Second)
			}
			as.ExpiresIn = 3600 // the refreshed token is fresh
			old := ""
			if via == "Challenged" {
				old, _ = a.Token(ctx)
			}
			start := make(chan struct{})
			var wg sync.WaitGroup
			var failed atomic.Int32
			tokens := make([]string, 50)
			for i := range tokens {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					if via == "Challenged" {
						if err := a.Challenged(ctx, 401, challenge(t, `Bearer error="invalid_token"`), old); err != nil {
							failed.Add(1)
						}
					}
					tok, err := a.Token(ctx)
					if err != nil || tok == "" {
						failed.Add(1)
					}
					tokens[i] = tok
				}()
			}
			close(start)
			wg.Wait()
			if n := as.RefreshGrants.Load(); n != 1 {
				t.Errorf("%d refresh requests, want exactly 1", n)
			}
			if as.CodeGrants.Load() != 1 || failed.Load() != 0 {
				t.Errorf("%d code grants, %d failures", as.CodeGrants.Load(), failed.Load())
			}
			for _, tok := range tokens {
				if tok != tokens[0] {
					t.Fatalf("calls got different tokens: %q and %q", tok, tokens[0])
				}
			}
		})
	}
}

func TestStepUp(t *testing.T) {
	as := &oauthtest.Server{}
	resource, _ := setup(t, as)
	var scopes []string
	a := newAuthorizer(t, resource, oauth.Config{Browser: oauth.BrowserFunc(func(ctx context.Context, u, r string) (*url.URL, error) {
		pu, _ := url.Parse(u)
		scopes = strings.Fields(pu.Query().Get("scope"))
		return follow(ctx, u, r)
	})})
	ctx := context.Background()
	if err := a.Challenged(ctx, 401, challenge(t, `Bearer scope="read"`), ""); err != nil {
		t.Fatal(err)
	}
	tok, _ := a.Token(ctx)
	if err := a.Challenged(ctx, 403, challenge(t, `Bearer error="insufficient_scope", scope="write"`), tok); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(scopes, []string{"read", "offline_access", "write"}) {
		t.Errorf("step-up asked for %v, want the union read offline_access write", scopes)
	}
	tok, _ = a.Token(ctx)
	// The server asks again for a scope already granted: no new sign-in.
	err := a.Challenged(ctx, 403, challenge(t, `Bearer error="insufficient_scope", scope="write"`), tok)
	if !errors.Is(err, oauth.ErrInsufficientScope) {
		t.Errorf("error %v, want ErrInsufficientScope", err)
	}
	if n := as.Authorizations.Load(); n != 2 {
		t.Errorf("%d authorizations, want 2", n)
	}
	// A 403 that is not about scopes is not fixed by signing in again.
	if err := a.Challenged(ctx, 403, challenge(t, `Bearer error="forbidden"`), tok); !errors.Is(err, oauth.ErrConsent) {
		t.Errorf("plain 403: %v", err)
	}
}

func TestNonInteractiveFailsFast(t *testing.T) {
	as := &oauthtest.Server{}
	resource, _ := setup(t, as)
	a, err := oauth.New(resource, oauth.Config{}) // the default Browser
	if err != nil {
		t.Fatal(err)
	}
	defer a.CloseIdleConnections()
	err = a.Challenged(context.Background(), 401, nil, "")
	var ie *oauth.InteractionRequiredError
	if !errors.Is(err, oauth.ErrInteractionRequired) || !errors.As(err, &ie) || ie.Resource != resource {
		t.Fatalf("error %v, want an InteractionRequiredError for %s", err, resource)
	}
	if !strings.Contains(err.Error(), "token store") || as.Authorizations.Load() != 0 {
		t.Errorf("error %q does not say what to do, or an authorization was sent (%d)", err, as.Authorizations.Load())
	}
}

func TestStoredTokenReused(t *testing.T) {
	as := &oauthtest.Server{}
	resource, _ := setup(t, as)
	store := &oauth.FileStore{Path: filepath.Join(t.TempDir(), "tokens.json")}
	ctx := context.Background()
	first := newAuthorizer(t, resource, oauth.Config{Store: store})
	if err := first.Challenged(ctx, 401, nil, ""); err != nil {
		t.Fatal(err)
	}
	// A new process: no browser, yet the stored token serves.
	second := newAuthorizer(t, resource, oauth.Config{Store: store, Browser: stopBrowser})
	if err := second.Challenged(ctx, 401, nil, ""); err != nil {
		t.Fatal(err)
	}
	a, _ := first.Token(ctx)
	b, _ := second.Token(ctx)
	if a == "" || a != b || as.CodeGrants.Load() != 1 {
		t.Errorf("tokens %q and %q, %d code grants", a, b, as.CodeGrants.Load())
	}
}

func TestFileStore(t *testing.T) {
	dir := t.TempDir()
	s := &oauth.FileStore{Path: filepath.Join(dir, "tokens.json")}
	ctx := context.Background()
	k1, k2 := oauth.Key{Resource: "https://a/mcp", Issuer: "https://as"}, oauth.Key{Resource: "https://b/mcp", Issuer: "https://as"}
	if tok, err := s.Load(ctx, k1); tok != nil || err != nil {
		t.Fatalf("empty store: %v, %v", tok, err)
	}
	tok := &oauth.Token{AccessToken: "secret-access", RefreshToken: "secret-refresh", Scopes: []string{"read"},
		Client: oauth.Registration{ID: "c", Secret: "secret-client", AuthMethod: oauth.AuthBasic}}
	if err := s.Save(ctx, k1, tok); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(ctx, k2, &oauth.Token{AccessToken: "other"}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(s.Path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	got, err := s.Load(ctx, k1)
	if err != nil || got.AccessToken != tok.AccessToken || got.RefreshToken != tok.RefreshToken || got.Client != tok.Client {
		t.Fatalf("loaded %+v, %v", got, err)
	}
	if err := s.Save(ctx, k1, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Load(ctx, k1); got != nil {
		t.Errorf("deleted token still there")
	}
	if got, _ := s.Load(ctx, k2); got == nil || got.AccessToken != "other" {
		t.Errorf("the other key was lost: %+v", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
	if err := os.WriteFile(s.Path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx, k1); err == nil {
		t.Error("a corrupt file loads without error")
	}
}

func TestSecretsNeverPrinted(t *testing.T) {
	tok := oauth.Token{AccessToken: "sentinel-access", RefreshToken: "sentinel-refresh",
		Client: oauth.Registration{ID: "c", Secret: "sentinel-client"}}
	var logged strings.Builder
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("token", "tok", tok, "secret", tok.AccessToken)
	for _, s := range []string{fmt.Sprint(tok), fmt.Sprintf("%+v %#v %s %q %x", tok, tok, tok.AccessToken, tok.RefreshToken, tok.Client.Secret), logged.String()} {
		if strings.Contains(s, "sentinel") {
			t.Errorf("secret printed: %s", s)
		}
	}
	// A TokenStore still gets the values.
	b, _ := json.Marshal(tok)
	if !strings.Contains(string(b), "sentinel-access") {
		t.Errorf("json lost the token: %s", b)
	}
}

func TestPKCEVerifierMatches(t *testing.T) {
	// The test AS refuses a code whose verifier does not hash to the
	// challenge; this checks the hash the AS computes is S256 itself.
	v := "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk" // RFC 7636 Appendix B
	sum := sha256.Sum256([]byte(v))
	if got := base64.RawURLEncoding.EncodeToString(sum[:]); got != "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM" {
		t.Errorf("S256(%s) = %s", v, got)
	}
}

// A token endpoint that sends expires_in as a string, and token_type in
// lower case, is understood.
func TestTokenReplyVariants(t *testing.T) {
	f := newFixture(t, map[string]func(string) any{
		"/.well-known/oauth-protected-resource/mcp": func(b string) any {
			return map[string]any{"resource": b + "/mcp", "authorization_servers": []string{b}}
		},
		"/.well-known/oauth-authorization-server": func(b string) any { return asMeta(b) },
		"/token": func(string) any {
			return map[string]any{"access_token": "tok", "token_type": "bearer", "expires_in": "3600"}
		},
	})
	consent := oauth.BrowserFunc(func(_ context.Context, authURL, redirect string) (*url.URL, error) {
		u, _ := url.Parse(authURL)
		back, _ := url.Parse(redirect)
		back.RawQuery = url.Values{"code": {"c"}, "state": {u.Query().Get("state")}, "iss": {f.srv.URL}}.Encode()
		return back, nil
	})
	a := newAuthorizer(t, f.srv.URL+"/mcp", oauth.Config{ClientID: "app", Browser: consent})
	ctx := context.Background()
	if err := a.Challenged(ctx, 401, nil, ""); err != nil {
		t.Fatal(err)
	}
	before := len(f.paths())
	tok, err := a.Token(ctx)
	if tok != "tok" || err != nil {
		t.Fatalf("token %q, %v", tok, err)
	}
	if len(f.paths()) != before {
		t.Errorf("a fresh token was refreshed: %v", f.paths()[before:])
	}
}

// A Browser that ignores its context delays the authorization no longer
// than the context.
func TestDeafBrowserAbandoned(t *testing.T) {
	as := &oauthtest.Server{}
	resource, _ := setup(t, as)
	called, release, returned := make(chan struct{}), make(chan struct{}), make(chan struct{})
	a := newAuthorizer(t, resource, oauth.Config{Browser: oauth.BrowserFunc(func(context.Context, string, string) (*url.URL, error) {
		defer close(returned)
		close(called)
		<-release // deaf to ctx
		return nil, errStop
	})})
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, 1)
	go func() { errs <- a.Challenged(ctx, 401, nil, "") }()
	<-called
	cancel()
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
	close(release)
	<-returned
}

// A token endpoint that quotes the refresh token in its refusal does not
// get it into the error.
func TestRefusalScrubbed(t *testing.T) {
	var refreshes atomic.Int32
	f := newFixture(t, map[string]func(string) any{
		"/.well-known/oauth-protected-resource/mcp": func(b string) any {
			return map[string]any{"resource": b + "/mcp", "authorization_servers": []string{b}}
		},
		"/.well-known/oauth-authorization-server": func(b string) any { return asMeta(b) },
	})
	f.srv.Config.Handler = func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/token" {
				next.ServeHTTP(w, r)
				return
			}
			_ = r.ParseForm()
			w.Header().Set("Content-Type", "application/json")
			if r.PostForm.Get("grant_type") == "refresh_token" {
				refreshes.Add(1)
				w.WriteHeader(http.StatusBadRequest)
				_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant", "error_description": "refresh token " + r.PostForm.Get("refresh_token") + " revoked"})
				return
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "tok", "token_type": "Bearer", "refresh_token": "rt-sentinel"})
		})
	}(f.srv.Config.Handler)
	consent := oauth.BrowserFunc(func(_ context.Context, authURL, redirect string) (*url.URL, error) {
		u, _ := url.Parse(authURL)
		back, _ := url.Parse(redirect)
		back.RawQuery = url.Values{"code": {"c"}, "state": {u.Query().Get("state")}}.Encode()
		return back, nil
	})
	var logs strings.Builder
	a := newAuthorizer(t, f.srv.URL+"/mcp", oauth.Config{ClientID: "app", Browser: consent,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	ctx := context.Background()
	if err := a.Challenged(ctx, 401, nil, ""); err != nil {
		t.Fatal(err)
	}
	// The server refuses the token: the refresh is refused too, then a new
	// sign-in (the same consent) succeeds.
	if err := a.Challenged(ctx, 401, nil, "tok"); err != nil {
		t.Fatal(err)
	}
	if refreshes.Load() != 1 {
		t.Fatalf("%d refreshes", refreshes.Load())
	}
	if !strings.Contains(logs.String(), "invalid_grant") || strings.Contains(logs.String(), "rt-sentinel") {
		t.Errorf("log: %s", logs.String())
	}
}

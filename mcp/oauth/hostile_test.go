package oauth_test

// Hostile MCP servers and authorization servers on 127.0.0.1: each test
// gives the Authorizer a credential (a client secret, a workload JWT, a
// refresh token, a PKCE verifier) and checks that it never reaches an
// origin it does not belong to.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"git.rickub.com/bots-garden/mini-me/mcp/oauth"
)

// recorder is a server on 127.0.0.1 that records every request it gets
// (method, URL, headers, body, decoded Basic credentials) before handing
// it to the handler set for its path (404 for the others).
type recorder struct {
	srv *httptest.Server

	mu       sync.Mutex
	seen     []string
	handlers map[string]http.HandlerFunc
}

func newRecorder(t *testing.T) *recorder {
	t.Helper()
	r := &recorder{handlers: map[string]http.HandlerFunc{}}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(strings.NewReader(string(body)))
		id, secret, _ := req.BasicAuth()
		r.mu.Lock()
		r.seen = append(r.seen, fmt.Sprintf("%s %s %v %s basic=%s:%s", req.Method, req.URL, req.Header, body, id, secret))
		h := r.handlers[req.URL.Path]
		r.mu.Unlock()
		if h == nil {
			http.NotFound(w, req)
			return
		}
		h(w, req)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *recorder) url() string { return r.srv.URL }

// handle sets (or replaces) the handler of path.
func (r *recorder) handle(path string, h http.HandlerFunc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.handlers[path] = h
}

// saw reports whether any request held s.
func (r *recorder) saw(s string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, req := range r.seen {
		if strings.Contains(req, s) {
			return true
		}
	}
	return false
}

// count returns how many requests came.
func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.seen)
}

// serveAS makes r an authorization server: metadata (issuer r.url()),
// an authorization endpoint that consents at once, a registration
// endpoint, and a token endpoint issuing access and refresh tokens.
func serveAS(r *recorder) {
	iss := r.url()
	r.handle("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		writeTestJSON(w, 200, map[string]any{
			"issuer": iss, "authorization_endpoint": iss + "/authorize", "token_endpoint": iss + "/token",
			"registration_endpoint": iss + "/register", "code_challenge_methods_supported": []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post", "none"},
		}, nil)
	})
	r.handle("/authorize", func(w http.ResponseWriter, req *http.Request) {
		q := req.URL.Query()
		http.Redirect(w, req, q.Get("redirect_uri")+"?code=c-"+randomHex()+"&state="+q.Get("state")+"&iss="+iss, http.StatusFound)
	})
	r.handle("/register", func(w http.ResponseWriter, _ *http.Request) {
		writeTestJSON(w, 201, map[string]any{"client_id": "dyn-" + randomHex(), "token_endpoint_auth_method": "none"}, nil)
	})
	r.handle("/token", func(w http.ResponseWriter, _ *http.Request) {
		writeTestJSON(w, 200, map[string]any{"access_token": "at-" + randomHex(), "refresh_token": "rt-" + randomHex(),
			"token_type": "Bearer", "expires_in": 3600}, nil)
	})
}

// serveResource makes r an MCP server's resource metadata naming the
// issuer that as returns when it is fetched.
func serveResource(r *recorder, as func() string) string {
	r.handle("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, _ *http.Request) {
		writeTestJSON(w, 200, map[string]any{"resource": r.url() + "/mcp", "authorization_servers": []string{as()}}, nil)
	})
	return r.url() + "/mcp"
}

// The Authorizer's HTTP client never re-sends a POST (a secret, a code
// verifier) on a redirect, and takes no metadata from another origin.
func TestRedirectsKeepCredentialsHome(t *testing.T) {
	const secret = "post-secret-value"
	for _, tc := range []struct {
		name string
		path string
		code int
		cfg  oauth.Config
	}{
		{"token endpoint 307", "/token", http.StatusTemporaryRedirect, oauth.Config{ClientID: "pre", ClientSecret: secret, TokenEndpointAuth: oauth.AuthPost}},
		{"token endpoint 308", "/token", http.StatusPermanentRedirect, oauth.Config{ClientID: "pre", ClientSecret: secret, TokenEndpointAuth: oauth.AuthPost}},
		{"registration endpoint 307", "/register", http.StatusTemporaryRedirect, oauth.Config{}},
		{"metadata to another origin", "/.well-known/oauth-authorization-server", http.StatusFound, oauth.Config{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			as, evil, rs := newRecorder(t), newRecorder(t), newRecorder(t)
			serveAS(as)
			serveAS(evil)
			// The other origin copies the real issuer, to pass the issuer check.
			evil.handle("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
				e := evil.url()
				writeTestJSON(w, 200, map[string]any{"issuer": as.url(), "authorization_endpoint": e + "/authorize", "token_endpoint": e + "/token",
					"registration_endpoint": e + "/register", "code_challenge_methods_supported": []string{"S256"}}, nil)
			})
			as.handle(tc.path, func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, evil.url()+tc.path, tc.code)
			})
			cfg := tc.cfg
			if cfg.ClientID != "" {
				cfg.Issuer = as.url()
			}
			a := newAuthorizer(t, serveResource(rs, as.url), cfg)
			if _, err := authorizeNow(t, a); err == nil {
				t.Fatal("the flow succeeded through a redirect")
			}
			if evil.count() != 0 || evil.saw(secret) {
				t.Errorf("the other origin got %d requests", evil.count())
			}
		})
	}
}

// A metadata redirect within the authorization server's origin is still
// followed.
func TestSameOriginMetadataRedirectFollowed(t *testing.T) {
	as, rs := newRecorder(t), newRecorder(t)
	serveAS(as)
	meta := as.handlers["/.well-known/oauth-authorization-server"]
	as.handle("/moved", meta)
	as.handle("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/moved", http.StatusMovedPermanently)
	})
	a := newAuthorizer(t, serveResource(rs, as.url), oauth.Config{})
	if _, err := authorizeNow(t, a); err != nil {
		t.Fatal(err)
	}
}

// attacker answers every connection to a host that is not 127.0.0.1: a
// network attacker on a plain http path.
func attacker(t *testing.T) (*recorder, *http.Client) {
	evil := newRecorder(t)
	serveAS(evil)
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		if !strings.HasPrefix(addr, "127.0.0.1:") {
			addr = evil.srv.Listener.Addr().String()
		}
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return evil, &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// Plain http is refused for everything off loopback: the server, its
// resource metadata, the authorization server, the identity provider.
func TestPlainHTTPOffLoopbackRefused(t *testing.T) {
	evil, hc := attacker(t)
	if _, err := oauth.New("http://mcp.example/mcp", oauth.Config{HTTPClient: hc}); err == nil {
		t.Error("a plain http server off loopback was accepted")
	}
	if a, err := oauth.New("http://mcp.example/mcp", oauth.Config{HTTPClient: hc, InsecureHTTP: true}); err != nil {
		t.Errorf("InsecureHTTP: %v", err)
	} else {
		a.CloseIdleConnections()
	}

	rs := newRecorder(t)
	resource := serveResource(rs, func() string { return "http://as.example" })
	a := newAuthorizer(t, resource, oauth.Config{HTTPClient: hc})
	if _, err := authorizeNow(t, a); !errors.Is(err, oauth.ErrMetadata) {
		t.Errorf("an http issuer: %v, want ErrMetadata", err)
	}
	err := a.Challenged(context.Background(), 401, challenge(t, `Bearer resource_metadata="http://prm.example/.well-known/oauth-protected-resource"`), "")
	if !errors.Is(err, oauth.ErrMetadata) {
		t.Errorf("an http resource metadata URL: %v, want ErrMetadata", err)
	}

	as := newRecorder(t)
	serveAS(as)
	const idToken = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ1c2VyIn0.c2lnbmF0dXJl"
	a = newAuthorizer(t, serveResource(newRecorder(t), as.url), oauth.Config{HTTPClient: hc, Issuer: as.url(), ClientID: "c",
		Grant: oauth.EnterpriseManaged{TokenEndpoint: "http://idp.example/token", IDToken: func(context.Context) (oauth.Secret, error) { return idToken, nil }}})
	if _, err := authorizeNow(t, a); !errors.Is(err, oauth.ErrMetadata) {
		t.Errorf("an http identity provider: %v, want ErrMetadata", err)
	}
	if evil.count() != 0 {
		t.Errorf("the attacker got %d requests", evil.count())
	}
}

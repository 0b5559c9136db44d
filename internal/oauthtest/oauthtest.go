// Package oauthtest is an OAuth 2.1 authorization server and a protecting
// middleware for tests, on 127.0.0.1: metadata, dynamic registration, an
// authorization endpoint that consents at once, and a token endpoint that
// checks PKCE and counts its requests.
package oauthtest

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"git.rickub.com/bots-garden/mini-me/mcp/oauth"
)

// Sentinel is part of every token issued, for tests that look for tokens
// where none should be.
const Sentinel = "sentinel-token-value"

// Server is an authorization server. Configure it before Start.
type Server struct {
	// Path is the issuer's path ("" or "/tenant").
	Path string
	// ExpiresIn is the access tokens' lifetime in seconds; 0 means 3600.
	ExpiresIn int
	// Refresh issues refresh tokens (rotated on every refresh).
	Refresh bool
	// RevokeOnReuse revokes the whole grant (every access and refresh
	// token descended from one sign-in) when a spent refresh token comes
	// back, as authorization servers that rotate refresh tokens do; the
	// reuse is counted in Reuses.
	RevokeOnReuse bool
	// NoIss leaves iss out of authorization responses while the metadata
	// still advertises it; WrongIss sends this value instead.
	NoIss    bool
	WrongIss string
	// Deny answers the authorization with error=access_denied.
	Deny bool
	// AuthMethods are the token endpoint authentication methods the
	// metadata lists; nil means "none" alone.
	AuthMethods []string
	// ClientID and ClientSecret, when set, are the only client the
	// client_credentials grant accepts (Basic authentication).
	ClientID, ClientSecret string
	// Assertion, when set, is the only assertion the jwt-bearer grant
	// accepts.
	Assertion string

	srv *httptest.Server

	// TokenRequests counts token endpoint requests, by grant type.
	CodeGrants, RefreshGrants, MachineGrants atomic.Int32
	// Authorizations counts authorization requests.
	Authorizations atomic.Int32
	// Registrations counts registrations.
	Registrations atomic.Int32
	// Reuses counts spent refresh tokens sent again.
	Reuses atomic.Int32

	mu        sync.Mutex
	clients   map[string]bool     // registered client ids it knows
	challenge map[string]string   // code → PKCE challenge
	scopes    map[string][]string // code or token → scopes
	refresh   map[string][]string // refresh token → scopes
	grant     map[string]int      // access or refresh token → its grant (the n of its sign-in)
	spent     map[string]int      // rotated refresh token → its grant
	n         int
	resources []string // resource parameters seen
}

// Start serves on 127.0.0.1 and returns the issuer.
func (s *Server) Start() string {
	s.challenge, s.scopes, s.refresh, s.clients = map[string]string{}, map[string][]string{}, map[string][]string{}, map[string]bool{}
	s.grant, s.spent = map[string]int{}, map[string]int{}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-authorization-server"+s.Path, s.metadata)
	mux.HandleFunc(s.Path+"/authorize", s.authorize)
	mux.HandleFunc(s.Path+"/token", s.token)
	mux.HandleFunc(s.Path+"/register", s.register)
	s.srv = httptest.NewServer(mux)
	return s.Issuer()
}

// Issuer returns the issuer identifier.
func (s *Server) Issuer() string { return s.srv.URL + s.Path }

// Close stops the server.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Resources returns the resource parameters of the requests seen.
func (s *Server) Resources() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.resources)
}

// Valid returns the scopes of an access token, and whether it is valid.
func (s *Server) Valid(token string) ([]string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sc, ok := s.scopes[token]
	return sc, ok && strings.HasPrefix(token, "at-")
}

// Revoke invalidates every access token (as if they had expired early).
func (s *Server) Revoke() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.scopes {
		if strings.HasPrefix(k, "at-") {
			delete(s.scopes, k)
		}
	}
}

// Follow is a Browser for tests: it fetches the authorization URL and
// returns the redirect's Location, as a user's browser arrives at the
// redirect URL; an error page (http 4xx, 5xx) is an *oauth.ErrorPageError
// whose Code is the page's text before its first colon.
var Follow = oauth.BrowserFunc(func(ctx context.Context, authURL, _ string) (*url.URL, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, err
	}
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer hc.CloseIdleConnections()
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1000))
		code, desc, _ := strings.Cut(strings.TrimSpace(string(b)), ":")
		return nil, &oauth.ErrorPageError{Code: code, Description: strings.TrimSpace(desc)}
	}
	return resp.Location()
})

// Forget forgets every client it registered and every refresh token, as
// a restarted server that keeps them in memory does: their authorization
// requests get an error page, their token requests invalid_client.
func (s *Server) Forget() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.clients)
	clear(s.refresh)
}

// forgotten reports whether id is a client it registered and forgot.
func (s *Server) forgotten(id string) bool {
	return strings.HasPrefix(id, "client-") && !s.clients[id]
}

func (s *Server) authMethods() []string {
	if s.AuthMethods == nil {
		return []string{"none"}
	}
	return s.AuthMethods
}

func (s *Server) metadata(w http.ResponseWriter, _ *http.Request) {
	iss := s.Issuer()
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                         iss,
		"authorization_endpoint":                         iss + "/authorize",
		"token_endpoint":                                 iss + "/token",
		"registration_endpoint":                          iss + "/register",
		"response_types_supported":                       []string{"code"},
		"code_challenge_methods_supported":               []string{"S256"},
		"token_endpoint_auth_methods_supported":          s.authMethods(),
		"scopes_supported":                               []string{"read", "write", "offline_access"},
		"authorization_response_iss_parameter_supported": true,
	})
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	s.Registrations.Add(1)
	var req struct {
		RedirectURIs []string `json:"redirect_uris"`
	}
	if json.NewDecoder(r.Body).Decode(&req) != nil || len(req.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	s.mu.Lock()
	id := fmt.Sprintf("client-%d", s.Registrations.Load())
	s.clients[id] = true
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{"client_id": id, "redirect_uris": req.RedirectURIs, "token_endpoint_auth_method": "none"})
}

func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	s.Authorizations.Add(1)
	q := r.URL.Query()
	ru, err := url.Parse(q.Get("redirect_uri"))
	if err != nil || !ru.IsAbs() || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	unknown := s.forgotten(q.Get("client_id"))
	s.mu.Unlock()
	if unknown {
		http.Error(w, "invalid_client: unknown client", http.StatusBadRequest)
		return
	}
	back := ru.Query()
	back.Set("state", q.Get("state"))
	switch {
	case s.WrongIss != "":
		back.Set("iss", s.WrongIss)
	case !s.NoIss:
		back.Set("iss", s.Issuer())
	}
	if s.Deny {
		back.Set("error", "access_denied")
	} else {
		s.mu.Lock()
		s.n++
		code := fmt.Sprintf("code-%d", s.n)
		s.challenge[code] = q.Get("code_challenge")
		s.scopes[code] = strings.Fields(q.Get("scope"))
		s.resources = append(s.resources, q.Get("resource"))
		s.mu.Unlock()
		back.Set("code", code)
	}
	ru.RawQuery = back.Encode()
	http.Redirect(w, r, ru.String(), http.StatusFound)
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resources = append(s.resources, r.PostForm.Get("resource"))
	if s.forgotten(r.PostForm.Get("client_id")) {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	var scopes []string
	grant := s.n + 1 // a new grant, unless a refresh continues one
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		s.CodeGrants.Add(1)
		code := r.PostForm.Get("code")
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		want, ok := s.challenge[code]
		if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != want {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant", "error_description": "PKCE verifier does not match"})
			return
		}
		delete(s.challenge, code)
		scopes = s.scopes[code]
	case "refresh_token":
		s.RefreshGrants.Add(1)
		rt := r.PostForm.Get("refresh_token")
		sc, ok := s.refresh[rt]
		if !ok {
			if g, reused := s.spent[rt]; reused {
				s.Reuses.Add(1)
				if s.RevokeOnReuse {
					s.revoke(g)
				}
			}
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant", "error_description": "refresh token reused or unknown"})
			return
		}
		delete(s.refresh, rt) // rotation: a second use fails
		grant = s.grant[rt]
		s.spent[rt] = grant
		scopes = sc
	case "client_credentials":
		s.MachineGrants.Add(1)
		id, secret, ok := r.BasicAuth()
		if s.ClientID == "" || !ok || id != s.ClientID || secret != s.ClientSecret {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
			return
		}
	case "urn:ietf:params:oauth:grant-type:jwt-bearer":
		s.MachineGrants.Add(1)
		if s.Assertion == "" || r.PostForm.Get("assertion") != s.Assertion {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		}
	default:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	s.n++
	at := fmt.Sprintf("at-%d-%s", s.n, Sentinel)
	s.scopes[at] = scopes
	s.grant[at] = grant
	exp := s.ExpiresIn
	if exp == 0 {
		exp = 3600
	}
	reply := map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": exp, "scope": strings.Join(scopes, " ")}
	if s.Refresh {
		rt := fmt.Sprintf("rt-%d-%s", s.n, Sentinel)
		s.refresh[rt] = scopes
		s.grant[rt] = grant
		reply["refresh_token"] = rt
	}
	writeJSON(w, http.StatusOK, reply)
}

// revoke invalidates every token of grant g; s.mu is held.
func (s *Server) revoke(g int) {
	for tok, tg := range s.grant {
		if tg == g {
			delete(s.scopes, tok)
			delete(s.refresh, tok)
		}
	}
}

// Protect guards next: a request without a valid token of as gets 401
// with a Bearer challenge naming the PRM that prm serves (and the scope
// the resource requires); one whose token lacks scope gets 403
// insufficient_scope.
func Protect(next http.Handler, as *Server, scope string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		prm := "http://" + r.Host + "/.well-known/oauth-protected-resource/mcp"
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		scopes, ok := as.Valid(tok)
		switch {
		case !ok:
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="invalid_token", resource_metadata=%q, scope=%q`, prm, scope))
			w.WriteHeader(http.StatusUnauthorized)
		case scope != "" && !slices.Contains(scopes, scope):
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", resource_metadata=%q, scope=%q`, prm, scope))
			w.WriteHeader(http.StatusForbidden)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// ResourceMetadata serves the PRM of the resource at <origin>/mcp, naming
// as.
func ResourceMetadata(as *Server) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{
			"resource":              "http://" + r.Host + "/mcp",
			"authorization_servers": []string{as.Issuer()},
		})
	})
}

// Resource is a protected MCP endpoint: the PRM at its well-known path
// and mcp, guarded by Protect, at /mcp.
func Resource(mcp http.Handler, as *Server, scope string) *httptest.Server {
	mux := http.NewServeMux()
	mux.Handle("/.well-known/oauth-protected-resource/mcp", ResourceMetadata(as))
	mux.Handle("/mcp", Protect(mcp, as, scope))
	return httptest.NewServer(mux)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

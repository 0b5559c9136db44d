//go:build unix

package interop

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/oauth"
)

// The OAuth peer of these tests is oidc-provider (testdata/node/oidc.mjs
// says how it is configured), a real authorization server, started on
// 127.0.0.1 by the test; the MCP server it protects is a go-sdk server
// behind a middleware that verifies the JWT access tokens against the
// authorization server's JWKS (jwtResource). Every count the tests assert
// comes from the authorization server's own events.

// authServer is a running oidc-provider.
type authServer struct {
	t      *testing.T
	node   string
	dir    string
	env    []string
	proc   *process
	issuer string
}

// asEvent is one event of the provider (see oidc.mjs).
type asEvent struct {
	Event     string `json:"event"`
	GrantType string `json:"grant_type"`
	ClientID  string `json:"client_id"`
	Error     string `json:"error"`
	At        int64  `json:"at"` // unix milliseconds
}

// Clients pre-registered at every authorization server of these tests.
const oidcClients = `[
 {"client_id":"basic","client_secret":"basic-secret","token_endpoint_auth_method":"client_secret_basic","grant_types":["authorization_code","refresh_token"],"redirect_uris":["` + oauth.DefaultRedirectURL + `"]},
 {"client_id":"post","client_secret":"post-secret","token_endpoint_auth_method":"client_secret_post","grant_types":["authorization_code","refresh_token"],"redirect_uris":["` + oauth.DefaultRedirectURL + `"]},
 {"client_id":"public","token_endpoint_auth_method":"none","application_type":"native","grant_types":["authorization_code","refresh_token"],"redirect_uris":["` + oauth.DefaultRedirectURL + `"]},
 {"client_id":"machine","client_secret":"machine-secret","grant_types":["client_credentials"],"redirect_uris":[],"response_types":[],"scope":"mcp:read mcp:write"}
]`

// startAuthServer starts oidc-provider with access tokens of ttl seconds
// (and refresh tokens unless noRefresh).
func startAuthServer(t *testing.T, ttl int, noRefresh bool) *authServer {
	t.Helper()
	node, dir := everythingInstall(t)
	nr := "0"
	if noRefresh {
		nr = "1"
	}
	as := &authServer{t: t, node: node, dir: dir, env: []string{
		"MINIME_NPM_DIR=" + dir,
		"OIDC_JWKS=" + filepath.Join(t.TempDir(), "jwks.json"),
		fmt.Sprintf("OIDC_TTL=%d", ttl),
		"OIDC_NO_REFRESH=" + nr,
		"OIDC_CLIENTS=" + oidcClients,
	}}
	as.start("0")
	return as
}

const issuerLine = "oidc: issuer "

func (as *authServer) start(port string) {
	as.t.Helper()
	script, err := filepath.Abs(filepath.Join("testdata", "node", "oidc.mjs"))
	require.NoError(as.t, err)
	// The peer, not mini-me, is started again once if it stalls before
	// listening (now and then it printed nothing after its warning for
	// 30 s, cause not found); the test says so in its log.
	var line string
	for attempt := 1; ; attempt++ {
		as.proc = startProcess(as.t, as.dir, append(slices.Clone(as.env), "OIDC_PORT="+port), as.node, script)
		if line, err = as.proc.waitLine(issuerLine, startTimeout); err == nil {
			break
		}
		require.Less(as.t, attempt, 2, "oidc-provider did not start, twice: %v; output:\n%s", err, as.proc.out)
		as.t.Logf("oidc-provider did not start (%v), starting it again; output:\n%s", err, as.proc.out)
		as.proc.stop()
	}
	iss := strings.TrimPrefix(line, issuerLine)
	require.True(as.t, as.issuer == "" || as.issuer == iss, "restarted as %s, not %s", iss, as.issuer)
	as.issuer = iss
}

// restart stops the server and starts a new one on the same port, with
// the same signing keys and none of the old one's clients or grants.
func (as *authServer) restart() {
	as.t.Helper()
	as.proc.stop()
	u, _ := url.Parse(as.issuer)
	as.start(u.Port())
}

// events returns the provider's events so far.
func (as *authServer) events() []asEvent {
	as.t.Helper()
	resp, err := http.Get(as.issuer + "/_events")
	require.NoError(as.t, err)
	defer resp.Body.Close()
	var evs []asEvent
	require.NoError(as.t, json.NewDecoder(resp.Body).Decode(&evs))
	return evs
}

// count returns how many events are named name (and, when set, have the
// grant type gt).
func (as *authServer) count(name, gt string) int {
	n := 0
	for _, e := range as.events() {
		if e.Event == name && (gt == "" || e.GrantType == gt) {
			n++
		}
	}
	return n
}

// tokenRequests counts the token endpoint requests of grant type gt,
// granted or refused.
func (as *authServer) tokenRequests(gt string) int {
	return as.count("grant.success", gt) + as.count("grant.error", gt)
}

// jwtResource is an MCP server (go-sdk) whose endpoint accepts only the
// authorization server's JWT access tokens for it: signature (RS256, keys
// from the JWKS, kept once fetched), issuer, audience, expiry and scope.
// The tool "read" needs mcp:read, "write" needs mcp:write.
type jwtResource struct {
	srv    *httptest.Server
	issuer string

	mu       sync.Mutex
	keys     map[string]*rsa.PublicKey
	accepted []time.Time // the expiry of each token accepted
}

func startJWTResource(t *testing.T, issuer string) *jwtResource {
	t.Helper()
	r := &jwtResource{issuer: issuer, keys: map[string]*rsa.PublicKey{}}
	s := sdk.NewServer(&sdk.Implementation{Name: "jwt-resource", Version: "1.0.0"}, nil)
	for _, name := range []string{"read", "write"} {
		sdk.AddTool(s, &sdk.Tool{Name: name, Description: "Needs mcp:" + name + "."},
			func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: name + " done"}}}, nil, nil
			})
	}
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"resource": r.url(), "authorization_servers": []string{r.issuer}, "scopes_supported": []string{"mcp:read", "mcp:write"},
		})
	})
	mux.Handle("/mcp", r.protect(h))
	r.srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		// A client that could not sign out of its session (its token
		// expired with the authorization server down) leaves it open.
		for ss := range s.Sessions() {
			_ = ss.Close()
		}
		r.srv.Close()
	})
	return r
}

func (r *jwtResource) url() string { return r.srv.URL + "/mcp" }

func (r *jwtResource) protect(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		prm := r.srv.URL + "/.well-known/oauth-protected-resource/mcp"
		tok, _ := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
		scopes, exp, err := r.verify(req.Context(), tok)
		if err != nil {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="invalid_token", resource_metadata=%q, scope="mcp:read"`, prm))
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		need := "mcp:read"
		if req.Method == http.MethodPost {
			body, _ := io.ReadAll(req.Body)
			req.Body = io.NopCloser(strings.NewReader(string(body)))
			var msg struct {
				Method string `json:"method"`
				Params struct {
					Name string `json:"name"`
				} `json:"params"`
			}
			if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" && msg.Params.Name == "write" {
				need = "mcp:write"
			}
		}
		if !slices.Contains(scopes, need) {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", resource_metadata=%q, scope="mcp:read mcp:write"`, prm))
			http.Error(w, "scope "+need+" needed", http.StatusForbidden)
			return
		}
		r.mu.Lock()
		r.accepted = append(r.accepted, exp)
		r.mu.Unlock()
		next.ServeHTTP(w, req)
	})
}

// lastExpiry returns the expiry of the last token accepted.
func (r *jwtResource) lastExpiry() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.accepted) == 0 {
		return time.Time{}
	}
	return r.accepted[len(r.accepted)-1]
}

// verify checks a JWT access token and returns its scopes and expiry.
func (r *jwtResource) verify(ctx context.Context, tok string) ([]string, time.Time, error) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return nil, time.Time{}, errors.New("not a JWT")
	}
	var hdr struct{ Alg, Kid string }
	if err := decodeSegment(parts[0], &hdr); err != nil || hdr.Alg != "RS256" {
		return nil, time.Time{}, fmt.Errorf("header %+v: %v", hdr, err)
	}
	key, err := r.key(ctx, hdr.Kid)
	if err != nil {
		return nil, time.Time{}, err
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return nil, time.Time{}, err
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(key, crypto.SHA256, sum[:], sig); err != nil {
		return nil, time.Time{}, err
	}
	var c struct {
		Iss   string          `json:"iss"`
		Aud   json.RawMessage `json:"aud"`
		Exp   int64           `json:"exp"`
		Scope string          `json:"scope"`
	}
	if err := decodeSegment(parts[1], &c); err != nil {
		return nil, time.Time{}, err
	}
	var aud []string
	if json.Unmarshal(c.Aud, &aud) != nil {
		var one string
		_ = json.Unmarshal(c.Aud, &one)
		aud = []string{one}
	}
	exp := time.Unix(c.Exp, 0)
	switch {
	case c.Iss != r.issuer:
		return nil, time.Time{}, fmt.Errorf("issuer %q", c.Iss)
	case !slices.Contains(aud, r.url()):
		return nil, time.Time{}, fmt.Errorf("audience %v", aud)
	case !time.Now().Before(exp):
		return nil, time.Time{}, errors.New("expired")
	}
	return strings.Fields(c.Scope), exp, nil
}

func decodeSegment(s string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// key returns the signing key kid, fetching the JWKS when it is unknown.
func (r *jwtResource) key(ctx context.Context, kid string) (*rsa.PublicKey, error) {
	r.mu.Lock()
	k, ok := r.keys[kid]
	r.mu.Unlock()
	if ok {
		return k, nil
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.issuer+"/jwks", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var set struct {
		Keys []struct{ Kid, N, E string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&set); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, jk := range set.Keys {
		n, err1 := base64.RawURLEncoding.DecodeString(jk.N)
		e, err2 := base64.RawURLEncoding.DecodeString(jk.E)
		if err1 != nil || err2 != nil {
			continue
		}
		r.keys[jk.Kid] = &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
	}
	if k, ok := r.keys[kid]; ok {
		return k, nil
	}
	return nil, fmt.Errorf("no key %q", kid)
}

// approve is the Browser of these tests: it follows the authorization
// server's pages (oidc.mjs approves the sign-in and the consent at once)
// with a browser's cookie jar until the redirect to redirectURL, and
// reports an error page the server shows instead.
var approve = oauth.BrowserFunc(func(ctx context.Context, authURL, redirectURL string) (*url.URL, error) {
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer hc.CloseIdleConnections()
	next := authURL
	for range 10 {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, next, nil)
		if err != nil {
			return nil, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		if resp.StatusCode >= 400 {
			code := ""
			for _, c := range []string{"invalid_client", "invalid_redirect_uri", "invalid_request"} {
				if strings.Contains(string(body), c) {
					code = c
					break
				}
			}
			return nil, &oauth.ErrorPageError{Code: code, Description: fmt.Sprintf("http %d", resp.StatusCode)}
		}
		loc, err := resp.Location()
		if err != nil {
			return nil, fmt.Errorf("page %s (http %d) neither redirects nor fails", next, resp.StatusCode)
		}
		if strings.HasPrefix(loc.String(), redirectURL) {
			return loc, nil
		}
		next = loc.String()
	}
	return nil, errors.New("more than 10 redirects")
})

// oauthClient connects to the resource with an Authorizer of cfg (the
// approve Browser unless cfg names one).
func oauthClient(t *testing.T, r *jwtResource, cfg oauth.Config) (*mcp.Client, *oauth.Authorizer) {
	t.Helper()
	if cfg.Browser == nil {
		cfg.Browser = approve
	}
	a, err := oauth.New(r.url(), cfg)
	require.NoError(t, err)
	t.Cleanup(a.CloseIdleConnections)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := mcp.Connect(ctx, &mcp.HTTPTransport{URL: r.url(), Credentials: a}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c, a
}

// signedInPeer starts an authorization server (tokens of ttl seconds,
// refresh tokens unless noRefresh) and a resource, and a client of a
// registered client that signed in and called "read" once.
func signedInPeer(t *testing.T, ttl int, noRefresh bool) (*authServer, *jwtResource, *mcp.Client) {
	t.Helper()
	as := startAuthServer(t, ttl, noRefresh)
	r := startJWTResource(t, as.issuer)
	c, _ := oauthClient(t, r, oauth.Config{})
	require.NoError(t, callTool(c, "read"))
	return as, r, c
}

func callTool(c *mcp.Client, name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, name, map[string]any{})
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("tool %s failed", name)
	}
	return nil
}

// concurrentCalls calls name n times at once and returns the errors.
func concurrentCalls(c *mcp.Client, name string, n int) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = callTool(c, name)
		}()
	}
	wg.Wait()
	return errs
}

func requireNoErrors(t *testing.T, errs []error) {
	t.Helper()
	for i, err := range errs {
		require.NoError(t, err, "call %d", i)
	}
}

// pace runs step every 50 ms until it returns true, for d at most: the
// steps of a test that waits for a token's expiry while it calls.
func pace(t *testing.T, d time.Duration, step func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !step() {
		if time.Now().After(deadline) {
			t.Fatalf("not done after %v", d)
		}
		<-tick.C
	}
}

package oauth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"git.rickub.com/bots-garden/mini-me/internal/origin"
)

// Config configures an Authorizer. The zero value works with a server
// that offers Dynamic Client Registration, in a host that cannot show a
// browser (NonInteractive), with tokens kept in memory.
//
// Credentials held beforehand (a client secret or key, a Grant's
// assertions) go to one issuer only: Config.Issuer, which New requires
// with them ([ErrUnboundCredential]; [IssuerBindingError] where the
// server names another issuer). A token is refreshed
// only at the issuer, and as the client, it was obtained from. Every URL
// fetched or posted to (resource metadata, authorization server metadata
// and endpoints, the identity provider) must be https or http on a
// loopback host unless Config.InsecureHTTP; the Authorizer's HTTP client
// follows no redirect of a POST and no metadata redirect to another
// origin.
type Config struct {
	// ClientID is a client id registered beforehand at the authorization
	// server, or an https URL: the client's Client ID Metadata Document,
	// used where the authorization server advertises support for them.
	// Empty, or a document URL the server does not accept, means Dynamic
	// Client Registration.
	ClientID string
	// ClientSecret is the secret of a pre-registered ClientID; empty for a
	// public client.
	ClientSecret Secret
	// ClientKey, for a machine Grant, signs the client's private_key_jwt
	// assertions (RFC 7523 §2.2) instead of sending a ClientSecret: a P-256
	// ECDSA key (ES256) or an RSA key (RS256), see ParsePrivateKey.
	ClientKey *PrivateKey
	// Grant, when set, obtains tokens without a browser (ClientCredentials,
	// JWTBearer, EnterpriseManaged); nil means the authorization code flow.
	Grant Grant
	// DPoP binds tokens to a key pair of the Authorizer's own (RFC 9449)
	// where the authorization server supports DPoP with ES256: every token
	// request and every MCP request carries a proof, and the token is sent
	// as "Authorization: DPoP". Elsewhere tokens stay Bearer tokens.
	DPoP bool
	// Issuer binds the client's pre-registered credentials (ClientSecret,
	// ClientKey, the assertions of a Grant) to that authorization server:
	// another one never sees them. It is required with any of them (New
	// fails without it): the MCP server names its authorization server,
	// and a credential must not go to whichever one a spoofed or
	// compromised server names. Where the server names another issuer, a
	// machine Grant fails with an *IssuerBindingError, and the
	// authorization code flow registers a client there instead (Client ID
	// Metadata Document or Dynamic Client Registration). A pre-registered
	// ClientID without a secret is bound only by a set Issuer.
	Issuer string
	// Scopes are requested when the server's challenge names none; empty
	// means the resource's scopes_supported, or no scope parameter.
	Scopes []string
	// RedirectURL is the redirect URI; empty means DefaultRedirectURL.
	RedirectURL string
	// TokenEndpointAuth forces the token endpoint authentication method:
	// "client_secret_basic", "client_secret_post", "none" or (with
	// ClientKey) "private_key_jwt", used by a
	// pre-registered client and asked for in a registration (where the
	// server's answer has the last word). Empty chooses from the
	// authorization server's metadata.
	TokenEndpointAuth string
	// ClientName is the client_name sent in a registration; empty means
	// "mini-me".
	ClientName string
	// Browser shows the authorization page to the user; nil means
	// NonInteractive.
	Browser Browser
	// Store keeps tokens; nil means a MemoryStore of the Authorizer's own.
	Store TokenStore
	// HTTPClient sends the metadata, registration and token requests; nil
	// means a client of the Authorizer's own, whose idle connections
	// CloseIdleConnections releases. Either way the Authorizer follows no
	// redirect of a POST and no redirect to another origin (its
	// CheckRedirect runs before this client's own).
	HTTPClient *http.Client
	// Logger receives debug diagnostics (never a token); nil discards them.
	Logger *slog.Logger
	// InsecureHTTP, INSECURE, allows plain http on any host for the
	// server, its resource metadata and the authorization server (a
	// private network without TLS). Without it every URL the Authorizer
	// fetches or posts to, and the authorization endpoint, must be https
	// or http on a loopback host: on any other network path an attacker
	// could read the tokens and secrets, or choose the endpoints.
	InsecureHTTP bool
}

// Token endpoint authentication methods (RFC 7591 §2).
const (
	AuthBasic = "client_secret_basic"
	AuthPost  = "client_secret_post"
	AuthNone  = "none"
	// AuthPrivateKeyJWT authenticates with an assertion signed by
	// Config.ClientKey (RFC 7523 §2.2).
	AuthPrivateKeyJWT = "private_key_jwt"
)

// Authorizer holds the authorization of one MCP server: its metadata, the
// client's registrations (one per authorization server) and the current
// token. It is safe for concurrent use: at most one authorization or
// refresh runs at a time, and concurrent requests share its outcome.
//
// An [Authorizer] holds the authorization state of one MCP server. On the
// server's first 401 it discovers the Protected Resource Metadata (RFC 9728)
// and the authorization server's metadata (RFC 8414, OpenID Connect
// discovery), identifies the client (a pre-registered id, a Client ID
// Metadata Document, or Dynamic Client Registration, RFC 7591), sends the
// user through the authorization code flow with PKCE (S256 only), the
// resource parameter (RFC 8707) and the iss check (RFC 9207), and keeps
// the token in a [TokenStore], under a [Key] of resource, issuer and
// client. It refreshes tokens on a 401 and before they expire, when the
// smaller of 30 s and a tenth of their lifetime is left, with one refresh
// in flight shared by all concurrent requests (and, with a
// [LockingStore], by every process sharing the store); a token whose
// renewal fails is used until it expires, and a transient failure (no
// answer, a 5xx, a 429) keeps the refresh token, retried after a backoff
// that honours Retry-After: only a definitive refusal (invalid_grant and
// the like) ends the grant. It re-authorizes with the union
// of scopes on a 403 insufficient_scope (step-up), a bounded number of
// times, and registers again, once, with an authorization server that
// forgot its registration. A host reads [Authorizer.State], and calls
// [Authorizer.Refresh] and [Authorizer.SignOut].
type Authorizer struct {
	cfg      Config
	resource *url.URL
	log      *slog.Logger
	own      *http.Transport

	// flight holds the one authorization or refresh in progress; waiters
	// honour their contexts.
	flight chan struct{}

	mu      sync.Mutex
	tok     *Token
	key     Key             // where tok is stored
	meta    *ServerMetadata // of tok's issuer
	clients map[string]Registration

	// renewals counts the renewals run, renewErr is the last one's
	// outcome: callers that waited for one share it. failures counts the
	// failed ones in a row; no renewal starts before retryAt (see
	// renewalDelay).
	renewals uint64
	renewErr error
	failures int
	retryAt  time.Time

	dpop *dpopKey // nil without Config.DPoP

	clock func() time.Time // time.Now; tests move it forward
}

// New returns the Authorizer of the MCP server at serverURL.
func New(serverURL string, cfg Config) (*Authorizer, error) {
	u, err := url.Parse(serverURL)
	if err != nil || u.Host == "" || u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("oauth: server URL %q is not an http(s) URL", serverURL)
	}
	if !secure(u, cfg.InsecureHTTP) {
		return nil, fmt.Errorf("oauth: server URL %s is plain http off loopback: use https (or, on a private network without TLS, InsecureHTTP)", origin.Of(u))
	}
	switch cfg.TokenEndpointAuth {
	case "", AuthBasic, AuthPost, AuthNone:
	case AuthPrivateKeyJWT:
		if cfg.ClientKey == nil {
			return nil, fmt.Errorf("oauth: token endpoint auth method %s needs a ClientKey", AuthPrivateKeyJWT)
		}
	default:
		return nil, fmt.Errorf("oauth: unknown token endpoint auth method %q (want %s, %s, %s or %s)",
			cfg.TokenEndpointAuth, AuthBasic, AuthPost, AuthNone, AuthPrivateKeyJWT)
	}
	if cfg.ClientKey != nil && cfg.Grant == nil {
		return nil, errors.New("oauth: a ClientKey is for a machine Grant (the authorization code flow uses no client assertion)")
	}
	if err := checkBound(cfg); err != nil {
		return nil, err
	}
	if cfg.RedirectURL == "" {
		cfg.RedirectURL = DefaultRedirectURL
	}
	if _, err := url.Parse(cfg.RedirectURL); err != nil {
		return nil, fmt.Errorf("oauth: redirect URL: %w", err)
	}
	if cfg.ClientName == "" {
		cfg.ClientName = "mini-me"
	}
	if cfg.Browser == nil {
		cfg.Browser = NonInteractive{}
	}
	if cfg.Store == nil {
		cfg.Store = &MemoryStore{}
	}
	a := &Authorizer{cfg: cfg, resource: u, log: cfg.Logger, flight: make(chan struct{}, 1), clients: map[string]Registration{}}
	if cfg.DPoP {
		var err error
		if a.dpop, err = newDPoPKey(); err != nil {
			return nil, err
		}
	}
	if a.log == nil {
		a.log = slog.New(discard{})
	}
	if cfg.HTTPClient == nil {
		a.own = http.DefaultTransport.(*http.Transport).Clone()
	}
	return a, nil
}

func (a *Authorizer) now() time.Time {
	if a.clock != nil {
		return a.clock()
	}
	return time.Now()
}

// httpClient returns the client of the metadata, registration and token
// requests: Config.HTTPClient (or one of the Authorizer's own) with the
// redirect rule of credentialRedirects.
func (a *Authorizer) httpClient() *http.Client {
	if a.cfg.HTTPClient == nil {
		return &http.Client{Transport: a.own, Timeout: requestTimeout, CheckRedirect: credentialRedirects(nil)}
	}
	c := *a.cfg.HTTPClient
	c.CheckRedirect = credentialRedirects(c.CheckRedirect)
	return &c
}

// credentialRedirects refuses every redirect of a POST (a token,
// registration or token exchange request, whose body holds a secret, a
// code verifier or an assertion, and Go would send it again on a 307 or
// 308), and a GET's redirect to another origin (scheme, host or port):
// metadata is the issuer's own, or none. Other redirects go to next, or
// to the stock limit of ten.
func credentialRedirects(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		first := via[0]
		switch {
		case first.Method != http.MethodGet:
			return fmt.Errorf("oauth: refusing to follow a redirect of a %s request (its body holds credentials)", first.Method)
		case !origin.Same(req.URL, first.URL):
			return fmt.Errorf("%w: refusing a redirect from %s to another origin (%s)", ErrMetadata, origin.Of(first.URL), clip(origin.Of(req.URL), 100))
		case next != nil:
			return next(req, via)
		case len(via) >= 10:
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
}

// secure reports whether u may carry the authorization's requests: https,
// or http to a loopback host, or any http when insecure allows it.
func secure(u *url.URL, insecure bool) bool {
	switch strings.ToLower(u.Scheme) {
	case "https":
		return u.Host != ""
	case "http":
		return u.Host != "" && (insecure || isLoopback(u.Hostname()))
	}
	return false
}

// checkSecure refuses to send a request to u unless secure allows it.
func (a *Authorizer) checkSecure(u *url.URL) error {
	if !secure(u, a.cfg.InsecureHTTP) {
		return fmt.Errorf("%w: refusing plain http to %s: an authorization server's and a server's metadata and endpoints must be https off loopback", ErrMetadata, clip(origin.Of(u), 100))
	}
	return nil
}

// requestTimeout bounds each metadata, registration or token request of the
// Authorizer's own client.
const requestTimeout = 30 * time.Second

// CloseIdleConnections releases the idle connections of the Authorizer's
// own HTTP client (none when Config.HTTPClient is set).
func (a *Authorizer) CloseIdleConnections() {
	if a.own != nil {
		a.own.CloseIdleConnections()
	}
}

func (a *Authorizer) lock(ctx context.Context) error {
	select {
	case a.flight <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (a *Authorizer) unlock() { <-a.flight }

func (a *Authorizer) current() *Token {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.tok
}

// Token returns the access token to send; "" means no token yet (the
// server's 401 will start the authorization, through Challenged).
//
// A token is renewed (refreshed, or asked again of a machine grant) when
// the smaller of 30 s and a tenth of its lifetime is left, by one request
// that every concurrent caller waits for and shares, success or failure.
// A token whose renewal failed is still returned until it expires; after
// that the error says why the renewal failed (wrapping ErrUnreachable,
// ErrMetadata or ErrToken), except for a refresh the authorization server
// refused for good (invalid_grant and the other RFC 6749 §5.2 errors), or
// a token that has no refresh token: then Token returns "", so the
// server's 401 leads to one new sign-in. A transient failure (no answer,
// a 5xx, a 429) keeps the token and its refresh token. After a failure
// the next renewal waits: 1 s, doubled after each failure in a row up to
// 5 min, or the token endpoint's Retry-After when longer (at most 5 min);
// meanwhile Token returns the token while it is valid, then the last
// failure.
func (a *Authorizer) Token(ctx context.Context) (string, error) {
	t := a.current()
	switch {
	case t == nil:
		return "", nil
	case t.fresh(a.now()):
		return string(t.AccessToken), nil
	}
	a.mu.Lock()
	meta, gen := a.meta, a.renewals
	a.mu.Unlock()
	machine := a.cfg.Grant != nil && meta != nil
	if t.RefreshToken == "" && !machine {
		return a.lastValid(nil)
	}
	if err := a.lock(ctx); err != nil {
		return "", err
	}
	defer a.unlock()
	if t = a.current(); t == nil || t.fresh(a.now()) {
		return a.lastValid(nil) // renewed, or dropped, while we waited
	}
	a.mu.Lock()
	err := a.renewErr
	a.mu.Unlock()
	if a.renewalsSince(gen) == 0 && !a.backingOff() {
		// No renewal ran while we waited, and no failed one asks us to
		// wait: ours is the one, at the authorization server that
		// issued t, as its client.
		a.mu.Lock()
		key, meta := a.key, a.meta
		a.mu.Unlock()
		err = a.renew(ctx, t, key, meta)
	}
	if err != nil {
		a.log.Debug("oauth: renewing the token failed", "resource", a.resource.String(), "error", err)
	}
	return a.lastValid(err)
}

// lastValid returns the current token while it has not expired; then err
// when the renewal failed for want of an answer, or of a definitive one
// (a refused renewal, or none, leaves "" and a nil error: the 401 that
// follows signs in again).
func (a *Authorizer) lastValid(err error) (string, error) {
	if t := a.current(); t.valid(a.now()) {
		return string(t.AccessToken), nil
	}
	if err == nil || definitive(err) {
		return "", nil
	}
	return "", fmt.Errorf("oauth: the token of %s expired and could not be renewed: %w", a.resource, err)
}

// renewalsSince returns how many renewals ran since Token counted gen.
func (a *Authorizer) renewalsSince(gen uint64) uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.renewals - gen
}

// Challenged is told that the server answered status (401 or 403) with
// challenges to a request sent with the access token sent ("" for none).
// It returns nil when a request sent again with a new Token may succeed:
// another request already renewed the token, a refresh worked, or an
// authorization (or, for a 403 insufficient_scope, a step-up with the
// union of the scopes) completed. Otherwise it returns why not, wrapping
// one of the package's sentinels. A step-up that would ask for no scope
// beyond those already granted is refused with ErrInsufficientScope, so a
// server that keeps answering 403 costs one authorization, not a loop.
func (a *Authorizer) Challenged(ctx context.Context, status int, challenges []Challenge, sent string) error {
	ch := pick(challenges)
	stepUp := status == http.StatusForbidden
	if stepUp && ch.Param("error") != "insufficient_scope" {
		return fmt.Errorf("%w: %s refused the request (http 403, %q)", ErrConsent, a.resource, clip(ch.Param("error"), 40))
	}
	if status != http.StatusUnauthorized && !stepUp {
		return fmt.Errorf("oauth: unexpected status %d", status)
	}
	if err := a.lock(ctx); err != nil {
		return err
	}
	defer a.unlock()
	cur := a.current()
	if cur != nil && string(cur.AccessToken) != sent && cur.valid(a.now()) {
		// Renewed, or stepped up, by a request answered before ours: a
		// token that is not the one refused is tried before any new
		// sign-in, even close to its expiry.
		return nil
	}
	if stepUp {
		want := strings.Fields(ch.Param("scope"))
		var granted []string
		if cur != nil {
			granted = cur.Scopes
		}
		union := unionScopes(granted, want)
		if sent != "" && len(union) == len(granted) {
			return fmt.Errorf("%w: %s still wants scope %q after it was granted: ask the server's administrator for access",
				ErrInsufficientScope, a.resource, clip(ch.Param("scope"), 100))
		}
		return a.authorize(ctx, ch, union)
	}
	if cur != nil && sent != "" && string(cur.AccessToken) == sent && cur.RefreshToken != "" {
		a.mu.Lock()
		key, meta, err := a.key, a.meta, a.renewErr // cur's own: a token is refreshed where it was issued
		a.mu.Unlock()
		if !a.backingOff() {
			err = a.renew(ctx, cur, key, meta)
		}
		if err == nil {
			return nil
		}
		a.log.Debug("oauth: refresh after 401 failed", "resource", a.resource.String(), "error", err)
		if transient(err) {
			// The refresh token still holds: a sign-in now would meet
			// the same authorization server, and cost the user a visit.
			return fmt.Errorf("oauth: the token of %s was refused and could not be refreshed yet: %w", a.resource, err)
		}
	}
	return a.authorize(ctx, ch, nil)
}

// pick chooses the challenge to act on: Bearer first, else one naming
// resource metadata (a DPoP challenge, say), else the first.
func pick(cs []Challenge) Challenge {
	for _, c := range cs {
		if strings.EqualFold(c.Scheme, "Bearer") {
			return c
		}
	}
	for _, c := range cs {
		if c.Param("resource_metadata") != "" {
			return c
		}
	}
	if len(cs) > 0 {
		return cs[0]
	}
	return Challenge{}
}

func unionScopes(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// authorize runs the whole flow: discovery, a stored token if one fits,
// client identity, the browser step and the code exchange. scopes, when
// not nil, are the scopes of a step-up.
func (a *Authorizer) authorize(ctx context.Context, ch Challenge, scopes []string) error {
	// The PRM is fetched again on every authorization: a server may have
	// moved to another authorization server since the last one.
	prm, err := a.discoverResource(ctx, ch.Param("resource_metadata"))
	if err != nil {
		return err
	}
	issuer, resourceID, fallback := "", a.resource.String(), prm == nil
	var prmScopes []string
	if prm == nil {
		// A 2025-03-26 server: the authorization server is its origin.
		issuer = a.resource.Scheme + "://" + a.resource.Host
		a.log.Debug("oauth: no resource metadata; using the server's origin", "issuer", issuer)
	} else {
		issuer, resourceID, prmScopes = prm.AuthorizationServers[0], prm.Resource, prm.ScopesSupported
	}
	meta, err := a.discoverServer(ctx, issuer, fallback)
	if err != nil {
		return err
	}
	key := Key{Resource: resourceID, Issuer: issuer, Client: a.cfg.ClientID}
	if scopes == nil && a.adoptStored(ctx, key, meta) {
		return nil
	}
	if scopes == nil {
		switch {
		case ch.Param("scope") != "":
			scopes = strings.Fields(ch.Param("scope"))
		case len(a.cfg.Scopes) > 0:
			scopes = a.cfg.Scopes
		default:
			scopes = prmScopes
		}
	}
	if a.cfg.Grant != nil {
		return a.grant(ctx, key, meta, resourceID, scopes)
	}
	if _, ok := a.cfg.Browser.(NonInteractive); ok {
		// No sign-in can follow: registering a client would only leave
		// one more at the authorization server.
		return &InteractionRequiredError{Resource: a.resource.String()}
	}
	// offline_access asks for a refresh token, where the authorization
	// server (not the resource) says it knows the scope.
	if len(scopes) > 0 && slices.Contains(meta.ScopesSupported, "offline_access") && !slices.Contains(scopes, "offline_access") {
		scopes = append(slices.Clone(scopes), "offline_access")
	}
	for retried := false; ; retried = true {
		client, registered, err := a.client(ctx, meta)
		if err != nil {
			return err
		}
		err = a.signIn(ctx, key, meta, client, resourceID, scopes)
		if err == nil || registered || retried || !invalidClient(err) || !a.forget(meta.Issuer, client) {
			return err
		}
		a.log.Warn("oauth: the authorization server no longer knows the client it registered; registering again",
			"issuer", meta.Issuer, "client", client.ID)
	}
}

// signIn sends the user through the authorization code flow as client,
// and adopts the token.
func (a *Authorizer) signIn(ctx context.Context, key Key, meta *ServerMetadata, client Registration, resourceID string, scopes []string) error {
	code, verifier, err := a.authorizationCode(ctx, meta, client, resourceID, scopes)
	if err != nil {
		return err
	}
	tok, err := a.exchange(ctx, meta, client, url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {code},
		"redirect_uri":  {a.cfg.RedirectURL},
		"code_verifier": {verifier},
		"resource":      {resourceID},
	}, scopes, "token")
	if err != nil {
		return err
	}
	a.adopt(ctx, key, meta, tok)
	return nil
}

// invalidClient reports whether err is the authorization server saying it
// does not know the client: a token endpoint's invalid_client, or an
// error page the Browser reports.
func invalidClient(err error) bool {
	var oe *OAuthError
	var pe *ErrorPageError
	return errors.As(err, &oe) && oe.Code == "invalid_client" || errors.As(err, &pe) && pe.Code == "invalid_client"
}

// forget drops the registration r at issuer when it is one the Authorizer
// made (a pre-registered client is the administrator's to fix), so the
// next authorization registers again; it reports whether it dropped one.
func (a *Authorizer) forget(issuer string, r Registration) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if r.ID == "" || r.ID == a.cfg.ClientID || a.clients[issuer].ID != r.ID {
		return false
	}
	delete(a.clients, issuer)
	return true
}

// grant obtains a token with the machine grant of Config.
func (a *Authorizer) grant(ctx context.Context, key Key, meta *ServerMetadata, resource string, scopes []string) error {
	if gt := grantType(a.cfg.Grant); len(meta.GrantTypesSupported) > 0 && !slices.Contains(meta.GrantTypesSupported, gt) {
		return fmt.Errorf("%w: authorization server %s does not offer the %s grant", ErrMetadata, meta.Issuer, gt)
	}
	client, err := a.grantClient(meta)
	if err != nil {
		return err
	}
	form, err := a.cfg.Grant.form(ctx, a, meta, resource)
	if err != nil {
		return err
	}
	form.Set("resource", resource)
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
	tok, err := a.exchange(ctx, meta, client, form, scopes, "token")
	if err != nil {
		return err
	}
	a.adopt(ctx, key, meta, tok)
	return nil
}

// checkBound refuses a pre-registered credential without the issuer it
// belongs to (see Config.Issuer).
func checkBound(cfg Config) error {
	if cfg.Issuer != "" {
		u, err := url.Parse(cfg.Issuer)
		if err != nil || u.Host == "" || u.Scheme != "http" && u.Scheme != "https" {
			return fmt.Errorf("oauth: issuer %q is not an http(s) URL", clip(cfg.Issuer, 100))
		}
		return nil
	}
	var what string
	switch {
	case cfg.ClientSecret != "":
		what = "a ClientSecret"
	case cfg.ClientKey != nil:
		what = "a ClientKey"
	case cfg.Grant != nil:
		what = "a machine Grant (its assertions or client credentials)"
	default:
		return nil
	}
	return fmt.Errorf("%w: %s needs Config.Issuer, the authorization server it belongs to: without it, whichever authorization server the MCP server names would receive it", ErrUnboundCredential, what)
}

// bind reports whether the pre-registered credentials may go to issuer
// (Config.Issuer, required with them): nil, or an *IssuerBindingError.
func (a *Authorizer) bind(issuer string) error {
	if a.cfg.Issuer != issuer {
		return &IssuerBindingError{Bound: a.cfg.Issuer, Offered: issuer}
	}
	return nil
}

// adoptStored uses a token the store holds for key, refreshing it when it
// reached its renewal point (a still-valid one whose refresh fails for a
// transient reason is used all the same); it reports whether one could be
// used.
func (a *Authorizer) adoptStored(ctx context.Context, key Key, meta *ServerMetadata) bool {
	t, err := a.cfg.Store.Load(ctx, key)
	if err != nil {
		a.log.Warn("oauth: the token store failed; signing in again", "error", err)
		return false
	}
	if e, ok := a.cfg.Store.(interface{ exposed() string }); ok {
		if msg := e.exposed(); msg != "" {
			a.log.Warn(msg)
		}
	}
	if cur := a.current(); t == nil || cur != nil && t.AccessToken == cur.AccessToken || !a.fits(t) {
		return false // nothing, the very token the server refused, or another run's
	}
	// The current token, key and metadata change together, in use, once
	// t is known usable: until then the current token is refreshed where
	// it was issued, never at this issuer.
	if t.fresh(a.now()) {
		a.use(key, meta, t)
		return true
	}
	if t.RefreshToken == "" {
		return false
	}
	err = a.refresh(ctx, t, key, meta)
	if err != nil && transient(err) && t.valid(a.now()) {
		// Still valid: used while the authorization server recovers,
		// and renewed once the backoff allows.
		a.use(key, meta, t)
		a.noteRenewal(ctx, err)
		return true
	}
	return err == nil
}

// fits reports whether a stored token can be sent by this Authorizer: a
// DPoP token bound to the key of another run cannot.
func (a *Authorizer) fits(t *Token) bool {
	return t.Type != "DPoP" || a.dpop != nil && t.KeyThumbprint == a.dpop.jkt
}

// adopt makes tok the current token and stores it; key and meta are
// where it was issued, and travel with it.
func (a *Authorizer) adopt(ctx context.Context, key Key, meta *ServerMetadata, tok *Token) {
	a.use(key, meta, tok)
	if err := a.cfg.Store.Save(ctx, key, tok); err != nil {
		a.log.Warn("oauth: saving the token failed", "error", err)
	}
}

// use makes tok, found in the store under key, the current token.
func (a *Authorizer) use(key Key, meta *ServerMetadata, tok *Token) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.tok, a.key, a.meta = tok, key, meta
	a.clients[meta.Issuer] = tok.Client
}

// renew renews t, issued under key by the authorization server of meta:
// with its refresh token, or by asking the machine grant again; the
// outcome is recorded for the backoff and for the callers waiting.
func (a *Authorizer) renew(ctx context.Context, t *Token, key Key, meta *ServerMetadata) error {
	var err error
	if t.RefreshToken != "" {
		err = a.refresh(ctx, t, key, meta)
	} else {
		err = a.grant(ctx, key, meta, key.Resource, t.Scopes)
	}
	a.noteRenewal(ctx, err)
	return err
}

// refresh renews t with its refresh token, at the authorization server of
// meta that issued it under key, as the client it was issued to. With a
// LockingStore, the store stays locked from the read of the latest token
// to the write of its successor, so that another process never sends the
// refresh token this one rotates. A definitive refusal (invalid_grant and
// the like, see definitive) drops the token, from memory and from the
// store; an invalid_client refusal drops the registration too. A
// transient failure (no answer, a 5xx, a 429) keeps both.
func (a *Authorizer) refresh(ctx context.Context, t *Token, key Key, meta *ServerMetadata) error {
	if meta == nil || meta.Issuer != key.Issuer {
		return fmt.Errorf("%w: no authorization server known for the refresh", ErrToken)
	}
	mine := t
	if ls, ok := a.cfg.Store.(LockingStore); ok {
		unlock, err := ls.Lock(ctx, key)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrToken, err)
		}
		defer unlock()
		s, err := a.cfg.Store.Load(ctx, key)
		if err == nil && s != nil && s.AccessToken != t.AccessToken && a.fits(s) {
			// Renewed by another process, or another Authorizer, since
			// we read it.
			if s.fresh(a.now()) {
				a.log.Debug("oauth: the token was renewed by another user of the store", "resource", key.Resource)
				a.use(key, meta, s)
				return nil
			}
			if s.RefreshToken != "" {
				t = s
			}
		}
	}
	tok, err := a.exchange(ctx, meta, t.Client, url.Values{
		"grant_type":    {"refresh_token"},
		"refresh_token": {string(t.RefreshToken)},
		"resource":      {key.Resource},
	}, t.Scopes, "refresh")
	var oe *OAuthError
	if errors.As(err, &oe) && definitive(err) {
		a.mu.Lock()
		if a.tok == mine {
			a.tok = nil
		}
		a.mu.Unlock()
		_ = a.cfg.Store.Save(ctx, key, nil)
		if oe.Code == "invalid_client" && a.forget(meta.Issuer, t.Client) {
			a.log.Warn("oauth: the authorization server no longer knows the client it registered; the next sign-in registers again",
				"issuer", meta.Issuer, "client", t.Client.ID)
		}
	}
	if err != nil {
		return err
	}
	if tok.RefreshToken == "" {
		tok.RefreshToken = t.RefreshToken // the server keeps the old one valid
	}
	a.adopt(ctx, key, meta, tok)
	return nil
}

type discard struct{}

func (discard) Enabled(context.Context, slog.Level) bool  { return false }
func (discard) Handle(context.Context, slog.Record) error { return nil }
func (d discard) WithAttrs([]slog.Attr) slog.Handler      { return d }
func (d discard) WithGroup(string) slog.Handler           { return d }

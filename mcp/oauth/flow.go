package oauth

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// client returns the client's identity at the authorization server of
// meta, in the order the specification gives: the pre-registered id (when
// bound to no other server, see Config.Issuer), the Client ID Metadata
// Document (when accepted), Dynamic Client Registration; registered says
// it registered just now. Registrations are kept per issuer.
func (a *Authorizer) client(ctx context.Context, meta *ServerMetadata) (r Registration, registered bool, err error) {
	a.mu.Lock()
	r, ok := a.clients[meta.Issuer]
	a.mu.Unlock()
	if ok {
		return r, false, nil
	}
	id := a.cfg.ClientID
	cimd := strings.HasPrefix(id, "https://")
	switch {
	case id != "" && !cimd && a.mayUseClient(meta.Issuer):
		m := a.cfg.TokenEndpointAuth
		if m == "" {
			m = chooseAuthMethod(meta.TokenEndpointAuthMethodsSupported, a.cfg.ClientSecret != "")
		}
		r = Registration{ID: id, Secret: a.cfg.ClientSecret, AuthMethod: m}
	case cimd && meta.ClientIDMetadataDocumentSupported:
		r = Registration{ID: id, AuthMethod: AuthNone}
	case meta.RegistrationEndpoint != "":
		if r, err = a.register(ctx, meta); err != nil {
			return Registration{}, false, err
		}
		registered = true
	default:
		return Registration{}, false, fmt.Errorf("%w: %s offers no dynamic client registration: register a client there and configure its clientId",
			ErrRegistration, meta.Issuer)
	}
	a.mu.Lock()
	a.clients[meta.Issuer] = r
	a.mu.Unlock()
	return r, registered, nil
}

// mayUseClient reports whether the pre-registered client may be used at
// issuer: anywhere without a configured Issuer (a client with a secret
// has one, see checkBound), else at that issuer only.
func (a *Authorizer) mayUseClient(issuer string) bool {
	return a.cfg.Issuer == "" || a.cfg.Issuer == issuer
}

// chooseAuthMethod picks how a client authenticates at the token endpoint
// from what the server supports (an empty list means client_secret_basic,
// RFC 8414 §2).
func chooseAuthMethod(supported []string, hasSecret bool) string {
	switch {
	case !hasSecret:
		return AuthNone
	case len(supported) == 0 || slices.Contains(supported, AuthBasic):
		return AuthBasic
	case slices.Contains(supported, AuthPost):
		return AuthPost
	case slices.Contains(supported, AuthNone):
		return AuthNone
	}
	return AuthBasic
}

// register registers the client (RFC 7591).
func (a *Authorizer) register(ctx context.Context, meta *ServerMetadata) (Registration, error) {
	method := a.cfg.TokenEndpointAuth
	switch {
	case method != "":
	case len(meta.TokenEndpointAuthMethodsSupported) == 0 || slices.Contains(meta.TokenEndpointAuthMethodsSupported, AuthNone):
		method = AuthNone // a native app keeps no secret well
	default:
		method = chooseAuthMethod(meta.TokenEndpointAuthMethodsSupported, true)
	}
	appType := "web"
	if ru, err := url.Parse(a.cfg.RedirectURL); err == nil && (isLoopback(ru.Hostname()) || ru.Scheme != "http" && ru.Scheme != "https") {
		appType = "native"
	}
	body, _ := json.Marshal(map[string]any{
		"client_name":                a.cfg.ClientName,
		"redirect_uris":              []string{a.cfg.RedirectURL},
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": method,
		"application_type":           appType,
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, meta.RegistrationEndpoint, bytes.NewReader(body))
	if err != nil {
		return Registration{}, fmt.Errorf("%w: %v", ErrRegistration, err)
	}
	req.Header.Set("Content-Type", "application/json")
	var reply struct {
		ClientID     string `json:"client_id"`
		ClientSecret Secret `json:"client_secret"`
		AuthMethod   string `json:"token_endpoint_auth_method"`
	}
	if err := a.send(req, "registration", ErrRegistration, &reply); err != nil {
		return Registration{}, err
	}
	if reply.ClientID == "" {
		return Registration{}, fmt.Errorf("%w: %s registered no client_id", ErrRegistration, meta.Issuer)
	}
	r := Registration{ID: reply.ClientID, Secret: reply.ClientSecret, AuthMethod: reply.AuthMethod}
	if r.AuthMethod == "" {
		r.AuthMethod = chooseAuthMethod(meta.TokenEndpointAuthMethodsSupported, r.Secret != "")
	}
	a.log.Debug("oauth: client registered", "issuer", meta.Issuer, "auth method", r.AuthMethod)
	return r, nil
}

// authorizationCode sends the user to the authorization endpoint and
// returns the code of a checked response, with the PKCE verifier.
func (a *Authorizer) authorizationCode(ctx context.Context, meta *ServerMetadata, client Registration, resource string, scopes []string) (code, verifier string, err error) {
	verifier, state := randomString(), randomString()
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{
		"response_type":         {"code"},
		"client_id":             {client.ID},
		"redirect_uri":          {a.cfg.RedirectURL},
		"code_challenge":        {base64.RawURLEncoding.EncodeToString(sum[:])},
		"code_challenge_method": {"S256"},
		"state":                 {state},
		"resource":              {resource},
	}
	if len(scopes) > 0 {
		q.Set("scope", strings.Join(scopes, " "))
	}
	au, err := url.Parse(meta.AuthorizationEndpoint)
	if err != nil {
		return "", "", fmt.Errorf("%w: authorization endpoint: %v", ErrMetadata, err)
	}
	if au.RawQuery != "" {
		au.RawQuery += "&"
	}
	au.RawQuery += q.Encode()
	cb, err := a.browse(ctx, au.String())
	var ie *InteractionRequiredError
	if errors.As(err, &ie) && ie.Resource == "" {
		ie.Resource = a.resource.String()
	}
	if err != nil {
		return "", "", err
	}
	code, err = checkResponse(cb.Query(), state, meta)
	return code, verifier, err
}

// browse runs the host's Browser on a goroutine of its own, so that a
// Browser deaf to ctx delays no call past its context: it is then left to
// finish alone, and its answer is dropped.
func (a *Authorizer) browse(ctx context.Context, authURL string) (*url.URL, error) {
	type answer struct {
		u   *url.URL
		err error
	}
	done := make(chan answer, 1)
	go func() {
		u, err := a.cfg.Browser.Authorize(ctx, authURL, a.cfg.RedirectURL)
		done <- answer{u, err}
	}()
	select {
	case r := <-done:
		if r.err == nil && r.u == nil {
			r.err = fmt.Errorf("%w: the browser step returned no redirect", ErrConsent)
		}
		return r.u, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// checkResponse checks an authorization response: state first, then the
// issuer (RFC 9207: compared as strings, required when advertised), and
// only then the error or the code.
func checkResponse(q url.Values, state string, meta *ServerMetadata) (string, error) {
	if q.Get("state") != state {
		return "", fmt.Errorf("%w: the redirect's state is not ours: start the sign-in again", ErrConsent)
	}
	iss, hasIss := q["iss"]
	switch {
	case hasIss && (len(iss) != 1 || iss[0] != meta.Issuer):
		return "", fmt.Errorf("%w: the authorization response comes from issuer %q, not %q: possible mix-up attack, sign-in abandoned",
			ErrIssuerMismatch, clip(q.Get("iss"), 100), meta.Issuer)
	case !hasIss && meta.IssParameterSupported:
		return "", fmt.Errorf("%w: %s promises an iss parameter and its authorization response has none: sign-in abandoned",
			ErrIssuerMismatch, meta.Issuer)
	}
	if e := q.Get("error"); e != "" {
		return "", &OAuthError{Endpoint: "authorization", Code: clip(e, 60), Description: clip(q.Get("error_description"), 200), kind: ErrConsent}
	}
	code := q.Get("code")
	if code == "" {
		return "", fmt.Errorf("%w: the authorization response has no code", ErrConsent)
	}
	return code, nil
}

// exchange posts a token request (a code, a refresh or a machine grant)
// and returns the token it grants; requested are the scopes asked for,
// assumed granted when the answer names none.
func (a *Authorizer) exchange(ctx context.Context, meta *ServerMetadata, client Registration, form url.Values, requested []string, step string) (*Token, error) {
	dpop := a.dpop != nil && slices.Contains(meta.DPoPSigningAlgValuesSupported, "ES256")
	var reply struct {
		AccessToken  Secret  `json:"access_token"`
		TokenType    string  `json:"token_type"`
		ExpiresIn    seconds `json:"expires_in"`
		RefreshToken Secret  `json:"refresh_token"`
		Scope        string  `json:"scope"`
	}
	scrub := []string{form.Get("refresh_token"), form.Get("code"), form.Get("code_verifier"), form.Get("assertion"), string(client.Secret)}
	var err error
	if dpop {
		err = a.dpopTokenRequest(ctx, meta, client, form, step, &reply, scrub...)
	} else {
		err = a.tokenRequest(ctx, meta, client, form, nil, step, &reply, scrub...)
	}
	if err != nil {
		return nil, err
	}
	switch {
	case reply.AccessToken == "":
		return nil, fmt.Errorf("%w: %s answered without an access token", ErrToken, meta.Issuer)
	case dpop && strings.EqualFold(reply.TokenType, "DPoP"):
		reply.TokenType = "DPoP"
	case !strings.EqualFold(reply.TokenType, "Bearer"):
		return nil, fmt.Errorf("%w: %s issued a %q token; only Bearer (and, with DPoP, DPoP) tokens are supported", ErrToken, meta.Issuer, clip(reply.TokenType, 20))
	default:
		reply.TokenType = ""
	}
	t := &Token{AccessToken: reply.AccessToken, Type: reply.TokenType, RefreshToken: reply.RefreshToken, Scopes: slices.Clone(requested), Client: client}
	if t.Type == "DPoP" {
		t.KeyThumbprint = a.dpop.jkt
	}
	if reply.Scope != "" {
		t.Scopes = strings.Fields(reply.Scope)
	}
	if reply.ExpiresIn > 0 {
		t.Issued = a.now()
		t.Expiry = t.Issued.Add(time.Duration(reply.ExpiresIn) * time.Second)
	}
	a.log.Debug("oauth: token issued", "issuer", meta.Issuer, "step", step, "type", t.scheme(), "expires in", reply.ExpiresIn, "refreshable", reply.RefreshToken != "")
	return t, nil
}

// tokenRequest posts form to the token endpoint of meta as client (with
// a new assertion for private_key_jwt) and decodes the answer into v;
// header adds headers (a DPoP proof). scrub are the request's secrets,
// kept out of an error's text.
func (a *Authorizer) tokenRequest(ctx context.Context, meta *ServerMetadata, client Registration, form url.Values, header http.Header, step string, v any, scrub ...string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, meta.TokenEndpoint, nil)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrToken, err)
	}
	form = cloneValues(form)
	switch client.AuthMethod {
	case AuthPrivateKeyJWT:
		jwt, err := a.clientAssertion(client, meta, time.Now())
		if err != nil {
			return err
		}
		form.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
		form.Set("client_assertion", jwt)
	case AuthBasic:
		req.SetBasicAuth(url.QueryEscape(client.ID), url.QueryEscape(string(client.Secret)))
	case AuthPost:
		form.Set("client_id", client.ID)
		form.Set("client_secret", string(client.Secret))
	default:
		if client.ID != "" {
			form.Set("client_id", client.ID)
		}
	}
	body := form.Encode()
	req.Body = io.NopCloser(strings.NewReader(body))
	req.ContentLength = int64(len(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, vs := range header {
		req.Header[k] = vs
	}
	return a.send(req, step, ErrToken, v, append(scrub, string(client.Secret), form.Get("client_assertion"))...)
}

func cloneValues(v url.Values) url.Values {
	out := make(url.Values, len(v))
	for k, vs := range v {
		out[k] = slices.Clone(vs)
	}
	return out
}

// seconds is a lifetime in seconds, sent as a JSON number or, by some
// servers, as a string; at most maxLifetime.
type seconds int64

// maxLifetime is the longest token lifetime taken as given, about 292
// years, the longest a time.Duration holds: a longer expires_in is cut
// to it, since multiplied out it would overflow into a lifetime that
// ended before the token was issued.
const maxLifetime = seconds(math.MaxInt64 / int64(time.Second))

func (s *seconds) UnmarshalJSON(b []byte) error {
	b = bytes.Trim(b, `"`)
	if string(b) == "null" || len(b) == 0 {
		return nil
	}
	var n json.Number = json.Number(b)
	v, err := n.Int64()
	if err != nil {
		f, ferr := n.Float64()
		if ferr != nil {
			return fmt.Errorf("expires_in %q is not a number", clip(string(b), 20))
		}
		v = int64(max(min(f, float64(maxLifetime)), 0)) // out-of-range conversions are undefined
	}
	*s = min(seconds(v), maxLifetime)
	return nil
}

// send sends a registration or token request and decodes a 2xx JSON answer
// into v (nil: the answer is not read); an error answer becomes an *OAuthError matching kind, with the
// scrub values (the request's secrets) removed from its text.
func (a *Authorizer) send(req *http.Request, step string, kind error, v any, scrub ...string) error {
	if err := a.checkSecure(req.URL); err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := a.httpClient().Do(req)
	if err != nil {
		return fmt.Errorf("%w: %s request: %w", kind, step, unanswered(req.Context(), err))
	}
	defer resp.Body.Close()
	if a.dpop != nil {
		a.dpop.noteNonce(req.URL, resp.Header.Get("DPoP-Nonce"))
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataSize))
	if err != nil {
		return fmt.Errorf("%w: %s request: %v", kind, step, err)
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Code        string `json:"error"`
			Description string `json:"error_description"`
		}
		_ = json.Unmarshal(b, &e)
		for _, sec := range scrub {
			if sec != "" {
				e.Code = strings.ReplaceAll(e.Code, sec, redacted)
				e.Description = strings.ReplaceAll(e.Description, sec, redacted)
			}
		}
		oe := &OAuthError{Endpoint: step, StatusCode: resp.StatusCode, Code: clip(e.Code, 60), Description: clip(e.Description, 200), kind: kind}
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
			oe.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), a.now())
		}
		return oe
	}
	if v == nil {
		return nil // an answer with no content to read (a revocation)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%w: %s answer is not JSON: %v", kind, step, err)
	}
	return nil
}

// randomString returns 32 random bytes, base64url-encoded: a PKCE verifier
// (RFC 7636 §4.1: 43 characters) or a state.
func randomString() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		// No randomness means no safe PKCE or state: nothing to fall back on.
		panic("oauth: crypto/rand failed: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"git.rickub.com/bots-garden/mini-me/internal/origin"
	"git.rickub.com/bots-garden/mini-me/mcp/oauth"
)

// Credentials supply the access token of an HTTP transport's requests, and
// renew it when the server refuses it. *oauth.Authorizer implements it.
//
// Token returns the token to send as "Authorization: Bearer"; "" sends
// none. Challenged is told of a 401 or 403 answer to a request sent with
// the token sent ("" for none), with the answer's parsed WWW-Authenticate
// challenges; a nil error means a new Token may succeed and the request is
// sent once more, an error is returned to the caller inside the
// *AuthError. Both may block (a refresh, a sign-in) and must return when
// ctx ends; both are called concurrently, from calls and from the
// transport's background streams.
//
// Tokens come from environment variables ([HTTPTransport.TokenEnv]) or from
// [Credentials] such as an *oauth.Authorizer (package mcp/oauth, the OAuth
// 2.1 flow of the MCP specification), which toolset.Discover builds for servers
// whose auth type is oauth, with the host's browser step and token store. They are sent only to the
// configured origin (scheme, host and port, checked on every redirect) and
// never appear in errors or logs. Every 401 or 403, for any request (calls,
// notifications, streams, DELETE, the HTTP+SSE transport), is an
// [*AuthError] matching [ErrAuth], with the server's challenge parsed;
// a request is sent again after one at most twice (a new token, then a
// step-up), and only when the Credentials say a new token may succeed.
type Credentials interface {
	Token(ctx context.Context) (string, error)
	Challenged(ctx context.Context, status int, challenges []oauth.Challenge, sent string) error
}

// ProofCredentials are Credentials whose tokens are bound to a key
// (DPoP, RFC 9449): *oauth.Authorizer implements it. Authorize sets the
// Authorization header of req for token, and the proof the token needs
// (a DPoP header), freshly for every request. Answered is told of every
// answer (it may keep a nonce the server sent) and reports whether the
// answer asks for the request to be sent again at once with a fresh proof
// (a 401 use_dpop_nonce), which happens once per request at most. Both
// must not block.
type ProofCredentials interface {
	Credentials
	Authorize(req *http.Request, token string) error
	Answered(resp *http.Response) bool
}

// maxAuthRetries bounds how many times one request is sent again after a
// 401 or 403: once for a new token, once more for a step-up.
const maxAuthRetries = 2

// AuthError is a 401 or 403 answer, with the server's challenge parsed, so
// a host can tell a token that expired (Code "invalid_token") from a
// missing scope ("insufficient_scope"). It matches ErrAuth.
type AuthError struct {
	// Method is the method of the request ("GET", "DELETE" or
	// "notification" for the requests that are not calls).
	Method string
	// StatusCode is 401 or 403.
	StatusCode int
	// Scheme is the scheme of the challenge acted on ("Bearer", "DPoP"),
	// empty when the server sent none.
	Scheme string
	// Code is the challenge's error parameter, such as "invalid_token" or
	// "insufficient_scope".
	Code string
	// ResourceMetadata is the challenge's resource_metadata URL.
	ResourceMetadata string
	// Scope is the challenge's scope parameter, the scopes the server
	// wants.
	Scope string
	// Challenges are all the challenges of the answer, with any secret of
	// the connection redacted from their values.
	Challenges []oauth.Challenge
	// Err says why the credentials could not be renewed (for example an
	// *oauth.InteractionRequiredError), or that the server kept refusing
	// renewed ones; nil only when no credentials are configured.
	Err error
}

// Error returns the method, the status, the challenge's error and scope,
// and the credentials' reason.
func (e *AuthError) Error() string {
	s := fmt.Sprintf("mcp: %s: http status %d", e.Method, e.StatusCode)
	if e.Code != "" {
		s += " (" + e.Code + ")"
	}
	if e.Scope != "" {
		s += ", scope " + e.Scope
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Is makes every AuthError match ErrAuth.
func (e *AuthError) Is(target error) bool { return target == ErrAuth }

// Unwrap returns Err.
func (e *AuthError) Unwrap() error { return e.Err }

// authError reads the challenge of a 401 or 403 answer.
func (h *httpConn) authError(method string, resp *http.Response) *AuthError {
	e := &AuthError{Method: method, StatusCode: resp.StatusCode}
	// What a malformed header held before its error is still worth having.
	e.Challenges, _ = oauth.ParseChallenges(strings.Join(resp.Header.Values("Www-Authenticate"), ", "))
	for _, ch := range e.Challenges {
		// A server may quote the token it refused (error_description).
		ch.Token68 = h.redact(ch.Token68)
		for k, v := range ch.Params {
			ch.Params[k] = h.redact(v)
		}
	}
	var c oauth.Challenge
	for i, ch := range e.Challenges {
		if i == 0 || strings.EqualFold(ch.Scheme, "Bearer") {
			c = ch
		}
	}
	e.Scheme, e.ResourceMetadata = c.Scheme, c.Param("resource_metadata")
	e.Code, e.Scope = clip(h.redact(c.Param("error")), 60), clip(h.redact(c.Param("scope")), 300)
	return e
}

// do sends req with the credentials (the static token, or the Credentials'
// token) and returns the answer. A 401 or 403 is closed and returned as an
// *AuthError, after the Credentials had their chance to renew the token
// and the request was sent again, maxAuthRetries times at most. Every
// request of the transport goes through here.
func (h *httpConn) do(req *http.Request, method string) (*http.Response, error) {
	proof, _ := h.creds.(ProofCredentials)
	nonced := false
	for attempt := 0; ; attempt++ {
		sent := ""
		switch {
		case h.authName != "":
			req.Header.Set(h.authName, h.authValue)
		case h.creds != nil:
			tok, err := h.creds.Token(req.Context())
			if err != nil {
				return nil, fmt.Errorf("%w: %s: %w", ErrAuth, method, err)
			}
			switch {
			case tok != "" && proof != nil:
				h.remember(tok)
				if err := proof.Authorize(req, tok); err != nil {
					return nil, fmt.Errorf("%w: %s: %v", ErrAuth, method, err)
				}
			case tok != "":
				h.remember(tok)
				req.Header.Set("Authorization", "Bearer "+tok)
			default:
				req.Header.Del("Authorization")
			}
			sent = tok
		}
		resp, err := h.hc.Do(req)
		if err != nil {
			return nil, h.redactErr(err)
		}
		retryNonce := proof != nil && proof.Answered(resp) && !nonced
		if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
			return resp, nil
		}
		aerr := h.authError(method, resp)
		closeBody(resp.Body)
		switch {
		case h.creds == nil:
			return nil, aerr
		case attempt >= maxAuthRetries:
			aerr.Err = fmt.Errorf("the server refused the request %d times, with the credentials renewed each time", attempt+1)
			return nil, aerr
		case req.Body != nil && req.Body != http.NoBody && req.GetBody == nil:
			aerr.Err = errors.New("the request's body cannot be sent again with renewed credentials")
			return nil, aerr
		}
		if retryNonce {
			nonced = true // the server's nonce is kept: send again, without a new authorization
		} else if err := h.creds.Challenged(req.Context(), resp.StatusCode, aerr.Challenges, sent); err != nil {
			aerr.Err = err
			return nil, aerr
		}
		next := req.Clone(req.Context())
		if req.GetBody != nil {
			if next.Body, err = req.GetBody(); err != nil {
				return nil, err
			}
		}
		req = next
	}
}

// maxRemembered is how many recent tokens are redacted from server text.
const maxRemembered = 4

// remember notes a token sent, so that redact hides it should a server
// echo it.
func (h *httpConn) remember(tok string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, t := range h.sent {
		if t == tok {
			return
		}
	}
	if len(h.sent) == maxRemembered {
		h.sent = h.sent[1:]
	}
	h.sent = append(h.sent, tok)
}

// secrets returns the tokens to redact.
func (h *httpConn) secrets() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]string, 0, len(h.sent)+1)
	if h.token != "" {
		out = append(out, h.token)
	}
	return append(out, h.sent...)
}

// checkRedirect wraps next (or the stock ten-redirect limit) so that no
// credential follows a redirect off the server's origin.
func (h *httpConn) checkRedirect(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if !origin.Same(req.URL, h.url) {
			if h.authName != "" {
				req.Header.Del(h.authName)
			}
			req.Header.Del("Authorization")
			req.Header.Del("DPoP")
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return fmt.Errorf("stopped after 10 redirects")
		}
		return nil
	}
}

// closeIdle releases our idle connections, and the Credentials' own.
func (h *httpConn) closeIdle() {
	if h.own != nil {
		h.own.CloseIdleConnections()
	}
	if c, ok := h.creds.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

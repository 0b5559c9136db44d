package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
)

// Transport says how to reach a server: HTTPTransport for a URL,
// CommandTransport for a local subprocess.
//
// # When a request is sent twice
//
// A request is sent twice only when that cannot make it run twice. The one
// rule, for both eras and every way a request can be lost:
//
//   - A request the server provably did not run is sent again, once: a
//     version it refused (-32022), or a
//     header mismatch (-32001), once the tools are listed again.
//   - A request that may have run is sent again only when it is safe to
//     repeat: a listing or a read, or a tools/call of a tool annotated
//     read-only or idempotent when [Options.TrustToolHints] is set (the
//     client lists the tools itself, once, to learn the hints, if the
//     host did not). Annotations are hints a server may get wrong: that
//     is the host's call.
//   - It may have run when its legacy session was lost (a 404, or a 400
//     that speaks of the session: the session may have been lost after
//     the call ran) and when its response stream broke with nothing to
//     resume from (a modern stream, or a legacy one without an event id;
//     a legacy stream with one is resumed with GET and Last-Event-ID
//     instead, which repeats nothing).
//   - Otherwise the caller gets [ErrSessionExpired] (a new session is
//     ready: the next call works) or [ErrStreamBroken], and decides.
type Transport interface {
	connect(ctx context.Context, c *Client) (conn, error)
}

// ErrMissingToken is returned by Connect when the environment variable that
// should hold a server's token is unset or empty (the error says which).
var ErrMissingToken = errors.New("mcp: token missing")

// TokenFromEnv returns the token in the environment variable name,
// trimmed, or an error matching ErrMissingToken that says whether the
// variable is unset or blank (never quoting it).
func TokenFromEnv(name string) (string, error) {
	v, set := os.LookupEnv(name)
	v = strings.TrimSpace(v)
	switch {
	case !set:
		return "", fmt.Errorf("%w: environment variable %s is not set", ErrMissingToken, name)
	case v == "":
		return "", fmt.Errorf("%w: environment variable %s is set but empty", ErrMissingToken, name)
	}
	return v, nil
}

// HTTPTransport reaches a server over Streamable HTTP (falling back to the
// deprecated HTTP+SSE transport for old servers).
type HTTPTransport struct {
	// URL is the MCP endpoint: an http or https URL, or a unix domain
	// socket, unix:///path/to.sock, with an optional HTTP path after a
	// colon (unix:///run/app.sock:/mcp; "/" when none). Over a socket,
	// requests go to http://localhost/path and behave as over loopback;
	// HTTPClient's Transport must then be nil or an *http.Transport, which
	// is copied to dial the socket.
	URL string
	// HTTPClient sends the requests; nil uses a client of our own whose
	// idle connections Close releases.
	HTTPClient *http.Client
	// Header holds static, non-secret headers sent on every request.
	Header http.Header
	// TokenEnv names the environment variable holding the token. It is
	// read once, at Connect, and sent on every request: as
	// "Authorization: Bearer <token>" or, when TokenHeader is set, as
	// that header's raw value (an API key). It is never sent to another
	// origin after a redirect, never logged and never put in an error.
	TokenEnv string
	// TokenHeader, if set, is the header that carries the raw token instead of
	// Authorization.
	TokenHeader string
	// Credentials, when TokenEnv is empty, supply and renew the token of
	// every request (an *oauth.Authorizer for OAuth). A 401 or 403 is
	// handed to them before the request is sent again; what they cannot
	// fix reaches the caller as an *AuthError. Like the TokenEnv token,
	// theirs never leaves the configured origin and is never logged.
	Credentials Credentials
	// HTTPSSE pins the deprecated HTTP+SSE transport of 2024-11-05: URL
	// is then the event stream to GET, and Streamable HTTP is not tried.
	// Without it, that transport is still the last fallback.
	HTTPSSE bool
}

func (t *HTTPTransport) connect(_ context.Context, c *Client) (conn, error) {
	u, err := url.Parse(t.URL)
	if err != nil {
		return nil, fmt.Errorf("mcp: server url: %w", err)
	}
	var sock string
	if u.Scheme == "unix" {
		if sock, u, err = unixEndpoint(u); err != nil {
			return nil, err
		}
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("mcp: server url %q: want an http or https URL", t.URL)
	}
	h := &httpConn{c: c, url: u, maxSize: c.opts.MaxMessageSize, elsewhere: map[int64]elsewhere{}, pinSSE: t.HTTPSSE}
	if t.TokenEnv != "" {
		tok, err := TokenFromEnv(t.TokenEnv)
		if err != nil {
			return nil, err
		}
		if t.TokenHeader == "" {
			h.authName, h.authValue, h.token = "Authorization", "Bearer "+tok, tok
		} else {
			h.authName, h.authValue, h.token = http.CanonicalHeaderKey(t.TokenHeader), tok, tok
		}
	}
	for k, v := range t.Header {
		if h.static == nil {
			h.static = http.Header{}
		}
		h.static[http.CanonicalHeaderKey(k)] = v
	}
	base := t.HTTPClient
	if base == nil {
		h.own = http.DefaultTransport.(*http.Transport).Clone()
		base = &http.Client{Transport: h.own}
	}
	if sock != "" {
		if base, h.own, err = overUnix(base, sock); err != nil {
			return nil, err
		}
	}
	if t.TokenEnv == "" {
		h.creds = t.Credentials
	}
	hc := *base
	hc.CheckRedirect = h.checkRedirect(base.CheckRedirect)
	h.hc = &hc
	h.notes = newNotifyQueue(c)
	return h, nil
}

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
type Transport interface {
	connect(ctx context.Context, c *Client) (conn, error)
}

// ErrMissingToken is returned by Connect when the environment variable that
// should hold a server's token is unset or empty.
var ErrMissingToken = errors.New("mcp: token environment variable is not set")

// HTTPTransport reaches a server over Streamable HTTP (falling back to the
// deprecated HTTP+SSE transport for old servers).
type HTTPTransport struct {
	// URL is the MCP endpoint.
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
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("mcp: server url %q: want an http or https URL", t.URL)
	}
	h := &httpConn{c: c, url: u, maxSize: c.opts.MaxMessageSize, elsewhere: map[int64]elsewhere{}, pinSSE: t.HTTPSSE}
	if t.TokenEnv != "" {
		tok := os.Getenv(t.TokenEnv)
		if strings.TrimSpace(tok) == "" {
			return nil, fmt.Errorf("%w: %s", ErrMissingToken, t.TokenEnv)
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
	hc := *base
	next := base.CheckRedirect
	origin := u.Scheme + "://" + u.Host
	hc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if req.URL.Scheme+"://"+req.URL.Host != origin {
			// The token belongs to the origin the user configured.
			if h.authName != "" {
				req.Header.Del(h.authName)
			}
			req.Header.Del("Authorization")
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	h.hc = &hc
	h.notes = newNotifyQueue(c)
	return h, nil
}

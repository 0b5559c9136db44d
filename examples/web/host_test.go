package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"git.rickub.com/bots-garden/mini-me/permission"
)

func testHost() *Host {
	h := &Host{HostOrigin: "http://127.0.0.1:8080"}
	h.init()
	return h
}

func status(h http.Handler, method, host, path, origin string) (int, http.Header) {
	r := httptest.NewRequest(method, "http://"+host+path, strings.NewReader(`{"text":"hi"}`))
	if origin != "" {
		r.Header.Set("Origin", origin)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code, w.Header()
}

// The page's origin refuses other host names and cross-origin POSTs.
func TestHostGuard(t *testing.T) {
	h := testHost()
	page := h.Handler()
	code, hdr := status(page, "GET", "127.0.0.1:8080", "/", "")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, hdr.Get("Content-Security-Policy"), "frame-src http://127.0.0.1:*;")
	code, _ = status(page, "GET", "evil.example:8080", "/", "")
	assert.Equal(t, http.StatusForbidden, code, "DNS rebinding")
	code, _ = status(page, "POST", "127.0.0.1:8080", "/chat", "http://evil.example")
	assert.Equal(t, http.StatusForbidden, code, "a form from another site")
	code, _ = status(page, "POST", "127.0.0.1:8080", "/chat", "")
	assert.Equal(t, http.StatusForbidden, code, "no origin")
	code, _ = status(page, "GET", "127.0.0.1:8080", "/static/proxy.js", "")
	assert.Equal(t, http.StatusNotFound, code, "the proxy is served by the sandbox only")
	code, _ = status(page, "POST", "127.0.0.1:8080", "/view/nope/rpc", h.HostOrigin)
	assert.Equal(t, http.StatusNotFound, code)
}

// A view's origin serves its proxy page once, under its CSP, and nothing
// else; it answers for its own host name only.
func TestSandboxOrigin(t *testing.T) {
	h := testHost()
	v := &view{id: "v1", csp: "default-src 'none'; frame-ancestors " + h.HostOrigin,
		sandbox: sandbox{origin: "http://127.0.0.1:8081", token: "t1"}}
	sb := h.sandboxHandler(v)
	code, hdr := status(sb, "GET", "127.0.0.1:8081", "/proxy/t1", "")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, v.csp, hdr.Get("Content-Security-Policy"))
	code, _ = status(sb, "GET", "127.0.0.1:8081", "/proxy/t1", "")
	assert.Equal(t, http.StatusNotFound, code, "single use")
	for _, p := range []string{"/", "/proxy/", "/events", "/static/app.js", "/view/v1/html"} {
		code, _ = status(sb, "GET", "127.0.0.1:8081", p, "")
		assert.Equal(t, http.StatusNotFound, code, p)
	}
	code, _ = status(sb, "GET", "127.0.0.1:8081", "/proxy.js", "")
	assert.Equal(t, http.StatusOK, code)
	for _, host := range []string{"127.0.0.1:8080", "127.0.0.1:8082", "evil.example:8081"} {
		code, _ = status(sb, "GET", host, "/proxy.js", "")
		assert.Equal(t, http.StatusForbidden, code, host)
	}
}

// No response of the host's origin may be framed by another site, whose
// page could overlay the Allow buttons (issue 35 #2): every answer, the
// refusals too, says so in both the old and the new header.
func TestHostNeverFramed(t *testing.T) {
	h := testHost()
	page := h.Handler()
	for _, c := range []struct{ method, host, path, origin string }{
		{"GET", "127.0.0.1:8080", "/", ""},
		{"GET", "127.0.0.1:8080", "/static/app.js", ""},
		{"GET", "127.0.0.1:8080", "/static/nope", ""},
		{"GET", "127.0.0.1:8080", "/view/nope/html", ""},
		{"POST", "127.0.0.1:8080", "/chat", "http://evil.example"},
		{"POST", "127.0.0.1:8080", "/approve", h.HostOrigin},
		{"GET", "evil.example:8080", "/", ""},
	} {
		_, hdr := status(page, c.method, c.host, c.path, c.origin)
		assert.Equal(t, "DENY", hdr.Get("X-Frame-Options"), "%s %s", c.method, c.path)
		assert.Contains(t, hdr.Get("Content-Security-Policy"), "frame-ancestors 'none'", "%s %s", c.method, c.path)
	}
}

// An approval card words the tool's hints as its server states them, and
// says when it states none.
func TestHints(t *testing.T) {
	yes, no := true, false
	for _, c := range []struct {
		a    permission.Annotations
		want []string
	}{
		{permission.Annotations{}, []string{"no hints: it may do anything"}},
		{permission.Annotations{ReadOnlyHint: &yes, DestructiveHint: &yes, OpenWorldHint: &no}, []string{"read-only", "stays within its own system"}},
		{permission.Annotations{ReadOnlyHint: &no, DestructiveHint: &yes, IdempotentHint: &yes, OpenWorldHint: &yes},
			[]string{"may change things", "may delete or overwrite", "the same call twice has no further effect", "reaches the outside world"}},
		{permission.Annotations{DestructiveHint: &no, IdempotentHint: &no}, []string{"does not delete or overwrite"}},
	} {
		assert.Equal(t, c.want, hints(c.a))
	}
}

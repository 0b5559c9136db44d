package config

import (
	"errors"
	"fmt"
	"net"
	"net/textproto"
	"net/url"
	"strings"
)

// nameProblem says what is wrong with a non-empty server name, or "".
func nameProblem(s string) string {
	if len(s) > MaxNameLength {
		return fmt.Sprintf("name is %d bytes long (at most %d)", len(s), MaxNameLength)
	}
	for _, r := range s {
		if !isWordRune(r) {
			return fmt.Sprintf("invalid character %q in name (want letters, digits, _ and -)", r)
		}
	}
	return ""
}

// urlProblem says what is wrong with a server URL, or "". It never repeats
// the URL, which may carry a secret.
func urlProblem(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		// Details that quote part of the URL (a port, a host, an escape)
		// could quote a secret.
		if msg := err.Error(); !strings.Contains(msg, `"`) {
			return "invalid URL: " + strings.TrimPrefix(msg, "net/url: ")
		}
		return "invalid URL"
	}
	switch {
	case u.Scheme == "":
		return "URL has no scheme (want http or https)"
	case u.Scheme == "unix":
		return unixProblem(u)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Sprintf("unsupported URL scheme %s (want http or https)", quote(u.Scheme))
	case u.User != nil:
		return "URL must not contain user information; use auth"
	case u.Hostname() == "":
		return "URL has no host"
	}
	return ""
}

// plainOffLoopback reports whether s, a valid URL, is plain http to a host
// that is not loopback (localhost, 127.0.0.0/8, ::1).
func plainOffLoopback(s string) bool {
	u, err := url.Parse(s)
	if err != nil || !strings.EqualFold(u.Scheme, "http") {
		return false
	}
	h := u.Hostname()
	if strings.EqualFold(h, "localhost") {
		return false
	}
	ip := net.ParseIP(h)
	return ip == nil || !ip.IsLoopback()
}

// unixProblem says what is wrong with a unix socket URL,
// unix:///path/to.sock with an optional HTTP path after a colon
// (unix:///run/app.sock:/mcp), or "".
func unixProblem(u *url.URL) string {
	if u.Host != "" || !strings.HasPrefix(u.Path, "/") || u.User != nil {
		return "a unix socket URL is unix:///absolute/path.sock, with an optional :/http/path"
	}
	return ""
}

// isEnvName reports whether s matches [A-Za-z_][A-Za-z0-9_]*.
func isEnvName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, r := range s {
		if !isWordRune(r) || r == '-' {
			return false
		}
	}
	return true
}

// isToken reports whether s is a valid HTTP header name (an RFC 9110 token).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !isWordRune(r) && !strings.ContainsRune("!#$%&'*+.^`|~", r) {
			return false
		}
	}
	return true
}

// isHeaderValue reports whether s holds no control character but tab.
func isHeaderValue(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool {
		return r < ' ' && r != '\t' || r == 0x7f
	})
}

// transportHeaders are set by the HTTP transport itself; a configuration
// that set them would break the protocol.
var transportHeaders = map[string]bool{
	"Accept":               true,
	"Connection":           true,
	"Content-Length":       true,
	"Content-Type":         true,
	"Host":                 true,
	"Last-Event-Id":        true,
	"Mcp-Protocol-Version": true,
	"Mcp-Session-Id":       true,
	"Transfer-Encoding":    true,
}

// headerNameProblem says what is wrong with a header name of headers or
// auth.header, or "".
func headerNameProblem(name string) string {
	switch {
	case !isToken(name):
		return fmt.Sprintf("invalid header name %s", quote(name))
	case transportHeaders[textproto.CanonicalMIMEHeaderKey(name)]:
		return fmt.Sprintf("header %s is set by the transport", quote(name))
	}
	return ""
}

// hasNUL reports whether s holds a NUL byte, which no argv, environment or
// path can carry.
func hasNUL(s string) bool { return strings.IndexByte(s, 0) >= 0 }

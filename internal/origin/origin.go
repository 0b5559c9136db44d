// Package origin compares the origins of URLs (scheme, host and port,
// RFC 6454): the place a credential belongs to.
package origin

import (
	"net/url"
	"strings"
)

// Same reports whether a and b have the same scheme, host and port (a
// missing port is the scheme's default), ignoring case. Go's http.Client
// keeps Authorization on a redirect to another port of the same host; a
// credential belongs to one origin, so its senders compare all three.
func Same(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

// Of returns the origin of u as scheme://host[:port], in lower case: a
// map key, or a name for messages.
func Of(u *url.URL) string { return strings.ToLower(u.Scheme + "://" + u.Host) }

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}

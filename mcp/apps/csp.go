package apps

import (
	"encoding/json"
	"strings"
)

// maxDomains bounds the entries of one CSP list that are kept.
const maxDomains = 32

// ContentSecurityPolicy returns the Content-Security-Policy a view's
// document must be served under, built from its declared origins, and the
// entries it dropped, for the host to log. It keeps no origin on the
// user's machine or local network (see Networks): a host that knows the
// view's server is on one of them, or that opts in, calls
// ContentSecurityPolicyFor.
//
// With no CSP (nil), the policy is the spec's default, which lets the
// document run its own inline scripts and styles and reach nothing:
//
//	default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline';
//	img-src 'self' data:; media-src 'self' data:; connect-src 'none'; frame-src 'none';
//	object-src 'none'; base-uri 'self'
//
// With a CSP, each list adds its origins where the spec says:
// ResourceDomains to script-src, style-src, img-src, font-src and
// media-src; ConnectDomains to connect-src; FrameDomains to frame-src
// ('none' when empty); BaseURIDomains to base-uri ('self' when empty).
// Nothing else is ever allowed: no 'unsafe-eval', no blob:, no worker-src.
// 'self' is the sandbox origin that serves the document, which must serve
// nothing else.
//
// An entry is kept only if it is an origin: scheme http, https, ws or wss,
// a host name (its first label may be "*" for any subdomain) or an IPv4
// address, an optional port, and no path, query, credentials, quotes,
// spaces or semicolons. At most 32 entries of each list are kept. Every
// other entry is dropped and returned, so that a server cannot widen the
// policy by injecting directives.
func ContentSecurityPolicy(c *CSP) (policy string, dropped []string) {
	return ContentSecurityPolicyFor(c, 0)
}

// ContentSecurityPolicyFor is ContentSecurityPolicy keeping, besides
// public origins, the origins on the networks of reach: pass
// ServerNetworks of the view's server's URL to let a server on the user's
// machine or local network name its neighbours, or add networks to opt in
// whatever the server's address. An origin is placed on a network by its
// host as the browser reads it: an IPv4 address in any of the forms a URL
// accepts ("127.1", "0x7f000001", "2130706433" are all loopback), or a
// name (see Networks); a wildcard over an address is dropped.
func ContentSecurityPolicyFor(c *CSP, reach Networks) (policy string, dropped []string) {
	if c == nil {
		return "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; " +
			"img-src 'self' data:; media-src 'self' data:; connect-src 'none'; frame-src 'none'; " +
			"object-src 'none'; base-uri 'self'", nil
	}
	k, dropped := keep(c, reach)
	join := func(parts ...string) string {
		var out []string
		for _, p := range parts {
			if p != "" {
				out = append(out, p)
			}
		}
		return strings.Join(out, " ")
	}
	r, conn := strings.Join(k.ResourceDomains, " "), strings.Join(k.ConnectDomains, " ")
	fr, base := strings.Join(k.FrameDomains, " "), strings.Join(k.BaseURIDomains, " ")
	if fr == "" {
		fr = "'none'"
	}
	if base == "" {
		base = "'self'"
	}
	policy = "default-src 'none'" +
		"; script-src " + join("'self' 'unsafe-inline'", r) +
		"; style-src " + join("'self' 'unsafe-inline'", r) +
		"; connect-src " + join("'self'", conn) +
		"; img-src " + join("'self' data:", r) +
		"; font-src " + join("'self'", r) +
		"; media-src " + join("'self' data:", r) +
		"; frame-src " + fr +
		"; object-src 'none'" +
		"; base-uri " + base
	return policy, dropped
}

// AppliedCSP returns the origins of c that ContentSecurityPolicyFor(c,
// reach) keeps, list by list: what a host reports to the view as applied
// (Sandbox.CSP), as the spec asks. nil for nil.
func AppliedCSP(c *CSP, reach Networks) *CSP {
	if c == nil {
		return nil
	}
	k, _ := keep(c, reach)
	return &k
}

// keep returns the entries of c's lists that are kept, and those dropped.
func keep(c *CSP, reach Networks) (kept CSP, dropped []string) {
	clean := func(list []string) []string {
		var out []string
		for _, d := range list {
			if len(out) < maxDomains && allowedOrigin(d, reach) {
				out = append(out, d)
			} else {
				dropped = append(dropped, d)
			}
		}
		return out
	}
	kept.ResourceDomains = clean(c.ResourceDomains)
	kept.ConnectDomains = clean(c.ConnectDomains)
	kept.FrameDomains = clean(c.FrameDomains)
	kept.BaseURIDomains = clean(c.BaseURIDomains)
	return kept, dropped
}

// allowedOrigin reports whether d is a CSP origin we accept (see
// ContentSecurityPolicy) on a public network or one of reach.
func allowedOrigin(d string, reach Networks) bool {
	host, wildcard, ok := originHost(d)
	if !ok {
		return false
	}
	n, ok := hostNetworks(strings.ToLower(host))
	if !ok || wildcard && endsInNumber(host) {
		return false
	}
	return n&^reach == 0
}

// originHost returns the host of d, without its wildcard label, if d is a
// well-formed origin.
func originHost(d string) (host string, wildcard, ok bool) {
	scheme, hostport, ok := strings.Cut(d, "://")
	switch scheme {
	case "http", "https", "ws", "wss":
	default:
		return "", false, false
	}
	if !ok || len(hostport) > 270 {
		return "", false, false
	}
	host = hostport
	if i := strings.LastIndexByte(hostport, ':'); i >= 0 {
		host = hostport[:i]
		port := hostport[i+1:]
		if port == "" || len(port) > 5 || strings.Trim(port, "0123456789") != "" {
			return "", false, false
		}
	}
	labels := strings.Split(host, ".")
	if labels[0] == "*" {
		if len(labels) < 3 {
			return "", false, false // "*.com": a whole top-level domain
		}
		labels, host, wildcard = labels[1:], host[2:], true
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || strings.Trim(strings.ToLower(l), "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
			return "", false, false
		}
	}
	return host, wildcard, true
}

// Permissions are browser features a view asks for, or a host grants.
type Permissions struct {
	// Camera, Microphone, Geolocation and ClipboardWrite are the features
	// of the spec; their JSON form is an empty object when set.
	Camera, Microphone, Geolocation, ClipboardWrite bool
}

type permissionsWire struct {
	Camera         *struct{} `json:"camera,omitempty"`
	Microphone     *struct{} `json:"microphone,omitempty"`
	Geolocation    *struct{} `json:"geolocation,omitempty"`
	ClipboardWrite *struct{} `json:"clipboardWrite,omitempty"`
}

// UnmarshalJSON reads {"camera":{},...}: a feature is asked for when its
// key is present with an object.
func (p *Permissions) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	set := func(k string) bool {
		v := strings.TrimSpace(string(raw[k]))
		return strings.HasPrefix(v, "{")
	}
	*p = Permissions{Camera: set("camera"), Microphone: set("microphone"), Geolocation: set("geolocation"), ClipboardWrite: set("clipboardWrite")}
	return nil
}

// MarshalJSON writes the features set as empty objects.
func (p Permissions) MarshalJSON() ([]byte, error) {
	on := func(b bool) *struct{} {
		if b {
			return &struct{}{}
		}
		return nil
	}
	return json.Marshal(permissionsWire{on(p.Camera), on(p.Microphone), on(p.Geolocation), on(p.ClipboardWrite)})
}

// Grant returns the features both asked for (p) and allowed by the host.
func (p Permissions) Grant(allowed Permissions) Permissions {
	return Permissions{Camera: p.Camera && allowed.Camera, Microphone: p.Microphone && allowed.Microphone,
		Geolocation: p.Geolocation && allowed.Geolocation, ClipboardWrite: p.ClipboardWrite && allowed.ClipboardWrite}
}

// Allow returns the iframe allow attribute for the features set, such as
// "camera; clipboard-write"; "" when none is. Set it on both frames of a
// sandbox proxy.
func (p Permissions) Allow() string {
	var out []string
	for _, f := range []struct {
		on   bool
		name string
	}{{p.Camera, "camera"}, {p.Microphone, "microphone"}, {p.Geolocation, "geolocation"}, {p.ClipboardWrite, "clipboard-write"}} {
		if f.on {
			out = append(out, f.name)
		}
	}
	return strings.Join(out, "; ")
}

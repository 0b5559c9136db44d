package apps

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// Networks is a set of the networks that are not the public Internet: the
// user's machine, their local network, and link-local addresses. A view's
// declared origins may name them only when its host allows it (see
// ContentSecurityPolicyFor): a remote server's view must not reach the
// user's local model server, their other MCP servers, their router or a
// cloud's metadata service. The zero value is none.
type Networks uint8

const (
	// Loopback is the user's machine: 127.0.0.0/8, ::1, 0.0.0.0 and ::
	// (which browsers send to the machine itself), "localhost" and the
	// names under it.
	Loopback Networks = 1 << iota
	// Private is a local network: 10.0.0.0/8, 172.16.0.0/12,
	// 192.168.0.0/16, 100.64.0.0/10 (carrier-grade NAT), fc00::/7, and
	// the names only a local resolver knows: one label without a dot
	// ("router"), and names under local, lan, home.arpa, internal,
	// intranet, corp and localdomain.
	Private
	// LinkLocal is 169.254.0.0/16 (where clouds serve their instance
	// metadata) and fe80::/10.
	LinkLocal
)

// localSuffixes are the top-level names that only a local resolver
// answers.
var localSuffixes = []string{"local", "lan", "home.arpa", "internal", "intranet", "corp", "localdomain"}

// ServerNetworks returns the networks a view of the server at serverURL
// may reach because the server itself is on them: Loopback for a server on
// the user's machine, Private for one on a private address or local name,
// LinkLocal for one on a link-local address, none for a public one or a
// URL that does not parse. serverURL "" is a server started as a local
// command (stdio), on the user's machine: Loopback.
//
// A public name that a resolver maps to a private address counts as
// public: the host decides from what the configuration says, never from
// DNS, which a server controls.
func ServerNetworks(serverURL string) Networks {
	if serverURL == "" {
		return Loopback
	}
	u, err := url.Parse(serverURL)
	if err != nil {
		return 0
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if a, err := netip.ParseAddr(host); err == nil {
		return addrNetworks(a)
	}
	n, _ := hostNetworks(host)
	return n
}

// hostNetworks classifies a lower-case host name or IPv4 address as a
// browser reads it, wildcard excluded. ok is false when the browser would
// reject it: a host that ends in a number but is no IPv4 address.
func hostNetworks(host string) (n Networks, ok bool) {
	if endsInNumber(host) {
		a, ok := parseIPv4(host)
		if !ok {
			return 0, false
		}
		return addrNetworks(a), true
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return Loopback, true
	}
	if !strings.Contains(host, ".") {
		return Private, true
	}
	for _, s := range localSuffixes {
		if host == s || strings.HasSuffix(host, "."+s) {
			return Private, true
		}
	}
	return 0, true
}

// addrNetworks classifies an IP address.
func addrNetworks(a netip.Addr) Networks {
	a = a.Unmap()
	switch {
	case a.IsLoopback(), a.IsUnspecified():
		return Loopback
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return LinkLocal
	case a.IsPrivate(), cgnat.Contains(a):
		return Private
	}
	return 0
}

var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// endsInNumber reports whether a browser reads host as an IPv4 address
// (the URL standard's "ends in a number"): its last label is decimal
// digits, or a number in the hexadecimal form 0x.
func endsInNumber(host string) bool {
	last := host[strings.LastIndexByte(host, '.')+1:]
	if last != "" && strings.Trim(last, "0123456789") == "" {
		return true
	}
	_, ok := ipv4Part(last)
	return ok
}

// parseIPv4 parses host as the URL standard's IPv4 parser does: one to
// four parts, each decimal, octal (a leading 0) or hexadecimal (0x), the
// last filling the bytes left, so that "127.1", "0x7f000001" and
// "2130706433" are all 127.0.0.1.
func parseIPv4(host string) (netip.Addr, bool) {
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for i, p := range parts {
		n, ok := ipv4Part(p)
		if !ok {
			return netip.Addr{}, false
		}
		if i < len(parts)-1 {
			if n > 255 {
				return netip.Addr{}, false
			}
			v |= n << (8 * (3 - i))
			continue
		}
		if n >= 1<<(8*(5-len(parts))) {
			return netip.Addr{}, false
		}
		v |= n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// ipv4Part parses one part of an IPv4 address: "0x" or "0X" then
// hexadecimal digits (none is 0), a leading "0" then octal digits, or
// decimal digits.
func ipv4Part(p string) (uint64, bool) {
	base := 10
	switch {
	case len(p) >= 2 && (p[:2] == "0x" || p[:2] == "0X"):
		p, base = p[2:], 16
		if p == "" {
			return 0, true
		}
	case len(p) > 1 && p[0] == '0':
		p, base = p[1:], 8
	case p == "":
		return 0, false
	}
	n, err := strconv.ParseUint(p, base, 64)
	return n, err == nil
}

package apps_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/mcp/apps"
)

func TestContentSecurityPolicyDefault(t *testing.T) {
	p, dropped := apps.ContentSecurityPolicy(nil)
	assert.Nil(t, dropped)
	assert.Equal(t, "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "+
		"img-src 'self' data:; media-src 'self' data:; connect-src 'none'; frame-src 'none'; object-src 'none'; base-uri 'self'", p)
}

func TestContentSecurityPolicyDeclared(t *testing.T) {
	p, dropped := apps.ContentSecurityPolicy(&apps.CSP{
		ConnectDomains:  []string{"https://api.example.com", "wss://live.example.com:8443"},
		ResourceDomains: []string{"https://*.cdn.example.com"},
		FrameDomains:    []string{"https://player.example.com"},
		BaseURIDomains:  []string{"https://base.example.com"},
	})
	assert.Empty(t, dropped)
	assert.Equal(t, "default-src 'none'"+
		"; script-src 'self' 'unsafe-inline' https://*.cdn.example.com"+
		"; style-src 'self' 'unsafe-inline' https://*.cdn.example.com"+
		"; connect-src 'self' https://api.example.com wss://live.example.com:8443"+
		"; img-src 'self' data: https://*.cdn.example.com"+
		"; font-src 'self' https://*.cdn.example.com"+
		"; media-src 'self' data: https://*.cdn.example.com"+
		"; frame-src https://player.example.com"+
		"; object-src 'none'"+
		"; base-uri https://base.example.com", p)
}

func TestContentSecurityPolicyEmptyLists(t *testing.T) {
	p, _ := apps.ContentSecurityPolicy(&apps.CSP{})
	assert.Contains(t, p, "; connect-src 'self';")
	assert.Contains(t, p, "; frame-src 'none';")
	assert.Contains(t, p, "; base-uri 'self'")
	assert.NotContains(t, p, "unsafe-eval")
	assert.NotContains(t, p, "blob:")
}

// Entries that are not plain origins are dropped, so that no server can
// add a directive or a keyword to the policy.
func TestContentSecurityPolicyDropsInjections(t *testing.T) {
	bad := []string{
		"https://a.example.com; script-src *", "https://a.example.com 'unsafe-eval'", "'unsafe-eval'", "*",
		"https://*", "https://*.com", "data:", "blob:", "javascript:alert(1)", "https://a.example.com/path",
		"https://user@a.example.com", "https://a.example.com\r\nX: y", "ftp://a.example.com", "https://a..com",
		"https://a.*.example.com", "https://a.example.com:99999x", "https://a.example.com:", `https://"x".com`,
		"HTTPS://a.example.com", "https://a.example.com?q", "", "https://",
	}
	p, dropped := apps.ContentSecurityPolicy(&apps.CSP{ConnectDomains: append(bad, "http://203.0.113.7:8080")})
	assert.ElementsMatch(t, bad, dropped)
	assert.Contains(t, p, "; connect-src 'self' http://203.0.113.7:8080;")
	assert.Equal(t, 9, strings.Count(p, ";"), "no directive added: %s", p)
	assert.NotContains(t, p, "unsafe-eval")
	assert.NotContains(t, p, "*")
}

// The origins of the user's machine, local network and link-local
// addresses, in every form a browser reads, are dropped for a view whose
// server is on none of them (issue 35 #10); public ones are kept.
func TestContentSecurityPolicyDropsLocalOrigins(t *testing.T) {
	local := []string{
		"http://localhost:11434", "http://LOCALHOST", "http://api.localhost", "https://*.dev.localhost",
		"http://127.0.0.1:8080", "ws://127.0.0.1", "http://127.1", "http://0x7f000001", "http://2130706433",
		"http://0177.0.0.1", "http://0x7f.0.0.1", "http://0.0.0.0:3000", "http://0",
		"http://10.0.0.1", "http://172.16.5.4", "http://192.168.1.1", "http://100.64.0.1", "http://3232235777",
		"http://router", "http://nas.local", "http://printer.lan", "http://box.home.arpa", "http://svc.internal",
		"http://169.254.169.254", "http://0xa9fea9fe", "http://*.0.0.1", "http://1.2.3.4.5", "http://0x1g.1",
	}
	public := []string{"https://api.example.com", "http://8.8.8.8", "https://*.cdn.example.com", "http://172.32.0.1", "https://1x.example.com"}
	p, dropped := apps.ContentSecurityPolicy(&apps.CSP{ConnectDomains: append(append([]string{}, local...), public...)})
	assert.ElementsMatch(t, local, dropped)
	assert.Contains(t, p, "; connect-src 'self' "+strings.Join(public, " ")+";")
}

// A server's own network is allowed to its view, and no other: a host
// passes ServerNetworks of the server's URL, or opts in with more.
func TestContentSecurityPolicyForServerNetwork(t *testing.T) {
	csp := &apps.CSP{ConnectDomains: []string{"http://localhost:11434", "http://192.168.1.20", "http://169.254.169.254", "https://api.example.com"}}
	for _, tc := range []struct {
		server string
		reach  apps.Networks
		kept   string
	}{
		{"https://mcp.example.com/mcp", 0, "https://api.example.com"},
		{"http://203.0.113.9:8080/mcp", 0, "https://api.example.com"},
		{"http://127.0.0.1:3001/mcp", apps.Loopback, "http://localhost:11434 https://api.example.com"},
		{"http://[::1]:3001/mcp", apps.Loopback, "http://localhost:11434 https://api.example.com"},
		{"http://localhost:3001/mcp", apps.Loopback, "http://localhost:11434 https://api.example.com"},
		{"", apps.Loopback, "http://localhost:11434 https://api.example.com"}, // stdio
		{"http://192.168.1.10/mcp", apps.Private, "http://192.168.1.20 https://api.example.com"},
		{"http://nas.local:8080/mcp", apps.Private, "http://192.168.1.20 https://api.example.com"},
		{"http://[fd00::1]/mcp", apps.Private, "http://192.168.1.20 https://api.example.com"},
		{"http://169.254.1.1/mcp", apps.LinkLocal, "http://169.254.169.254 https://api.example.com"},
		{"http://[fe80::1]/mcp", apps.LinkLocal, "http://169.254.169.254 https://api.example.com"},
		{"::not a url", 0, "https://api.example.com"},
	} {
		reach := apps.ServerNetworks(tc.server)
		assert.Equal(t, tc.reach, reach, tc.server)
		p, _ := apps.ContentSecurityPolicyFor(csp, reach)
		assert.Contains(t, p, "; connect-src 'self' "+tc.kept+";", tc.server)
	}
	assert.Equal(t, &apps.CSP{ConnectDomains: []string{"http://localhost:11434", "https://api.example.com"}},
		apps.AppliedCSP(csp, apps.Loopback), "what the view is told it may reach")
	assert.Nil(t, apps.AppliedCSP(nil, 0))
	p, dropped := apps.ContentSecurityPolicyFor(csp, apps.Loopback|apps.Private|apps.LinkLocal)
	assert.Empty(t, dropped, "a host that opts in keeps them all")
	assert.Contains(t, p, "; connect-src 'self' "+strings.Join(csp.ConnectDomains, " ")+";")
}

func TestContentSecurityPolicyBoundsLists(t *testing.T) {
	var many []string
	for i := 0; i < 40; i++ {
		many = append(many, "https://h"+string(rune('a'+i%26))+string(rune('a'+i/26))+".example.com")
	}
	_, dropped := apps.ContentSecurityPolicy(&apps.CSP{ResourceDomains: many})
	assert.Len(t, dropped, 8)
}

func TestPermissions(t *testing.T) {
	var p apps.Permissions
	require.NoError(t, json.Unmarshal([]byte(`{"camera":{},"geolocation":{},"microphone":true,"clipboardWrite":null}`), &p))
	assert.Equal(t, apps.Permissions{Camera: true, Geolocation: true}, p)
	assert.Equal(t, "camera; geolocation", p.Allow())
	g := p.Grant(apps.Permissions{Geolocation: true, Microphone: true})
	assert.Equal(t, apps.Permissions{Geolocation: true}, g)
	out, err := json.Marshal(g)
	require.NoError(t, err)
	assert.JSONEq(t, `{"geolocation":{}}`, string(out))
	assert.Equal(t, "", apps.Permissions{}.Allow())
	require.Error(t, json.Unmarshal([]byte(`[1]`), &p))
}

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
	p, dropped := apps.ContentSecurityPolicy(&apps.CSP{ConnectDomains: append(bad, "http://127.0.0.1:8080")})
	assert.ElementsMatch(t, bad, dropped)
	assert.Contains(t, p, "; connect-src 'self' http://127.0.0.1:8080;")
	assert.Equal(t, 9, strings.Count(p, ";"), "no directive added: %s", p)
	assert.NotContains(t, p, "unsafe-eval")
	assert.NotContains(t, p, "*")
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

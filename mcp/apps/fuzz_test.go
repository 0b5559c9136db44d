package apps_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/apps"
)

// Whatever a view sends, the bridge neither panics nor sends anything but
// JSON-RPC objects back.
func FuzzBridgeHandle(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ui/initialize","params":{}}`,
		`{"jsonrpc":"2.0","method":"ui/notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"poll","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"ui/message","params":{"role":"user","content":{"type":"text","text":"x"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"ui/open-link","params":{"url":"javascript:1"}}`,
		`{"jsonrpc":"2.0","method":"ui/notifications/size-changed","params":{"height":1e999}}`,
		`[1,2]`, `null`, `{"jsonrpc":"2.0","id":null,"result":{}}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		var mu sync.Mutex
		var sent [][]byte
		b := &apps.Bridge{Server: &fakeServer{tools: appTools()}, Policy: allow,
			Send:    func(m []byte) error { mu.Lock(); sent = append(sent, m); mu.Unlock(); return nil },
			Message: func(context.Context, []mcp.Content) error { return nil }}
		_ = b.Handle([]byte(`{"jsonrpc":"2.0","id":0,"method":"ui/initialize","params":{}}`))
		_ = b.Handle([]byte(`{"jsonrpc":"2.0","method":"ui/notifications/initialized"}`))
		_ = b.Handle([]byte(msg))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_ = b.Close(ctx) // waits for the requests in flight
		mu.Lock()
		defer mu.Unlock()
		for _, m := range sent {
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(m, &obj); err != nil || string(obj["jsonrpc"]) != `"2.0"` {
				t.Fatalf("sent %s", m)
			}
		}
	})
}

// No list of domains can add a directive or a keyword to the policy.
func FuzzContentSecurityPolicy(f *testing.F) {
	f.Add("https://a.example.com", "https://*.cdn.example.com;script-src *", "'unsafe-eval'")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		p, _ := apps.ContentSecurityPolicy(&apps.CSP{ConnectDomains: []string{a, b}, ResourceDomains: []string{c}, FrameDomains: []string{b}, BaseURIDomains: []string{a}})
		if n := strings.Count(p, ";"); n != 9 {
			t.Fatalf("%d directives: %q", n+1, p)
		}
		for _, bad := range []string{"unsafe-eval", "\n", "\r", "\"", ","} {
			if strings.Contains(p, bad) {
				t.Fatalf("%q in %q", bad, p)
			}
		}
		rest := strings.NewReplacer("'none'", "", "'self'", "", "'unsafe-inline'", "").Replace(p)
		if strings.Contains(rest, "'") {
			t.Fatalf("a keyword the host did not put: %q", p)
		}
	})
}

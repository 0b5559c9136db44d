package apps_test

import (
	"encoding/json"
	"fmt"

	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/apps"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

// A host declares MCP Apps to every server of its Toolset.
func ExampleDeclare() {
	var opts toolset.Options
	apps.Declare(&opts.Client)
	fmt.Println(string(opts.Client.Extensions[apps.Extension]))
	// Output: {"mimeTypes":["text/html;profile=mcp-app"]}
}

// The policy a view's document is served under: the declared origin is
// kept, the entry that tries to add a directive is dropped.
func ExampleContentSecurityPolicy() {
	policy, dropped := apps.ContentSecurityPolicy(&apps.CSP{
		ConnectDomains: []string{"https://api.example.com", "https://x.example.com; script-src *"},
	})
	fmt.Println(policy)
	fmt.Printf("dropped: %q\n", dropped)
	// Output:
	// default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; connect-src 'self' https://api.example.com; img-src 'self' data:; font-src 'self'; media-src 'self' data:; frame-src 'none'; object-src 'none'; base-uri 'self'
	// dropped: ["https://x.example.com; script-src *"]
}

// A host plugs a Bridge into its transport to the view's frame: each
// message from the view goes to Handle, each message for it comes out of
// Send. The tool's input waits until the view is initialized.
func ExampleBridge() {
	// The view's server: a *mcp.Client, or a Toolset's AppServer.
	var srv apps.Server
	b := &apps.Bridge{
		Server:   srv,
		HostInfo: mcp.Implementation{Name: "my-host", Version: "1.0"},
		Context:  apps.HostContext{Theme: "dark", Platform: "web"},
		Send: func(msg []byte) error {
			var m struct {
				Method string
				Result *struct{ ProtocolVersion string }
				Error  *struct{ Code int }
			}
			_ = json.Unmarshal(msg, &m)
			switch {
			case m.Method != "":
				fmt.Println("to the view:", m.Method)
			case m.Result != nil:
				fmt.Println("to the view: result, dialect", m.Result.ProtocolVersion)
			case m.Error != nil:
				fmt.Println("to the view: error", m.Error.Code)
			}
			return nil
		},
	}
	// When the host removes the frame: b.Close(ctx), which asks the view
	// to tear down and waits (a bounded time) for its answer.
	_ = b.ToolInput(json.RawMessage(`{"city":"Paris"}`))
	_ = b.Handle([]byte(`{"jsonrpc":"2.0","id":1,"method":"ui/initialize","params":{"protocolVersion":"2026-01-26"}}`))
	_ = b.Handle([]byte(`{"jsonrpc":"2.0","method":"ui/notifications/initialized"}`))
	err := b.Handle([]byte(`{"jsonrpc":"2.0","id":2,"method":"eval","params":{"code":"alert(1)"}}`))
	fmt.Println(err)
	// Output:
	// to the view: result, dialect 2026-01-26
	// to the view: ui/notifications/tool-input
	// to the view: error -32601
	// apps: refused (-32601): method not found
}

package toolset_test

import (
	"context"
	"encoding/json"
	"fmt"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

// Discover gathers the tools of every configured server into one
// catalogue; a server that cannot be used is skipped with a warning.
func ExampleDiscover() {
	srv := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{{
		Def: json.RawMessage(`{"name":"resolve-library-id","description":"Finds a library.","inputSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`),
		Call: func(_ context.Context, args json.RawMessage, _ func(string, any)) (any, error) {
			var a struct{ Name string }
			_ = json.Unmarshal(args, &a)
			return map[string]any{"content": []any{map[string]any{"type": "text", "text": "/libs/" + a.Name}}}, nil
		},
	}}}
	url := srv.Start()
	defer srv.Close()

	ctx := context.Background()
	ts, err := toolset.Discover(ctx, []config.Server{
		{Name: "context7", URL: url},
		{Name: "github", URL: "https://api.example.com/mcp", Auth: &config.Auth{Type: config.AuthBearer, TokenEnv: "MINIME_EXAMPLE_UNSET_TOKEN"}},
	}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ts.Shutdown(ctx)

	for _, w := range ts.Warnings() {
		fmt.Println("warning:", w)
	}
	for _, t := range ts.Tools() {
		fmt.Printf("%s (%s on %s)\n", t.Name, t.Tool.Name, t.Server)
	}
	res, err := ts.Call(ctx, "context7_resolve-library-id", map[string]string{"name": "react"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text())
	// Output:
	// warning: github: server-skipped: mcp: token missing: environment variable MINIME_EXAMPLE_UNSET_TOKEN is not set
	// context7_resolve-library-id (resolve-library-id on context7)
	// /libs/react
}

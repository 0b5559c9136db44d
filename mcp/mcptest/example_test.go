package mcptest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/mcptest"
)

// A test serves its own Go tool over MCP on 127.0.0.1 and points the code
// under test at srv.URL; here an mcp.Client calls the tool, and the test
// checks what the server ran.
func ExampleNewServer() {
	srv, err := mcptest.NewServer(mcptest.Tool{
		Name:        "greet",
		Description: "Greets someone",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
		Handler: func(_ context.Context, args json.RawMessage) (string, error) {
			var in struct{ Name string }
			if err := json.Unmarshal(args, &in); err != nil {
				return "", err
			}
			return "Hello, " + in.Name + "!", nil
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	ctx := context.Background()
	c, err := mcp.Connect(ctx, &mcp.HTTPTransport{URL: srv.URL}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	res, err := c.CallTool(ctx, "greet", map[string]string{"name": "Ada"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text())
	fmt.Println(srv.Calls()[0].Tool, string(srv.Calls()[0].Arguments))
	// Output:
	// Hello, Ada!
	// greet {"name":"Ada"}
}

package demo_test

import (
	"context"
	"fmt"
	"log"

	"git.rickub.com/bots-garden/mini-me/examples/demo"
	"git.rickub.com/bots-garden/mini-me/mcp"
)

// A demo server on 127.0.0.1, reached by mini-me's own client.
func ExampleServe() {
	url, stop, err := demo.Serve(demo.Text())
	if err != nil {
		log.Fatal(err)
	}
	defer stop()
	ctx := context.Background()
	c, err := mcp.Connect(ctx, &mcp.HTTPTransport{URL: url}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	res, err := c.CallTool(ctx, "count", map[string]string{"text": "to be or not to be"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.Era(), c.ProtocolVersion(), res.Text())
	// Output: modern 2026-07-28 6 words, 18 characters, 1 line
}

// The demo's servers on 127.0.0.1, their configuration and their tools:
// what the examples start from.
func ExampleDiscover() {
	servers, err := demo.Discover(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	defer servers.Close()
	fmt.Println(servers.Config.File)
	for _, s := range servers.Tools.Servers() {
		fmt.Println(s.Name, s.Era, s.Tools, "tools")
	}
	// Output:
	// the demo's servers
	// text modern 3 tools
	// notes legacy 4 tools
}

package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"time"

	"git.rickub.com/bots-garden/mini-me/mcp"
)

// A server living in the host's own process, reached over net.Pipe: the
// host dials it, mini-me does the rest (era, limits, cancellation).
func ExampleStreamTransport() {
	ctx := context.Background()
	t := &mcp.StreamTransport{Name: "greeter", Dial: func(context.Context) (io.ReadWriteCloser, error) {
		ours, theirs := net.Pipe()
		go serveGreeter(theirs) // returns when the client closes its end
		return ours, nil
	}}
	c, err := mcp.Connect(ctx, t, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	res, err := c.CallTool(ctx, "greet", map[string]string{"name": "Ada"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.Era(), res.Text())
	// Output: modern Hello, Ada
}

// serveGreeter is a minimal 2026-07-28 server: one JSON-RPC message per
// line, a greet tool.
func serveGreeter(conn net.Conn) {
	defer conn.Close()
	in, out := bufio.NewScanner(conn), json.NewEncoder(conn)
	for in.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Arguments struct{ Name string } `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &req) != nil || req.ID == nil {
			continue // a notification
		}
		reply := map[string]any{"jsonrpc": "2.0", "id": req.ID}
		switch req.Method {
		case "server/discover":
			reply["result"] = map[string]any{"supportedVersions": []string{mcp.Version20260728},
				"capabilities": map[string]any{"tools": map[string]any{}}}
		case "tools/call":
			reply["result"] = map[string]any{"content": []any{
				map[string]any{"type": "text", "text": "Hello, " + req.Params.Arguments.Name}}}
		default:
			reply["error"] = map[string]any{"code": -32601, "message": "method not found"}
		}
		if out.Encode(reply) != nil {
			return
		}
	}
}

// A local server listening on a unix domain socket rather than a port,
// which no web page can reach; its MCP endpoint is /mcp.
func ExampleHTTPTransport_unixSocket() {
	c, err := mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: "unix:///run/user/1000/notes.sock:/mcp"}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	fmt.Println(c.ServerInfo().Name)
}

// A host that must be gone within its own deadline (a request handler, a
// SIGTERM grace) stops the server within it.
func ExampleClient_Shutdown() {
	c, err := mcp.Connect(context.Background(), &mcp.CommandTransport{Command: "notes-mcp"}, nil)
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if err := c.Shutdown(ctx); err != nil {
		log.Print(err)
	}
}

// Command mcpgo-v0.44.1 is an MCP server on github.com/mark3labs/mcp-go
// v0.44.1 (February 2026), tapped (see package tap), for the interop
// tests: one echo tool over stdio or, with -http, over Streamable HTTP
// (stateless with -stateless).
package main

import (
	"context"
	"flag"
	"log"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"interop/tap"
)

func main() {
	useHTTP := flag.Bool("http", false, "serve Streamable HTTP on 127.0.0.1 instead of stdio")
	stateless := flag.Bool("stateless", false, "with -http, serve without sessions")
	flag.Parse()
	tap.Start()
	s := server.NewMCPServer("mcpgo-v0.44.1", "1.0.0")
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Returns its text."), mcp.WithString("text")),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("echo: " + req.GetString("text", "")), nil
		})
	if *useHTTP {
		tap.Serve(server.NewStreamableHTTPServer(s, server.WithStateLess(*stateless)))
		return
	}
	if err := server.NewStdioServer(s).Listen(context.Background(), tap.Stdin(), tap.Stdout()); err != nil {
		log.Fatal(err)
	}
}

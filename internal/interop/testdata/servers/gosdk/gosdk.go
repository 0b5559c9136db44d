// Package gosdk is an MCP server on the official Go SDK, tapped (see
// package tap), for the interop tests. It requires the oldest SDK release
// tested; each program beside it (gosdk-vX.Y.Z) requires the release it
// is built with, which the build selects.
package gosdk

import (
	"context"
	"flag"
	"log"
	"net/http"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"interop/tap"
)

type echoArgs struct {
	Text string `json:"text"`
}

// Main serves one echo tool over stdio or, with -http, over Streamable HTTP
// (stateless with -stateless). opts may be nil.
func Main(name string, opts *sdk.ServerOptions) {
	useHTTP := flag.Bool("http", false, "serve Streamable HTTP on 127.0.0.1 instead of stdio")
	stateless := flag.Bool("stateless", false, "with -http, serve without sessions")
	flag.Parse()
	tap.Start()
	s := sdk.NewServer(&sdk.Implementation{Name: name, Version: "1.0.0"}, opts)
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Returns its text."},
		func(_ context.Context, _ *sdk.CallToolRequest, in echoArgs) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + in.Text}}}, nil, nil
		})
	if *useHTTP {
		tap.Serve(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s },
			&sdk.StreamableHTTPOptions{Stateless: *stateless}))
		return
	}
	if err := s.Run(context.Background(), &sdk.IOTransport{Reader: tap.Stdin(), Writer: tap.Stdout()}); err != nil {
		log.Fatal(err)
	}
}

package mcp_test

import (
	"context"
	"fmt"
	"log"

	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
)

// Hooks watch every request made with the context they are attached to.
// An adapter would start a span in RequestStart, return the context
// holding it, end it in RequestDone, and give the span's traceparent in
// TraceContext; here they print.
func ExampleWithTrace() {
	srv := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{mcptest.EchoTool(), failTool()}}
	url := srv.Start()
	defer srv.Close()
	c, err := mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: url}, &mcp.Options{ServerName: "demo"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	ctx := mcp.WithTrace(context.Background(), &mcp.ClientTrace{
		RequestStart: func(ctx context.Context, req *mcp.RequestInfo) context.Context {
			fmt.Printf("start %s on %s (%s)\n", req.SpanName(), req.Server, req.ProtocolVersion)
			return ctx
		},
		RequestDone: func(_ context.Context, req *mcp.RequestInfo, res *mcp.RequestResult) {
			fmt.Printf("done  %s error.type=%q\n", req.SpanName(), res.ErrorType)
		},
		TraceContext: func(context.Context) (traceparent, tracestate string) {
			return "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", ""
		},
	})
	if _, err := c.CallTool(ctx, "echo", map[string]string{"text": "hi"}); err != nil {
		log.Fatal(err)
	}
	if _, err := c.CallTool(ctx, "fail", nil); err != nil {
		log.Fatal(err)
	}
	// Output:
	// start tools/call echo on demo (2026-07-28)
	// done  tools/call echo error.type=""
	// start tools/call fail on demo (2026-07-28)
	// done  tools/call fail error.type="tool_error"
}

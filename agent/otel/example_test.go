package otel_test

import (
	"context"
	"fmt"
	"log"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"git.rickub.com/bots-garden/mini-me/agent/otel"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
)

// The Hooks' Context traces whatever is done with it: here one MCP call,
// recorded in memory. A host gives its own providers (or none: the global
// ones) and the same context to toolset.Discover and Agent.Run.
func ExampleHooks_Context() {
	srv := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{weatherTool()}}
	url := srv.Start()
	defer srv.Close()

	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	hooks, err := otel.New(otel.Config{TracerProvider: tp})
	if err != nil {
		log.Fatal(err)
	}
	ctx := hooks.Context(context.Background())

	c, err := mcp.Connect(ctx, &mcp.HTTPTransport{URL: url}, &mcp.Options{ServerName: "weather"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CallTool(ctx, "get_weather", map[string]string{"city": "Paris"}); err != nil {
		log.Fatal(err)
	}
	for _, s := range spans.Ended() {
		fmt.Println(s.SpanKind(), s.Name())
	}
	// Output:
	// client server/discover
	// client tools/call get_weather
}

package mcp_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
)

// A host whose identity system none of package oauth's grants covers
// supplies its own token source: a function returning the current token.
func ExampleTokenFunc() {
	inner := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{mcptest.EchoTool()}}
	inner.Start()
	defer inner.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer token-from-the-vault" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	defer srv.Close()

	vault := func(context.Context) (string, error) {
		return "token-from-the-vault", nil // a real host reads its cache here
	}
	ctx := context.Background()
	c, err := mcp.Connect(ctx, &mcp.HTTPTransport{URL: srv.URL, Credentials: mcp.TokenFunc(vault)}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	tools, err := c.ListTools(ctx)
	fmt.Println(len(tools), "tool,", err)
	// Output: 1 tool, <nil>
}

package oauth_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/internal/oauthtest"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/oauth"
)

// An Authorizer as the Credentials of an HTTP transport: the server's 401
// starts the sign-in, the Browser brings the redirect back, and the call
// goes through with the token.
func ExampleNew() {
	as := &oauthtest.Server{} // an authorization server, for the example
	as.Start()
	defer as.Close()
	mcpServer := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{{
		Def: json.RawMessage(`{"name":"search","inputSchema":{"type":"object"}}`),
	}}}
	mcpServer.Start()
	defer mcpServer.Close()
	rs := oauthtest.Resource(mcpServer, as, "") // the MCP server, behind OAuth
	defer rs.Close()

	a, err := oauth.New(rs.URL+"/mcp", oauth.Config{
		// A real host opens the URL in a browser (oauth.Terminal prints
		// it); here the redirect is read from the authorization server.
		Browser:     follow,
		RedirectURL: "http://127.0.0.1:8976/callback",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer a.CloseIdleConnections()
	ctx := context.Background()
	c, err := mcp.Connect(ctx, &mcp.HTTPTransport{URL: rs.URL + "/mcp", Credentials: a}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	tools, err := c.ListTools(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("tools:", tools[0].Name)
	fmt.Println("sign-ins:", as.Authorizations.Load())
	// Output:
	// tools: search
	// sign-ins: 1
}

// The parsed challenges of a 401 or 403 answer.
func ExampleParseChallenges() {
	cs, err := oauth.ParseChallenges(`Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", Basic realm="legacy"`)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range cs {
		fmt.Printf("%s error=%q scope=%q\n", c.Scheme, c.Param("error"), c.Param("scope"))
	}
	// Output:
	// Bearer error="insufficient_scope" scope="files:read files:write"
	// Basic error="" scope=""
}

// A host shows what an Authorizer holds, and signs the user out.
func ExampleAuthorizer_State() {
	as := &oauthtest.Server{Refresh: true} // an authorization server, for the example
	as.Start()
	defer as.Close()
	rs := oauthtest.Resource(http.NotFoundHandler(), as, "") // a protected MCP server
	defer rs.Close()
	a, err := oauth.New(rs.URL+"/mcp", oauth.Config{Browser: follow, Scopes: []string{"read"}, RedirectURL: "http://127.0.0.1:8976/callback"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer a.CloseIdleConnections()
	ctx := context.Background()
	// The server's first 401 starts the sign-in (the transport does this).
	if err := a.Challenged(ctx, http.StatusUnauthorized, nil, ""); err != nil {
		fmt.Println(err)
		return
	}
	st := a.State()
	fmt.Println("client:", st.ClientID, "scopes:", st.Scopes, "refreshable:", st.Refreshable)
	fmt.Println("expires within the hour:", time.Until(st.Expiry) <= time.Hour)
	if err := a.SignOut(ctx); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("signed in:", a.State().HasToken)
	// Output:
	// client: client-1 scopes: [read offline_access] refreshable: true
	// expires within the hour: true
	// signed in: false
}

package oauth_test

import (
	"context"
	"encoding/json"
	"fmt"

	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/internal/oauthtest"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/oauth"
)

// A program without a user authenticates as itself: the client
// credentials grant, no browser. JWTBearer and EnterpriseManaged are set
// the same way, as Config.Grant.
func ExampleClientCredentials() {
	as := &oauthtest.Server{ClientID: "nightly-agent", ClientSecret: "from-a-secret-store"} // for the example
	as.Start()
	defer as.Close()
	mcpServer := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{{
		Def: json.RawMessage(`{"name":"report","inputSchema":{"type":"object"}}`),
	}}}
	mcpServer.Start()
	defer mcpServer.Close()
	rs := oauthtest.Resource(mcpServer, as, "")
	defer rs.Close()

	a, err := oauth.New(rs.URL+"/mcp", oauth.Config{
		Grant:    oauth.ClientCredentials{},
		ClientID: "nightly-agent",
		// A real host reads it from an environment variable or a file;
		// or, instead, ClientKey signs private_key_jwt assertions.
		ClientSecret: "from-a-secret-store",
		DPoP:         true, // used where the authorization server supports it
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
	fmt.Println(tools[0].Name, "listed after", as.MachineGrants.Load(), "token request")
	// Output: report listed after 1 token request
}

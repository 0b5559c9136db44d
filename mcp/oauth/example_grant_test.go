package oauth_test

import (
	"context"
	"fmt"
	"net/http"

	"git.rickub.com/bots-garden/mini-me/internal/oauthtest"
	"git.rickub.com/bots-garden/mini-me/mcp/oauth"
)

// A program without a user authenticates as itself: the client
// credentials grant, no browser. JWTBearer and EnterpriseManaged are set
// the same way, as Config.Grant; the Authorizer then goes, as in
// ExampleNew, into an HTTPTransport's Credentials.
func ExampleClientCredentials() {
	as := &oauthtest.Server{ClientID: "nightly-agent", ClientSecret: "from-a-secret-store"} // for the example
	as.Start()
	defer as.Close()
	rs := oauthtest.Resource(http.NotFoundHandler(), as, "") // a protected resource
	defer rs.Close()

	a, err := oauth.New(rs.URL+"/mcp", oauth.Config{
		Grant:    oauth.ClientCredentials{},
		ClientID: "nightly-agent",
		// The authorization server the credential belongs to: required
		// with it, so that no other one ever receives it.
		Issuer: as.Issuer(),
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
	// What the transport does on the server's first 401:
	ctx := context.Background()
	if err := a.Challenged(ctx, http.StatusUnauthorized, nil, ""); err != nil {
		fmt.Println(err)
		return
	}
	tok, err := a.Token(ctx)
	_, valid := as.Valid(tok)
	fmt.Println("token valid:", valid, err)
	fmt.Println("token requests:", as.MachineGrants.Load())
	// Output:
	// token valid: true <nil>
	// token requests: 1
}

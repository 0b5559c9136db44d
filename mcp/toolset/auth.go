package toolset

import (
	"fmt"
	"os"
	"strings"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/oauth"
)

// transport builds the transport of a server entry, with an OAuth
// authorizer when its auth type is oauth.
func (t *Toolset) transport(s config.Server) (mcp.Transport, error) {
	tr, err := transportFor(s)
	if err != nil || s.Auth == nil || s.Auth.Type != config.AuthOAuth {
		return tr, err
	}
	ht, ok := tr.(*mcp.HTTPTransport)
	if !ok {
		return nil, fmt.Errorf("%w: oauth is only for HTTP servers", ErrServerConfig)
	}
	secret, err := readSecret(s.Auth.ClientSecretEnv, s.Auth.ClientSecretFile, "the oauth client secret")
	if err != nil {
		return nil, err
	}
	if secret == "" {
		secret = t.opts.ClientSecrets[s.Name]
		if secret != "" && s.Auth.Issuer == "" {
			// Without it the secret would go to whichever authorization
			// server the MCP server names (issue 35 #5).
			return nil, fmt.Errorf("%w: Options.ClientSecrets holds the client secret of server %q, whose oauth auth names no issuer: "+
				"set issuer to the authorization server the secret belongs to", ErrServerConfig, s.Name)
		}
	}
	cfg := oauth.Config{
		ClientID:          s.Auth.ClientID,
		ClientSecret:      secret,
		Issuer:            s.Auth.Issuer,
		Scopes:            s.Auth.Scopes,
		RedirectURL:       s.Auth.RedirectURL,
		TokenEndpointAuth: s.Auth.TokenEndpointAuth,
		DPoP:              s.Auth.DPoP,
		InsecureHTTP:      s.InsecureHTTP,
		Browser:           t.opts.Browser,
		Store:             t.opts.TokenStore,
		HTTPClient:        t.opts.OAuthHTTPClient,
		Logger:            t.log.With("server", s.Name),
	}
	if err := machineGrant(s.Auth, &cfg); err != nil {
		return nil, err
	}
	a, err := oauth.New(s.URL, cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrServerConfig, err)
	}
	ht.Credentials = a
	return ht, nil
}

// machineGrant sets the grant of an oauth entry, with its client key and
// its assertion source, in cfg.
func machineGrant(a *config.Auth, cfg *oauth.Config) error {
	assertion := oauth.AssertionFile(a.AssertionFile)
	if len(a.AssertionCommand) > 0 {
		assertion = oauth.AssertionCommand(a.AssertionCommand)
	}
	switch a.Grant {
	case config.GrantClientCredentials:
		cfg.Grant = oauth.ClientCredentials{}
		pem, err := readSecret(a.ClientKeyEnv, a.ClientKeyFile, "the oauth client key")
		if err != nil || pem == "" {
			return err
		}
		if cfg.ClientKey, err = oauth.ParsePrivateKey([]byte(pem)); err != nil {
			return fmt.Errorf("%w: %v", ErrServerConfig, err)
		}
	case config.GrantJWTBearer:
		cfg.Grant = oauth.JWTBearer{Assertion: assertion}
	case config.GrantEnterpriseManaged:
		idpSecret, err := readSecret(a.IDPClientSecretEnv, "", "the identity provider's client secret")
		if err != nil {
			return err
		}
		cfg.Grant = oauth.EnterpriseManaged{IDToken: assertion, TokenEndpoint: a.IDPTokenEndpoint, ClientID: a.IDPClientID, ClientSecret: idpSecret}
	}
	return nil
}

// readSecret reads a secret an oauth entry names, from its environment
// variable env or its file; "" when it names none. what names it in
// errors, which never quote the content.
func readSecret(env, file, what string) (oauth.Secret, error) {
	switch {
	case env != "":
		v, err := mcp.TokenFromEnv(env)
		if err != nil {
			return "", fmt.Errorf("%w (%s)", err, what)
		}
		return oauth.Secret(v), nil
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			// The path is the user's; the error names it, never the content.
			return "", fmt.Errorf("%w: %s file: %v", mcp.ErrMissingToken, what, err)
		}
		v := strings.TrimSpace(string(b))
		if v == "" {
			return "", fmt.Errorf("%w: %s file %s is empty", mcp.ErrMissingToken, what, file)
		}
		return oauth.Secret(v), nil
	}
	return "", nil
}

package mcp

import (
	"fmt"
	"os"
	"strings"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/mcp/oauth"
)

// transport builds the transport of a server entry, with an OAuth
// authorizer when its auth type is oauth.
func (t *Toolset) transport(s config.Server) (Transport, error) {
	tr, err := transportFor(s)
	if err != nil || s.Auth == nil || s.Auth.Type != config.AuthOAuth {
		return tr, err
	}
	ht, ok := tr.(*HTTPTransport)
	if !ok {
		return nil, fmt.Errorf("%w: oauth is only for HTTP servers", ErrServerConfig)
	}
	secret, err := clientSecret(s.Auth)
	if err != nil {
		return nil, err
	}
	a, err := oauth.New(s.URL, oauth.Config{
		ClientID:          s.Auth.ClientID,
		ClientSecret:      secret,
		Issuer:            s.Auth.Issuer,
		Scopes:            s.Auth.Scopes,
		RedirectURL:       s.Auth.RedirectURL,
		TokenEndpointAuth: s.Auth.TokenEndpointAuth,
		Browser:           t.opts.Browser,
		Store:             t.opts.TokenStore,
		Logger:            t.log.With("server", s.Name),
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrServerConfig, err)
	}
	ht.Credentials = a
	return ht, nil
}

// clientSecret reads the client secret an oauth entry names, from its
// environment variable or its file; "" when it names none.
func clientSecret(a *config.Auth) (oauth.Secret, error) {
	switch {
	case a.ClientSecretEnv != "":
		v := strings.TrimSpace(os.Getenv(a.ClientSecretEnv))
		if v == "" {
			return "", fmt.Errorf("%w: %s (the oauth client secret)", ErrMissingToken, a.ClientSecretEnv)
		}
		return oauth.Secret(v), nil
	case a.ClientSecretFile != "":
		b, err := os.ReadFile(a.ClientSecretFile)
		if err != nil {
			// The path is the user's; the error names it, never the content.
			return "", fmt.Errorf("%w: oauth client secret file: %v", ErrMissingToken, err)
		}
		v := strings.TrimSpace(string(b))
		if v == "" {
			return "", fmt.Errorf("%w: oauth client secret file %s is empty", ErrMissingToken, a.ClientSecretFile)
		}
		return oauth.Secret(v), nil
	}
	return "", nil
}

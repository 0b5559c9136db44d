package oauth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Grant obtains tokens without a user at a browser, for a program that
// authenticates as itself: [ClientCredentials], [JWTBearer] (workload
// identity federation) or [EnterpriseManaged]. Set as Config.Grant, it
// replaces the authorization code flow; discovery and its resource and
// issuer checks are the same, and the client is the pre-registered one of
// Config (ClientID with ClientSecret or ClientKey; never a registration).
type Grant interface {
	// form returns the token request's grant parameters for resource at
	// the authorization server of meta.
	form(ctx context.Context, a *Authorizer, meta *ServerMetadata, resource string) (url.Values, error)
}

// Grant types (RFC 6749 §4.4, RFC 7523 §2.1, RFC 8693).
const (
	grantClientCredentials = "client_credentials"
	grantJWTBearer         = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	grantTokenExchange     = "urn:ietf:params:oauth:grant-type:token-exchange"
)

// ClientCredentials is the client credentials grant (OAuth 2.1 §4.2, the
// MCP extension io.modelcontextprotocol/oauth-client-credentials): the
// client authenticates with Config.ClientSecret (client_secret_basic or
// client_secret_post) or with an RFC 7523 assertion signed by
// Config.ClientKey (private_key_jwt).
type ClientCredentials struct{}

func (ClientCredentials) form(context.Context, *Authorizer, *ServerMetadata, string) (url.Values, error) {
	return url.Values{"grant_type": {grantClientCredentials}}, nil
}

// AssertionFunc returns a JWT the platform issued: read again for every
// token request, since such tokens are short-lived and renewed outside
// the program. It runs on the goroutine of the request that needs the
// token, and must return when ctx ends.
type AssertionFunc func(ctx context.Context) (Secret, error)

// JWTBearer is the JWT bearer grant (RFC 7523 §2.1) of workload identity
// federation (SEP-1933): the assertion, a JWT the platform issues to the
// workload (a Kubernetes service account token, a cloud identity token),
// is exchanged for an access token. A refused request is returned as is,
// neither retried nor replaced by another grant.
type JWTBearer struct {
	// Assertion returns the workload's JWT.
	Assertion AssertionFunc
}

func (g JWTBearer) form(ctx context.Context, _ *Authorizer, _ *ServerMetadata, _ string) (url.Values, error) {
	if g.Assertion == nil {
		return nil, fmt.Errorf("%w: the jwt-bearer grant has no assertion source", ErrToken)
	}
	jwt, err := g.Assertion(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: reading the workload assertion: %w", ErrToken, err)
	}
	return url.Values{"grant_type": {grantJWTBearer}, "assertion": {string(jwt)}}, nil
}

// EnterpriseManaged is enterprise-managed authorization (SEP-990, the MCP
// extension io.modelcontextprotocol/enterprise-managed-authorization): the
// user's identity assertion from the enterprise identity provider (an
// OpenID Connect ID token) is exchanged there (RFC 8693) for an identity
// assertion authorization grant (ID-JAG) naming the MCP server's
// authorization server and resource, which the JWT bearer grant
// (RFC 7523) then turns into an access token.
type EnterpriseManaged struct {
	// IDToken returns the user's ID token from the identity provider.
	IDToken AssertionFunc
	// TokenEndpoint is the identity provider's token endpoint.
	TokenEndpoint string
	// ClientID and ClientSecret are the client's identity at the identity
	// provider; an empty ClientSecret sends client_id alone.
	ClientID     string
	ClientSecret Secret
}

// Token types of the exchange (RFC 8693 §3, SEP-990).
const (
	tokenTypeIDToken = "urn:ietf:params:oauth:token-type:id_token"
	tokenTypeIDJAG   = "urn:ietf:params:oauth:token-type:id-jag"
)

func (g EnterpriseManaged) form(ctx context.Context, a *Authorizer, meta *ServerMetadata, resource string) (url.Values, error) {
	if g.IDToken == nil || g.TokenEndpoint == "" {
		return nil, fmt.Errorf("%w: enterprise-managed authorization needs an ID token source and the identity provider's token endpoint", ErrToken)
	}
	idt, err := g.IDToken(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: reading the ID token: %w", ErrToken, err)
	}
	form := url.Values{
		"grant_type":           {grantTokenExchange},
		"requested_token_type": {tokenTypeIDJAG},
		"subject_token":        {string(idt)},
		"subject_token_type":   {tokenTypeIDToken},
		"audience":             {meta.Issuer},
		"resource":             {resource},
	}
	if len(a.cfg.Scopes) > 0 {
		form.Set("scope", strings.Join(a.cfg.Scopes, " "))
	}
	idp := Registration{ID: g.ClientID, Secret: g.ClientSecret, AuthMethod: AuthNone}
	if g.ClientSecret != "" {
		idp.AuthMethod = AuthBasic
	}
	var reply struct {
		AccessToken     Secret `json:"access_token"`
		IssuedTokenType string `json:"issued_token_type"`
	}
	at := &ServerMetadata{TokenEndpoint: g.TokenEndpoint}
	if err := a.tokenRequest(ctx, at, idp, form, nil, "token exchange", &reply, string(idt)); err != nil {
		return nil, err
	}
	if reply.AccessToken == "" || reply.IssuedTokenType != tokenTypeIDJAG {
		return nil, fmt.Errorf("%w: the identity provider issued no ID-JAG (issued_token_type %q)", ErrToken, clip(reply.IssuedTokenType, 60))
	}
	return url.Values{"grant_type": {grantJWTBearer}, "assertion": {string(reply.AccessToken)}}, nil
}

// grantType returns the grant_type the token request of g ends with.
func grantType(g Grant) string {
	if _, ok := g.(ClientCredentials); ok {
		return grantClientCredentials
	}
	return grantJWTBearer
}

// grantClient returns the pre-registered client of a machine grant at the
// authorization server of meta: its id and secret or key, which with the
// grant's assertions go to no other server than the bound issuer (see
// Config.Issuer).
func (a *Authorizer) grantClient(meta *ServerMetadata) (Registration, error) {
	if err := a.bind(meta.Issuer); err != nil {
		return Registration{}, err
	}
	r := Registration{ID: a.cfg.ClientID, Secret: a.cfg.ClientSecret, AuthMethod: a.cfg.TokenEndpointAuth}
	switch {
	case r.AuthMethod != "":
	case a.cfg.ClientKey != nil:
		r.AuthMethod = AuthPrivateKeyJWT
	default:
		r.AuthMethod = chooseAuthMethod(meta.TokenEndpointAuthMethodsSupported, r.Secret != "")
		if r.AuthMethod == AuthNone && r.Secret != "" {
			// A secret is for authenticating: a server listing only
			// "none" gets the default of RFC 6749 §2.3.1.
			r.AuthMethod = AuthBasic
		}
	}
	if _, ok := a.cfg.Grant.(ClientCredentials); ok && r.ID == "" {
		return Registration{}, fmt.Errorf("%w: the client credentials grant needs a clientId", ErrRegistration)
	}
	return r, nil
}

// clientAssertion returns the private_key_jwt assertion (RFC 7523 §2.2,
// §3) of client at the authorization server of meta: iss and sub the
// client id, aud both the issuer and the token endpoint (servers differ on
// which they expect), valid for assertionLifetime, with a fresh jti.
func (a *Authorizer) clientAssertion(client Registration, meta *ServerMetadata, now time.Time) (string, error) {
	if a.cfg.ClientKey == nil {
		return "", fmt.Errorf("%w: private_key_jwt needs a client key", ErrToken)
	}
	aud := []string{meta.Issuer}
	if meta.TokenEndpoint != meta.Issuer {
		aud = append(aud, meta.TokenEndpoint)
	}
	return signJWT(a.cfg.ClientKey.signer, map[string]any{"typ": "JWT"}, map[string]any{
		"iss": client.ID,
		"sub": client.ID,
		"aud": aud,
		"iat": now.Unix(),
		"exp": now.Add(assertionLifetime).Unix(),
		"jti": randomString(),
	})
}

// assertionLifetime is how long a client assertion is valid.
const assertionLifetime = time.Minute

// maxAssertionSize bounds a JWT read from a file or a command.
const maxAssertionSize = 64 << 10

// AssertionFile returns an AssertionFunc reading path on every call, its
// content with surrounding white space trimmed: the file a platform
// renews (a projected service account token, say). Errors name the path,
// never the content.
func AssertionFile(path string) AssertionFunc {
	return func(context.Context) (Secret, error) {
		f, err := os.Open(path)
		if err != nil {
			return "", err
		}
		defer f.Close()
		return readAssertion(f, path)
	}
}

// AssertionCommand returns an AssertionFunc running argv (a program and
// its arguments) on every call, its standard output trimmed being the
// JWT. It is killed when ctx ends (its pipes closed a second later, should
// a child of it hold them); its standard error is discarded, as it might
// repeat the token.
func AssertionCommand(argv []string) AssertionFunc {
	return func(ctx context.Context) (Secret, error) {
		if len(argv) == 0 {
			return "", errors.New("no assertion command")
		}
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		var out capped
		cmd.Stdout, cmd.WaitDelay = &out, time.Second
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("assertion command %s: %w", argv[0], err)
		}
		if out.over {
			return "", fmt.Errorf("the output of %s is larger than %d bytes: not a JWT", argv[0], maxAssertionSize)
		}
		return readAssertion(&out.buf, "the output of "+argv[0])
	}
}

// capped keeps the first maxAssertionSize bytes written to it, and notes
// whether more came.
type capped struct {
	buf  bytes.Buffer
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := maxAssertionSize - c.buf.Len(); len(p) > room {
		c.buf.Write(p[:max(room, 0)])
		c.over = true
		return len(p), nil
	}
	return c.buf.Write(p)
}

// readAssertion reads a JWT of at most maxAssertionSize bytes from r.
func readAssertion(r io.Reader, what string) (Secret, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxAssertionSize+1))
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", what, err)
	}
	if len(b) > maxAssertionSize {
		return "", fmt.Errorf("%s is larger than %d bytes: not a JWT", what, maxAssertionSize)
	}
	s := strings.TrimSpace(string(b))
	if strings.Count(s, ".") != 2 || strings.ContainsAny(s, " \t\r\n") {
		return "", fmt.Errorf("%s is not a JWT (three base64url parts separated by dots)", what)
	}
	return Secret(s), nil
}

package oauth

import (
	"fmt"
	"io"
	"log/slog"
	"time"
)

// Secret is a token or a client secret. fmt (every verb), log/slog and
// Stringer users print it as "[redacted]"; only a conversion to string, or
// encoding/json (for a TokenStore), reveals it.
type Secret string

const redacted = "[redacted]"

// String returns "[redacted]".
func (Secret) String() string { return redacted }

// GoString returns "[redacted]", quoted.
func (Secret) GoString() string { return `"` + redacted + `"` }

// Format prints "[redacted]" whatever the verb.
func (Secret) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, redacted) }

// LogValue logs "[redacted]".
func (Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// Token is what an authorization grants for one MCP server at one
// authorization server: the access token, the refresh token when one was
// issued, and the client they were issued to (a refresh must come from the
// same client).
type Token struct {
	// AccessToken is sent as "Authorization: Bearer", or as
	// "Authorization: DPoP" with a proof when Type is "DPoP".
	AccessToken Secret `json:"access_token"`
	// Type is "DPoP" for a token bound to the Authorizer's DPoP key
	// (RFC 9449), empty for a Bearer token.
	Type string `json:"token_type,omitempty"`
	// KeyThumbprint is, for a DPoP token, the JWK thumbprint (RFC 7638)
	// of the key it is bound to; a token of another key is not used.
	KeyThumbprint string `json:"jkt,omitempty"`
	// RefreshToken renews AccessToken; empty when none was issued.
	RefreshToken Secret `json:"refresh_token,omitempty"`
	// Expiry is when AccessToken expires; zero when the server did not say.
	Expiry time.Time `json:"expiry"`
	// Issued is when AccessToken was issued; with Expiry it gives the
	// token's lifetime, hence when it is renewed (see Authorizer.Token).
	Issued time.Time `json:"issued"`
	// Scopes are the scopes granted (or, when the server did not say, the
	// scopes requested).
	Scopes []string `json:"scopes,omitempty"`
	// Client is the client the token was issued to.
	Client Registration `json:"client"`
}

// Registration is a client's identity at one authorization server.
type Registration struct {
	// ID is the client_id.
	ID string `json:"client_id"`
	// Secret is the client_secret; empty for a public client.
	Secret Secret `json:"client_secret,omitempty"`
	// AuthMethod is the token endpoint authentication method:
	// "client_secret_basic", "client_secret_post" or "none".
	AuthMethod string `json:"token_endpoint_auth_method"`
}

// LogValue logs what a token is for, never its secrets.
func (t Token) LogValue() slog.Value {
	return slog.GroupValue(slog.Time("expiry", t.Expiry), slog.Any("scopes", t.Scopes),
		slog.Bool("refreshable", t.RefreshToken != ""), slog.Any("client", t.Client))
}

// LogValue logs the client id and method, never the secret.
func (r Registration) LogValue() slog.Value {
	return slog.GroupValue(slog.String("client_id", r.ID), slog.String("auth_method", r.AuthMethod))
}

// scheme returns the Authorization scheme of t.
func (t *Token) scheme() string {
	if t.Type == "DPoP" {
		return "DPoP"
	}
	return "Bearer"
}

// maxExpiryMargin is how long before its expiry a token is renewed, at
// most: a token is renewed when the smaller of 30 s and a tenth of its
// lifetime is left (3 s of a 30 s token, 500 ms of a 5 s one), so a
// short-lived token is not renewed before every request.
const maxExpiryMargin = 30 * time.Second

// margin returns how long before its expiry t is renewed; 30 s for a
// token whose lifetime is unknown (stored by an older version).
func (t *Token) margin() time.Duration {
	if t.Issued.IsZero() || !t.Expiry.After(t.Issued) {
		return maxExpiryMargin
	}
	return min(maxExpiryMargin, t.Expiry.Sub(t.Issued)/10)
}

// fresh reports whether the access token can be sent at now without
// renewing it first.
func (t *Token) fresh(now time.Time) bool {
	return t != nil && t.AccessToken != "" && (t.Expiry.IsZero() || now.Add(t.margin()).Before(t.Expiry))
}

// valid reports whether the access token has not expired at now: a token
// whose renewal failed is still sent until then.
func (t *Token) valid(now time.Time) bool {
	return t != nil && t.AccessToken != "" && (t.Expiry.IsZero() || now.Before(t.Expiry))
}

// Package oauth is the OAuth 2.1 client that authorizes mini-me's requests
// to remote MCP servers, as the "Authorization" section of the MCP
// specification (2025-11-25 and 2026-07-28, with the 2025-03-26
// fallbacks) describes it.
//
// An [Authorizer] holds the authorization state of one MCP server: on the
// server's first 401 it discovers the metadata, identifies the client, sends
// the user through the authorization code flow with PKCE and keeps the token
// in a [TokenStore], refreshing it and stepping up its scopes as needed (the
// whole flow is on [Authorizer]). Credentials held beforehand go to one
// issuer only (see [Config]).
//
// Without a user at a browser, Config.Grant replaces the authorization
// code flow with a machine grant, after the same discovery and checks:
// [ClientCredentials] (a client secret, or a private_key_jwt assertion
// signed with Config.ClientKey, see [ParsePrivateKey]), [JWTBearer]
// (workload identity federation: a platform's JWT, from [AssertionFile]
// or [AssertionCommand]) and [EnterpriseManaged] (an ID token exchanged
// at the identity provider for an ID-JAG, RFC 8693, then the JWT bearer
// grant). Config.DPoP binds tokens to a key of the Authorizer's own
// (RFC 9449) where the authorization server supports it: token requests
// and MCP requests carry proofs (Authorize), and server nonces are
// honoured (Answered). JWS signing (ES256, RS256) uses the standard
// library's crypto.
//
// The one step a library cannot take, showing the user a web page and
// receiving the redirect, is the host's: a [Browser]. [Terminal] prints
// the URL and listens on the loopback redirect; [NonInteractive] fails at
// once with an [*InteractionRequiredError], before any registration, so a
// background agent never waits for a browser nobody will open. A Browser
// that lands on an error page of the authorization server returns an
// [*ErrorPageError].
//
// [ParseChallenges] reads WWW-Authenticate headers (RFC 9110 §11.6.1).
//
// Tokens and client secrets are [Secret] values: fmt, log/slog and error
// messages print them as "[redacted]".
//
// The package uses only the standard library: the flow needs PKCE, form
// posts and a handful of metadata documents, and golang.org/x/oauth2
// would add a dependency whose automatic client authentication (a Basic
// header even for public clients) has to be worked around.
package oauth

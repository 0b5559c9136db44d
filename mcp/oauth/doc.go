// Package oauth is the OAuth 2.1 client that authorizes mini-me's requests
// to remote MCP servers, as the "Authorization" section of the MCP
// specification (2025-11-25 and 2026-07-28, with the 2025-03-26
// fallbacks) describes it.
//
// An [Authorizer] holds the authorization state of one MCP server. On the
// server's first 401 it discovers the Protected Resource Metadata (RFC 9728)
// and the authorization server's metadata (RFC 8414, OpenID Connect
// discovery), identifies the client (a pre-registered id, a Client ID
// Metadata Document, or Dynamic Client Registration, RFC 7591), sends the
// user through the authorization code flow with PKCE (S256 only), the
// resource parameter (RFC 8707) and the iss check (RFC 9207), and keeps
// the token in a [TokenStore], under a [Key] of resource, issuer and
// client. It refreshes tokens on a 401 and before they expire, when the
// smaller of 30 s and a tenth of their lifetime is left, with one refresh
// in flight shared by all concurrent requests (and, with a
// [LockingStore], by every process sharing the store); a token whose
// renewal fails is used until it expires, and a transient failure (no
// answer, a 5xx, a 429) keeps the refresh token, retried after a backoff
// that honours Retry-After: only a definitive refusal (invalid_grant and
// the like) ends the grant. It re-authorizes with the union
// of scopes on a 403 insufficient_scope (step-up), a bounded number of
// times, and registers again, once, with an authorization server that
// forgot its registration. A host reads [Authorizer.State], and calls
// [Authorizer.Refresh] and [Authorizer.SignOut].
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
// Credentials held beforehand (a client secret or key, a Grant's
// assertions) go to one issuer only: Config.Issuer, which New requires
// with them ([ErrUnboundCredential]; [IssuerBindingError] where the
// server names another issuer). A token is refreshed
// only at the issuer, and as the client, it was obtained from. Every URL
// fetched or posted to (resource metadata, authorization server metadata
// and endpoints, the identity provider) must be https or http on a
// loopback host unless Config.InsecureHTTP; the Authorizer's HTTP client
// follows no redirect of a POST and no metadata redirect to another
// origin.
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

package oauth

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Sentinel errors of an authorization; each error the package returns
// wraps one, so a caller tells them apart with errors.Is. Every message
// says what the user can do.
var (
	// ErrMetadata: the server's or the authorization server's metadata is
	// missing or invalid (a resource that is not the server's, no S256
	// PKCE, endpoints missing).
	ErrMetadata = errors.New("oauth: authorization metadata invalid")
	// ErrIssuerMismatch: an issuer differs from the one expected: in the
	// authorization server's metadata, or in the authorization response
	// (RFC 9207).
	ErrIssuerMismatch = errors.New("oauth: issuer mismatch")
	// ErrRegistration: the client has no identity at the authorization
	// server: registration refused or impossible.
	ErrRegistration = errors.New("oauth: client registration failed")
	// ErrConsent: the user or the authorization server refused the
	// authorization, or the redirect was not the answer to our request.
	ErrConsent = errors.New("oauth: authorization refused")
	// ErrInsufficientScope: the server still wants a scope after a
	// re-authorization (step-up) asked for it.
	ErrInsufficientScope = errors.New("oauth: scope insufficient after step-up")
	// ErrUnreachable: the authorization server (its metadata, token or
	// registration endpoint) did not answer: connection refused, DNS,
	// TLS or a timeout. A token still inside its lifetime is used all
	// the same (see Authorizer.Token).
	ErrUnreachable = errors.New("oauth: authorization server unreachable")
	// ErrToken: the token endpoint refused to issue or refresh a token.
	ErrToken = errors.New("oauth: token request failed")
	// ErrInteractionRequired: the authorization needs a browser and the
	// Browser is NonInteractive (see InteractionRequiredError).
	ErrInteractionRequired = errors.New("oauth: interactive sign-in required")
	// ErrUnboundCredential: New was given a pre-registered credential (a
	// client secret or key, a machine Grant) without Config.Issuer, the
	// authorization server it belongs to.
	ErrUnboundCredential = errors.New("oauth: credential without its issuer")
)

// InteractionRequiredError is returned when a server needs the user to sign
// in through a browser and no interactive Browser is configured. It matches
// ErrInteractionRequired.
type InteractionRequiredError struct {
	// Resource is the MCP server that asked for authorization.
	Resource string
}

// Error says what to do.
func (e *InteractionRequiredError) Error() string {
	return fmt.Sprintf("oauth: %s needs an interactive sign-in: run the host once with a browser step (for example oauth.Terminal), "+
		"or give it a token store that already holds a token for this server", e.Resource)
}

// Is makes the error match ErrInteractionRequired.
func (e *InteractionRequiredError) Is(target error) bool { return target == ErrInteractionRequired }

// OAuthError is an error answer of the authorization or token endpoint
// (RFC 6749 §4.1.2.1, §5.2). Description is the server's text, cut short.
type OAuthError struct {
	// Endpoint says which step answered: "authorization", "token",
	// "refresh" or "registration".
	Endpoint string
	// StatusCode is the HTTP status, 0 for an authorization response.
	StatusCode int
	// Code is the error code, such as "access_denied" or "invalid_grant".
	Code string
	// Description is the server's error_description, at most 200 bytes.
	Description string
	// RetryAfter is the wait a 429 or 503 answer asked for in its
	// Retry-After header, at most 5 min; 0 when none.
	RetryAfter time.Duration
	// kind is the sentinel the error matches.
	kind error
}

// Error returns the step, the code and the description.
func (e *OAuthError) Error() string {
	s := "oauth: " + e.Endpoint + " endpoint"
	if e.StatusCode != 0 {
		s += fmt.Sprintf(" (http %d)", e.StatusCode)
	}
	if e.Code != "" {
		s += ": " + e.Code
	}
	if e.Description != "" {
		s += ": " + e.Description
	}
	return s + " (" + oauthErrorHints[e.Endpoint] + ")"
}

// oauthErrorHints say what the user can do after each step's refusal.
var oauthErrorHints = map[string]string{
	"authorization":  "the sign-in was refused: sign in again, or ask for access to this server",
	"registration":   "register a client at the authorization server and configure its clientId",
	"token":          "sign in again; if it keeps failing, check the client's id, secret and tokenEndpointAuth",
	"refresh":        "the session ended: sign in again",
	"revocation":     "the token is forgotten here, but the authorization server may still hold the sign-in: revoke it there",
	"token exchange": "the identity provider refused the ID token: sign in to it again, or check idpClientId and idpTokenEndpoint",
}

// Unwrap returns the sentinel the error matches (ErrConsent, ErrToken or
// ErrRegistration).
func (e *OAuthError) Unwrap() error { return e.kind }

// unanswered wraps the error of a request that got no answer: the
// context's end, or ErrUnreachable.
func unanswered(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("%w: %v", ErrUnreachable, err)
}

// clip shortens server text for an error message, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s[:n])
	if len(r) > 0 && r[len(r)-1] == '\uFFFD' {
		r = r[:len(r)-1]
	}
	return string(r) + "…"
}

// IssuerBindingError is returned when a machine grant's credential (a
// client secret or key, a workload or identity provider assertion) would
// go to another authorization server than the one it is bound to,
// Config.Issuer. It matches ErrIssuerMismatch; nothing was sent to
// Offered.
type IssuerBindingError struct {
	// Bound is the issuer the credential belongs to.
	Bound string
	// Offered is the issuer the server named instead.
	Offered string
}

// Error names both issuers and what to do.
func (e *IssuerBindingError) Error() string {
	return fmt.Sprintf("oauth: the client's credentials belong to authorization server %s, and the server now names %s: "+
		"nothing was sent there; if the move is genuine, set the issuer to %s", e.Bound, clip(e.Offered, 200), clip(e.Offered, 200))
}

// Is makes the error match ErrIssuerMismatch.
func (e *IssuerBindingError) Is(target error) bool { return target == ErrIssuerMismatch }

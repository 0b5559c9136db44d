package mcp

import (
	"context"
	"errors"

	"git.rickub.com/bots-garden/mini-me/mcp/oauth"
)

// TokenFunc is Credentials from a host's own identity system, for what the
// grants of package oauth do not cover: it returns the current access
// token, sent as "Authorization: Bearer" ("" sends none). It is called for
// every request, so it should answer from a cache, and renew the token
// itself before it expires; it must return when ctx ends. On a 401 or 403 it is called once more: a
// token other than the refused one is sent; the same one (or "") ends the
// request with an *AuthError.
type TokenFunc func(ctx context.Context) (string, error)

// Token returns f(ctx).
func (f TokenFunc) Token(ctx context.Context) (string, error) { return f(ctx) }

// Challenged asks f for a token again, and accepts it when it is not the
// refused one.
func (f TokenFunc) Challenged(ctx context.Context, _ int, _ []oauth.Challenge, sent string) error {
	tok, err := f(ctx)
	switch {
	case err != nil:
		return err
	case tok == "" || tok == sent:
		return errTokenRefused
	}
	return nil
}

var errTokenRefused = errors.New("mcp: the server refused the token source's token, and it has no other")

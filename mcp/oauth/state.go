package oauth

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"time"
)

// State is what an Authorizer holds, for a host to show; it carries no
// secret.
type State struct {
	// Issuer is the authorization server of the current token; empty
	// before the first authorization.
	Issuer string
	// ClientID is the client the token was issued to.
	ClientID string
	// Scopes are the scopes granted.
	Scopes []string
	// Expiry is when the access token expires; zero when the server did
	// not say, or when there is no token.
	Expiry time.Time
	// HasToken says an access token is held (it may have expired).
	HasToken bool
	// Refreshable says a refresh token is held.
	Refreshable bool
}

// State returns what the Authorizer holds now.
func (a *Authorizer) State() State {
	a.mu.Lock()
	defer a.mu.Unlock()
	t := a.tok
	if t == nil {
		return State{}
	}
	return State{Issuer: a.key.Issuer, ClientID: t.Client.ID, Scopes: slices.Clone(t.Scopes), Expiry: t.Expiry,
		HasToken: t.AccessToken != "", Refreshable: t.RefreshToken != ""}
}

// Refresh renews the token now, whatever its expiry and whatever the
// backoff of failed renewals (see Token): with its refresh token, or by
// asking the machine grant again. It fails with ErrToken
// when there is nothing to renew with (no token yet, or one without a
// refresh token: the next 401 signs in again).
func (a *Authorizer) Refresh(ctx context.Context) error {
	if err := a.lock(ctx); err != nil {
		return err
	}
	defer a.unlock()
	a.mu.Lock()
	t, key, meta := a.tok, a.key, a.meta
	a.mu.Unlock()
	switch {
	case t == nil || meta == nil:
		return fmt.Errorf("%w: %s: no token to renew: sign in first", ErrToken, a.resource)
	case t.RefreshToken != "" || a.cfg.Grant != nil:
		return a.renew(ctx, t, key, meta) // the host's call: no backoff
	}
	return fmt.Errorf("%w: %s: the authorization server issued no refresh token: the next request signs in again", ErrToken, a.resource)
}

// SignOut forgets the token, in memory and in the store, so that the next
// request needs a new authorization, and revokes it at the authorization
// server where that server offers revocation (RFC 7009): the refresh
// token (which ends the grant, at most servers), else the access token.
// A revocation that fails is returned; the token is forgotten all the
// same.
func (a *Authorizer) SignOut(ctx context.Context) error {
	if err := a.lock(ctx); err != nil {
		return err
	}
	defer a.unlock()
	a.mu.Lock()
	t, key, meta := a.tok, a.key, a.meta
	a.tok = nil
	a.mu.Unlock()
	if t == nil {
		return nil
	}
	if err := a.cfg.Store.Save(ctx, key, nil); err != nil {
		a.log.Warn("oauth: removing the token from the store failed", "error", err)
	}
	if meta == nil || meta.RevocationEndpoint == "" {
		return nil
	}
	form := url.Values{"token": {string(t.AccessToken)}, "token_type_hint": {"access_token"}}
	if t.RefreshToken != "" {
		form = url.Values{"token": {string(t.RefreshToken)}, "token_type_hint": {"refresh_token"}}
	}
	m := *meta
	m.TokenEndpoint = meta.RevocationEndpoint // the client authenticates as at the token endpoint
	return a.tokenRequest(ctx, &m, t.Client, form, nil, "revocation", nil, string(t.AccessToken), string(t.RefreshToken))
}

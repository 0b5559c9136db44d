package oauth

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Renewal backoff: after a renewal failed, the next one waits
// minRenewalBackoff, doubled after each failure in a row up to
// maxRenewalBackoff, or longer when the token endpoint's Retry-After
// (on a 429 or 503) says so, up to maxRenewalBackoff too, so that a
// hostile Retry-After cannot stop renewals for good. A success, or the
// host's Authorizer.Refresh, starts again from nothing.
const (
	minRenewalBackoff = time.Second
	maxRenewalBackoff = 5 * time.Minute
)

// definitiveCodes are the token endpoint's error codes (RFC 6749 §5.2)
// that say the grant itself will not work again: sending the same
// refresh token, or the same client credentials, again is pointless.
var definitiveCodes = []string{"invalid_grant", "invalid_client", "unauthorized_client", "unsupported_grant_type", "invalid_scope", "invalid_request"}

// definitive reports whether err is the authorization server refusing a
// grant for good: an error answer of RFC 6749 §5.2 with a 4xx status
// other than 429. A 5xx or a 429, an answer without a known code (a
// proxy's page), or no answer at all, is transient: the grant is kept.
func definitive(err error) bool {
	var oe *OAuthError
	if !errors.As(err, &oe) {
		return false
	}
	return oe.StatusCode/100 == 4 && oe.StatusCode != http.StatusTooManyRequests && slices.Contains(definitiveCodes, oe.Code)
}

// transient reports whether err is a renewal failure worth retrying
// later with the same grant: the authorization server did not answer, or
// answered with an error that is not definitive.
func transient(err error) bool {
	var oe *OAuthError
	return errors.Is(err, ErrUnreachable) || errors.As(err, &oe) && !definitive(err)
}

// renewalDelay returns how long to wait before the next renewal after
// failures failed ones in a row, the last one with retryAfter (0: none).
func renewalDelay(failures int, retryAfter time.Duration) time.Duration {
	d := maxRenewalBackoff
	if failures < 20 {
		d = min(minRenewalBackoff<<max(failures-1, 0), maxRenewalBackoff)
	}
	return min(max(d, retryAfter), maxRenewalBackoff)
}

// parseRetryAfter reads a Retry-After header (RFC 9110 §10.2.3): seconds
// or an HTTP date; 0 when absent or unreadable. The result is at most
// maxRenewalBackoff.
func parseRetryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	if n, err := strconv.ParseUint(h, 10, 63); err == nil {
		if n > uint64(maxRenewalBackoff/time.Second) {
			return maxRenewalBackoff
		}
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil && t.After(now) {
		return min(t.Sub(now), maxRenewalBackoff)
	}
	return 0
}

// backingOff reports whether a failed renewal's delay has not passed yet.
func (a *Authorizer) backingOff() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.now().Before(a.retryAt)
}

// noteRenewal records the outcome of a renewal, which callers waiting
// for it share: a success ends the backoff, a failure lengthens it (but
// for the caller's own context ending, which says nothing of the
// authorization server).
func (a *Authorizer) noteRenewal(ctx context.Context, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.renewals++
	a.renewErr = err
	switch {
	case err == nil:
		a.failures, a.retryAt = 0, time.Time{}
	case ctx.Err() == nil:
		a.failures++
		var oe *OAuthError
		var after time.Duration
		if errors.As(err, &oe) {
			after = oe.RetryAfter
		}
		a.retryAt = a.now().Add(renewalDelay(a.failures, after))
	}
}

package oauth

import "time"

// SetClock makes a tell the time with now, so a test can move past a
// token's renewal point without waiting for it.
func SetClock(a *Authorizer, now func() time.Time) { a.clock = now }

// SetBrowser replaces the Browser of a.
func SetBrowser(a *Authorizer, b Browser) { a.cfg.Browser = b }

// The renewal backoff's bounds.
const (
	MinRenewalBackoff = minRenewalBackoff
	MaxRenewalBackoff = maxRenewalBackoff
)

package oauth_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"git.rickub.com/bots-garden/mini-me/mcp/oauth"
)

// flakyAS is an authorization server on 127.0.0.1 whose token endpoint
// answers refresh requests from a script (one answer per request, then
// new tokens), and issues 100 s tokens with refresh tokens "rt-N".
type flakyAS struct {
	rec      *recorder
	resource string

	mu        sync.Mutex
	script    []http.HandlerFunc
	refreshed []string // the refresh tokens received, in order
	signIns   int      // authorization requests
	n         int
}

func newFlakyAS(t *testing.T) *flakyAS {
	t.Helper()
	f := &flakyAS{rec: newRecorder(t)}
	serveAS(f.rec)
	authorize := f.rec.handlers["/authorize"]
	f.rec.handle("/authorize", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.signIns++
		f.mu.Unlock()
		authorize(w, r)
	})
	f.rec.handle("/token", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		var answer http.HandlerFunc
		if r.PostForm.Get("grant_type") == "refresh_token" {
			f.refreshed = append(f.refreshed, r.PostForm.Get("refresh_token"))
			if len(f.script) > 0 {
				answer, f.script = f.script[0], f.script[1:]
			}
		}
		f.n++
		n := f.n
		f.mu.Unlock()
		if answer != nil {
			answer(w, r)
			return
		}
		writeTestJSON(w, 200, map[string]any{"access_token": "at-" + strconv.Itoa(n), "refresh_token": "rt-" + strconv.Itoa(n), "token_type": "Bearer", "expires_in": 100}, nil)
	})
	f.resource = serveResource(newRecorder(t), f.rec.url)
	return f
}

// answer queues the answers of the next refresh requests.
func (f *flakyAS) answer(h ...http.HandlerFunc) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.script = append(f.script, h...)
}

// refreshes returns the refresh tokens received so far.
func (f *flakyAS) refreshes() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.refreshed...)
}

func (f *flakyAS) signInCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.signIns
}

// status answers with code, an optional Retry-After and a JSON body (nil:
// an HTML page, as a proxy sends).
func status(code int, retryAfter string, body map[string]any) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		if body == nil {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(code)
			_, _ = w.Write([]byte("<html>unavailable</html>"))
			return
		}
		writeTestJSON(w, code, body, nil)
	}
}

// dropConnection closes the connection without an answer.
func dropConnection(w http.ResponseWriter, _ *http.Request) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		conn.Close()
	}
}

// A transient failure of a proactive refresh (a 5xx, a 429, a proxy's
// page, no answer) keeps the still-valid access token and its refresh
// token, and the next attempt waits for the backoff (or Retry-After)
// before it sends the same refresh token again; a definitive refusal
// (invalid_grant, invalid_client) drops them (issue 35 #17).
func TestTransientRefreshFailureKeepsGrant(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(clock *fakeClock) http.HandlerFunc
		wait   time.Duration // before the next attempt; 0: the grant is dropped
	}{
		{"503 Retry-After seconds", func(*fakeClock) http.HandlerFunc {
			return status(503, "3", map[string]any{"error": "temporarily_unavailable"})
		}, 3 * time.Second},
		{"503 Retry-After date", func(c *fakeClock) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				status(503, c.now().Add(4*time.Second).UTC().Format(http.TimeFormat), nil)(w, r)
			}
		}, 4 * time.Second},
		{"429", func(*fakeClock) http.HandlerFunc { return status(429, "", map[string]any{"error": "slow_down"}) }, oauth.MinRenewalBackoff},
		{"500 invalid_grant", func(*fakeClock) http.HandlerFunc { return status(500, "", map[string]any{"error": "invalid_grant"}) }, oauth.MinRenewalBackoff},
		{"502 proxy page", func(*fakeClock) http.HandlerFunc { return status(502, "", nil) }, oauth.MinRenewalBackoff},
		{"connection dropped", func(*fakeClock) http.HandlerFunc { return dropConnection }, oauth.MinRenewalBackoff},
		{"400 invalid_grant", func(*fakeClock) http.HandlerFunc { return status(400, "", map[string]any{"error": "invalid_grant"}) }, 0},
		{"401 invalid_client", func(*fakeClock) http.HandlerFunc { return status(401, "", map[string]any{"error": "invalid_client"}) }, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			as := newFlakyAS(t)
			a, clock, first := signedIn(t, as.resource, oauth.Config{})
			ctx := context.Background()
			as.answer(tc.answer(clock))
			clock.advance(95 * time.Second) // inside the 10 s margin of a 100 s token
			tok, err := a.Token(ctx)
			if got := as.refreshes(); len(got) != 1 {
				t.Fatalf("%d refresh requests, want 1", len(got))
			}
			if tc.wait == 0 {
				if tok != "" || err != nil || a.State().HasToken {
					t.Fatalf("after a definitive refusal: %q, %v, state %+v; want the grant dropped", tok, err, a.State())
				}
				return
			}
			if tok != first || err != nil || !a.State().Refreshable {
				t.Fatalf("after a transient failure: %q, %v, state %+v; want the valid token %q, and its refresh token kept", tok, err, a.State(), first)
			}
			clock.advance(tc.wait / 2)
			if tok, err := a.Token(ctx); tok != first || err != nil || len(as.refreshes()) != 1 {
				t.Fatalf("inside the backoff: %q, %v, %d refresh requests; want the same token and no new request", tok, err, len(as.refreshes()))
			}
			clock.advance(tc.wait/2 + 100*time.Millisecond)
			tok, err = a.Token(ctx)
			got := as.refreshes()
			if len(got) != 2 || got[1] != got[0] {
				t.Fatalf("after the backoff: refresh tokens sent %v, want the kept one sent again", got)
			}
			if err != nil || tok == first || tok == "" {
				t.Fatalf("after the backoff: %q, %v; want a new token", tok, err)
			}
		})
	}
}

// Failed renewals in a row wait 1 s, 2 s, 4 s... up to the cap, and a
// Retry-After beyond the cap is cut to it; once the token expired, Token
// returns the last failure without a request until the wait is over.
func TestRenewalBackoffDoublesAndCaps(t *testing.T) {
	as := newFlakyAS(t)
	a, clock, first := signedIn(t, as.resource, oauth.Config{})
	ctx := context.Background()
	as.answer(status(503, "86400", nil)) // a day: cut to the cap
	for range 11 {
		as.answer(status(503, "", map[string]any{"error": "temporarily_unavailable"}))
	}
	elapsed := 95 * time.Second // of the 100 s token's lifetime
	clock.advance(elapsed)
	_, _ = a.Token(ctx) // failure 1
	delay := oauth.MaxRenewalBackoff
	for n := 2; n <= 12; n++ {
		sent := len(as.refreshes())
		clock.advance(delay / 2)
		if _, _ = a.Token(ctx); len(as.refreshes()) != sent {
			t.Fatalf("failure %d: a renewal %v after it, inside its %v backoff", n-1, delay/2, delay)
		}
		clock.advance(delay/2 + 100*time.Millisecond)
		elapsed += delay + 100*time.Millisecond
		tok, err := a.Token(ctx) // failure n
		if len(as.refreshes()) != sent+1 {
			t.Fatalf("failure %d: no renewal after its %v backoff", n-1, delay)
		}
		switch {
		case elapsed < 99*time.Second && (tok != first || err != nil):
			t.Fatalf("valid token, renewal failed: %q, %v; want the token", tok, err)
		case elapsed > 101*time.Second && (tok != "" || !errors.Is(err, oauth.ErrToken) || !strings.Contains(err.Error(), "503")):
			t.Fatalf("expired token, renewal failed: %q, %v; want the 503 as an error", tok, err)
		case err != nil && strings.Contains(err.Error(), "rt-"):
			t.Fatalf("a refresh token in the error: %v", err)
		}
		delay = min(oauth.MinRenewalBackoff<<(n-1), oauth.MaxRenewalBackoff) // after failure n
	}
	clock.advance(delay + 100*time.Millisecond)
	if tok, err := a.Token(ctx); tok == "" || err != nil {
		t.Fatalf("after the last backoff: %q, %v; want a new token", tok, err)
	}
	if n := as.signInCount(); n != 1 {
		t.Errorf("%d sign-ins, want the first one only", n)
	}
}

// A 401 whose refresh meets a transient failure returns that failure and
// keeps the refresh token, rather than send the user through a new
// sign-in at an authorization server that is not answering.
func TestRefreshAfter401TransientNoSignIn(t *testing.T) {
	as := newFlakyAS(t)
	a, _, first := signedIn(t, as.resource, oauth.Config{})
	as.answer(status(503, "", nil))
	err := a.Challenged(context.Background(), 401, challenge(t, `Bearer error="invalid_token"`), first)
	if !errors.Is(err, oauth.ErrToken) {
		t.Fatalf("Challenged: %v, want the 503 (ErrToken)", err)
	}
	if n := as.signInCount(); n != 1 || !a.State().Refreshable {
		t.Fatalf("%d sign-ins, state %+v; want no new sign-in and the refresh token kept", n, a.State())
	}
}

// A stored token inside its renewal margin, whose refresh meets a
// transient failure, is used while it is valid (a new process during an
// outage of the authorization server) rather than replaced by a sign-in.
func TestStoredTokenUsedWhileRefreshFails(t *testing.T) {
	as := newFlakyAS(t)
	store := &oauth.MemoryStore{}
	now := time.Now()
	stored := &oauth.Token{AccessToken: "stored-at", RefreshToken: "stored-rt", Issued: now.Add(-95 * time.Second), Expiry: now.Add(5 * time.Second),
		Client: oauth.Registration{ID: "dyn-stored", AuthMethod: oauth.AuthNone}}
	if err := store.Save(context.Background(), oauth.Key{Resource: as.resource, Issuer: as.rec.url()}, stored); err != nil {
		t.Fatal(err)
	}
	as.answer(status(503, "", nil))
	a := newAuthorizer(t, as.resource, oauth.Config{Store: store})
	tok, err := authorizeNow(t, a)
	if tok != "stored-at" || err != nil {
		t.Fatalf("token %q, %v; want the stored token, still valid", tok, err)
	}
	if got := as.refreshes(); len(got) != 1 || got[0] != "stored-rt" {
		t.Errorf("refresh tokens sent %v, want the stored one once", got)
	}
	if n := as.signInCount(); n != 0 {
		t.Errorf("%d sign-ins, want none", n)
	}
}

package oauth_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"git.rickub.com/bots-garden/mini-me/mcp/oauth"
)

// freeRedirect returns a loopback redirect URL on a port nothing listens
// on.
func freeRedirect(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return "http://" + ln.Addr().String() + "/callback"
}

// signal is a Writer that closes printed on its first write, and keeps
// what was written.
type signal struct {
	once    sync.Once
	printed chan struct{}
	mu      sync.Mutex
	text    strings.Builder
}

func newSignal() *signal { return &signal{printed: make(chan struct{})} }

func (s *signal) Write(p []byte) (int, error) {
	s.mu.Lock()
	s.text.Write(p)
	s.mu.Unlock()
	s.once.Do(func() { close(s.printed) })
	return len(p), nil
}

func (s *signal) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.text.String()
}

func getStatus(t *testing.T, u string) int {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Another local page hitting the sign-in listener with another state does
// not end the sign-in: the listener waits for the redirect that answers
// its own request.
func TestTerminalIgnoresOtherState(t *testing.T) {
	redirect := freeRedirect(t)
	out := newSignal()
	type answer struct {
		code string
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		u, err := oauth.Terminal{Out: out, Timeout: time.Minute}.Authorize(context.Background(),
			"https://as.example/authorize?client_id=c&state=the-right-state", redirect)
		if err != nil {
			done <- answer{err: err}
			return
		}
		done <- answer{code: u.Query().Get("code")}
	}()
	<-out.printed
	for _, q := range []string{"?state=another&code=evil", "?code=evil", "?state=the-right-state-not&code=evil"} {
		if s := getStatus(t, redirect+q); s != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", q, s)
		}
	}
	if s := getStatus(t, redirect+"?state=the-right-state&code=good"); s != http.StatusOK {
		t.Errorf("the real redirect: status %d", s)
	}
	if a := <-done; a.err != nil || a.code != "good" {
		t.Errorf("code %q, %v; want the one of the redirect with our state", a.code, a.err)
	}
}

// The authorization URL a hostile authorization server builds is printed
// with no bidi or C1 control character: non-ASCII bytes are
// percent-encoded.
func TestTerminalCleansAuthorizationURL(t *testing.T) {
	as, rs := newRecorder(t), newRecorder(t)
	serveAS(as)
	as.handle("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		iss := as.url()
		writeTestJSON(w, 200, map[string]any{"issuer": iss, "token_endpoint": iss + "/token", "registration_endpoint": iss + "/register",
			"authorization_endpoint":           iss + "/authorize?tenant=\u202egnp.exe\u2066\u0085x\u009b31m",
			"code_challenge_methods_supported": []string{"S256"}}, nil)
	})
	out := newSignal()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-out.printed
		cancel()
	}()
	a := newAuthorizer(t, serveResource(rs, as.url), oauth.Config{Browser: oauth.Terminal{Out: out}, RedirectURL: freeRedirect(t)})
	if err := a.Challenged(ctx, 401, challenge(t, `Bearer error="invalid_token"`), ""); !errors.Is(err, context.Canceled) {
		t.Fatalf("%v, want the cancellation", err)
	}
	text := out.String()
	for i, r := range text {
		if r > '~' || r < ' ' && r != '\n' {
			t.Fatalf("printed %q at byte %d of %q", r, i, text)
		}
	}
	if !strings.Contains(text, "tenant=%E2%80%AEgnp.exe%E2%81%A6%C2%85x%C2%9B31m") {
		t.Errorf("the URL's query is not percent-encoded: %q", text)
	}
}

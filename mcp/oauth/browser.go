package oauth

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// Browser is the host's part of an authorization: the one step a library
// cannot take. Authorize shows authURL to the user (opens a browser, prints
// it, hands it to a UI) and waits until the authorization server redirects
// to redirectURL; it returns the URL of that redirect, query included, as
// received, without checking it (the Authorizer checks state and iss). It
// must return when ctx ends, with ctx's error (one that does not is left
// to finish on its own goroutine, and the authorization fails with ctx's
// error all the same). An error means no redirect
// arrived; the Authorizer then gives up this authorization. Authorize may
// be called from several goroutines, for different servers, at once.
type Browser interface {
	Authorize(ctx context.Context, authURL, redirectURL string) (*url.URL, error)
}

// ErrorPageError is what a Browser returns when the authorization server
// showed the user an error page instead of redirecting: it does so for an
// unknown client_id or a redirect URI it refuses (RFC 6749 §4.1.2.1), so
// no redirect will come. Code is the error code the page named, when the
// Browser could tell ("invalid_client", "invalid_redirect_uri"), and
// Description what the page said, cut short by the Browser. After an
// invalid_client page for a client it registered earlier (the server
// restarted, or expired the registration), the Authorizer registers again
// and sends the user once more. It matches ErrConsent.
type ErrorPageError struct {
	Code        string
	Description string
}

// Error names the code and the description.
func (e *ErrorPageError) Error() string {
	s := "oauth: the authorization server showed an error page"
	if e.Code != "" {
		s += ": " + clip(e.Code, 60)
	}
	if e.Description != "" {
		s += ": " + clip(e.Description, 200)
	}
	return s
}

// Is makes the error match ErrConsent.
func (e *ErrorPageError) Is(target error) bool { return target == ErrConsent }

// BrowserFunc adapts a function to the Browser interface.
type BrowserFunc func(ctx context.Context, authURL, redirectURL string) (*url.URL, error)

// Authorize calls f.
func (f BrowserFunc) Authorize(ctx context.Context, authURL, redirectURL string) (*url.URL, error) {
	return f(ctx, authURL, redirectURL)
}

// NonInteractive is the Browser of a host nobody watches: it fails at once
// with an *InteractionRequiredError naming the server, so a background
// agent reports what to do instead of waiting. It is the default Browser.
type NonInteractive struct{}

// Authorize returns an *InteractionRequiredError.
func (NonInteractive) Authorize(context.Context, string, string) (*url.URL, error) {
	return nil, &InteractionRequiredError{}
}

// DefaultRedirectURL is the redirect URI used when none is configured: a
// loopback address Terminal listens on (RFC 8252 §7.3).
const DefaultRedirectURL = "http://127.0.0.1:8976/callback"

// DefaultTerminalTimeout bounds how long Terminal waits for the redirect.
const DefaultTerminalTimeout = 5 * time.Minute

// Terminal is a Browser for a program run in a terminal: it prints the
// authorization URL for the user to open, with every byte that is not
// printable ASCII (bidi and C1 controls a server may put there)
// percent-encoded, listens on the redirect URL's loopback address, accepts
// the first request to its path that carries the authorization request's
// state (it answers others with 400 and keeps listening: another local
// page cannot end the sign-in), answers it with a short page, and returns.
// The zero value prints to standard error and waits
// DefaultTerminalTimeout.
type Terminal struct {
	// Out receives the message with the URL; nil means os.Stderr.
	Out io.Writer
	// Timeout bounds the wait for the redirect; 0 means
	// DefaultTerminalTimeout.
	Timeout time.Duration
}

// Authorize prints authURL and waits for one redirect to redirectURL, which
// must be an http URL on a loopback address with a port.
func (t Terminal) Authorize(ctx context.Context, authURL, redirectURL string) (*url.URL, error) {
	ru, err := url.Parse(redirectURL)
	if err != nil || ru.Scheme != "http" || !isLoopback(ru.Hostname()) || ru.Port() == "" {
		return nil, fmt.Errorf("oauth: terminal sign-in needs an http loopback redirect URL with a port, not %q", redirectURL)
	}
	ln, err := net.Listen("tcp", ru.Host)
	if err != nil {
		return nil, fmt.Errorf("oauth: listening for the sign-in redirect: %w", err)
	}
	var state string
	if au, err := url.Parse(authURL); err == nil {
		state = au.Query().Get("state")
	}
	got := make(chan *url.URL, 1)
	path := ru.Path
	if path == "" {
		path = "/"
	}
	srv := &http.Server{
		ReadHeaderTimeout: 10 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != path {
				http.NotFound(w, r)
				return
			}
			if r.URL.Query().Get("state") != state {
				http.Error(w, "this is not the answer to the sign-in under way", http.StatusBadRequest)
				return
			}
			u := *ru
			u.RawQuery = r.URL.RawQuery
			select {
			case got <- &u:
				_, _ = io.WriteString(w, "Signed in: you can close this page and go back to the terminal.\n")
			default:
				http.Error(w, "this sign-in is already done", http.StatusGone)
			}
		}),
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(ln)
	}()
	defer func() {
		// Shutdown lets the page of the accepted redirect reach the user.
		sctx, cancel := context.WithTimeout(context.Background(), shutdownWait)
		defer cancel()
		if srv.Shutdown(sctx) != nil {
			_ = srv.Close()
		}
		<-served
	}()
	out := t.Out
	if out == nil {
		out = os.Stderr
	}
	if _, err := fmt.Fprintf(out, "To authorize access, open this URL in your browser:\n\n  %s\n\nWaiting for the sign-in to finish...\n", printableURL(authURL)); err != nil {
		return nil, fmt.Errorf("oauth: showing the sign-in URL: %w", err)
	}
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = DefaultTerminalTimeout
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case u := <-got:
		return u, nil
	case <-timer.C:
		return nil, fmt.Errorf("%w: no sign-in within %v", ErrConsent, timeout)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// printableURL percent-encodes every byte of u that is not printable
// ASCII, so that a terminal shows the URL a browser will open: no bidi
// override reorders it, no C1 control starts an escape sequence.
func printableURL(u string) string {
	var b strings.Builder
	for i := 0; i < len(u); i++ {
		if c := u[i]; c > ' ' && c < 0x7f {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// shutdownWait bounds how long Terminal waits for its page to be sent.
const shutdownWait = 2 * time.Second

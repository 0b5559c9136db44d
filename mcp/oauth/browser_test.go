package oauth_test

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"git.rickub.com/bots-garden/mini-me/mcp/oauth"
)

func TestTerminalRefusesNonLoopbackRedirect(t *testing.T) {
	for _, r := range []string{"https://127.0.0.1:8976/cb", "http://example.com:8976/cb", "http://127.0.0.1/cb", "::"} {
		if _, err := (oauth.Terminal{Out: io.Discard}).Authorize(context.Background(), "https://as/authorize", r); err == nil {
			t.Errorf("%s: accepted", r)
		}
	}
}

// Terminal gives up when nobody signs in, or when its context ends.
func TestTerminalEnds(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	redirect := "http://" + ln.Addr().String() + "/callback"
	ln.Close()
	_, err = oauth.Terminal{Out: io.Discard, Timeout: time.Millisecond}.Authorize(context.Background(), "https://as/authorize", redirect)
	if !errors.Is(err, oauth.ErrConsent) {
		t.Errorf("timeout: %v, want ErrConsent", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = oauth.Terminal{Out: io.Discard}.Authorize(ctx, "https://as/authorize", redirect)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

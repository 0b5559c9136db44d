package mcp_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/oauth"
)

// proving is a ProofCredentials with a fixed token, numbering its proofs
// and carrying the last nonce the server sent.
type proving struct {
	proofs     atomic.Int32
	challenged atomic.Int32
	mu         sync.Mutex
	nonce      string
}

func (p *proving) Token(context.Context) (string, error) { return "bound", nil }

func (p *proving) Challenged(context.Context, int, []oauth.Challenge, string) error {
	p.challenged.Add(1)
	return errors.New("no other token")
}

func (p *proving) Authorize(req *http.Request, token string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	req.Header.Set("Authorization", "DPoP "+token)
	req.Header.Set("DPoP", fmt.Sprintf("proof-%d nonce=%s", p.proofs.Add(1), p.nonce))
	return nil
}

func (p *proving) Answered(resp *http.Response) bool {
	n := resp.Header.Get("DPoP-Nonce")
	if n == "" {
		return false
	}
	p.mu.Lock()
	p.nonce = n
	p.mu.Unlock()
	return resp.StatusCode == http.StatusUnauthorized
}

// TestProofCredentialsNonceRetry: a 401 asking for the server's nonce is
// answered by the same request with a fresh proof, without a new
// authorization; a server that keeps asking gets one retry per request.
func TestProofCredentialsNonceRetry(t *testing.T) {
	inner := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{mcptest.EchoTool()}}
	inner.Start()
	t.Cleanup(inner.Close)
	var seen sync.Map // proofs the server saw
	var stubborn atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proof := r.Header.Get("DPoP")
		if _, dup := seen.LoadOrStore(proof, true); dup {
			t.Errorf("proof %q sent twice", proof)
		}
		if r.Header.Get("Authorization") != "DPoP bound" || stubborn.Load() || len(proof) < 8 || proof[len(proof)-4:] != "=n-1" {
			w.Header().Set("DPoP-Nonce", "n-1")
			w.Header().Set("WWW-Authenticate", `DPoP error="use_dpop_nonce"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	creds := &proving{}
	ctx := context.Background()
	c, err := mcp.Connect(ctx, &mcp.HTTPTransport{URL: srv.URL, Credentials: creds}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	_, err = c.ListTools(ctx)
	require.NoError(t, err)
	assert.Zero(t, creds.challenged.Load(), "a nonce request started an authorization")

	stubborn.Store(true)
	before := creds.proofs.Load()
	_, err = c.ListTools(ctx)
	var ae *mcp.AuthError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "use_dpop_nonce", ae.Code)
	// The first answer's nonce is retried at once; the second goes to
	// Challenged, which has no other token.
	assert.Equal(t, int32(2), creds.proofs.Load()-before, "proofs sent for one refused request")
	assert.Equal(t, int32(1), creds.challenged.Load())
}

// TestTokenFuncRefused: a token source that has no other token than the
// refused one ends the request, after asking it once more.
func TestTokenFuncRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	var calls atomic.Int32
	src := mcp.TokenFunc(func(context.Context) (string, error) { calls.Add(1); return "stale", nil })
	_, err := mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: srv.URL, Credentials: src}, nil)
	var ae *mcp.AuthError
	require.ErrorAs(t, err, &ae)
	assert.ErrorContains(t, ae.Err, "no other")
	assert.NotContains(t, err.Error(), "stale")
	assert.GreaterOrEqual(t, calls.Load(), int32(2))
}

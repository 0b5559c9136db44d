package mcp_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/internal/oauthtest"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/oauth"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

// freeLoopbackURL returns a redirect URL on a port free a moment ago.
func freeLoopbackURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return "http://" + addr + "/callback"
}

// protected starts as and an MCP server speaking version behind it, which
// wants scope; all stop with the test.
func protected(t *testing.T, as *oauthtest.Server, version, scope string) *httptest.Server {
	t.Helper()
	as.Start()
	t.Cleanup(as.Close)
	inner := &mcptest.Server{Versions: []string{version}, Tools: []mcptest.Tool{mcptest.EchoTool()}}
	inner.Start()
	t.Cleanup(inner.Close)
	rs := oauthtest.Resource(inner, as, scope)
	t.Cleanup(rs.Close)
	return rs
}

// signIn plays the user at the terminal: it reads the URL Terminal prints
// and opens it with a browser-like client, which follows the authorization
// server's redirect to Terminal's loopback listener.
func signIn(t *testing.T, out io.Reader, done chan<- error) {
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "http://") {
			continue
		}
		hc := &http.Client{Timeout: 10 * time.Second}
		resp, err := hc.Get(line)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "Signed in") {
				err = fmt.Errorf("redirect page: %d %s", resp.StatusCode, body)
			}
		}
		hc.CloseIdleConnections()
		done <- err
	}
	_, _ = io.Copy(io.Discard, out)
}

// TestOAuthEndToEnd: a YAML config with auth.type oauth, through Discover,
// against a protected MCP server and an authorization server written for
// the test, with the terminal helper driven as a user would; then a token
// the server revokes is refreshed once for 50 concurrent calls.
func TestOAuthEndToEnd(t *testing.T) {
	as := &oauthtest.Server{Refresh: true}
	rs := protected(t, as, mcptest.Legacy, "read")

	redirect := freeLoopbackURL(t)
	cfg, err := config.Parse([]byte(fmt.Sprintf(`mcp:
  servers:
    - name: crm
      url: %s/mcp
      auth:
        type: oauth
        redirectUrl: %s
`, rs.URL, redirect)))
	require.NoError(t, err)

	pr, pw := io.Pipe()
	signedIn := make(chan error, 4)
	go signIn(t, pr, signedIn)
	defer pr.Close()
	store := &oauth.FileStore{Path: filepath.Join(t.TempDir(), "tokens.json")}
	// The debug log goes to a file: its writes are safe from any goroutine.
	logFile, err := os.Create(filepath.Join(t.TempDir(), "debug.log"))
	require.NoError(t, err)
	defer logFile.Close()
	ts, err := toolset.Discover(context.Background(), cfg.Servers, &toolset.Options{
		Browser:    oauth.Terminal{Out: pw, Timeout: 20 * time.Second},
		TokenStore: store,
		Client:     mcp.Options{Logger: slog.New(slog.NewTextHandler(logFile, &slog.HandlerOptions{Level: slog.LevelDebug}))},
	})
	require.NoError(t, err)
	defer ts.Close()
	require.NoError(t, <-signedIn)
	require.Empty(t, ts.Warnings())
	require.Len(t, ts.Tools(), 1)
	res, err := ts.Call(context.Background(), "crm_echo", map[string]any{"text": "hello"})
	require.NoError(t, err)
	assert.Equal(t, "hello", res.Result.Text())
	assert.Equal(t, int32(1), as.Authorizations.Load())
	assert.Equal(t, int32(1), as.Registrations.Load())

	// The server stops accepting the token: 50 concurrent calls get 401
	// and share one refresh (the rotating refresh token works once).
	as.Revoke()
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, err := ts.Call(context.Background(), "crm_echo", map[string]any{"text": "again"})
			errs <- err
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	assert.Equal(t, int32(1), as.RefreshGrants.Load(), "refresh requests")
	assert.Equal(t, int32(1), as.CodeGrants.Load(), "no new sign-in")
	require.NoError(t, pw.Close())
	logs, err := os.ReadFile(logFile.Name())
	require.NoError(t, err)
	assert.Contains(t, string(logs), "oauth: token issued", "the debug log saw the flow")
	assert.NotContains(t, string(logs), oauthtest.Sentinel, "a token reached the log")
	assert.NotContains(t, fmt.Sprintf("%v %+v", ts.Servers(), cfg), oauthtest.Sentinel)
}

// A background host (no Browser) fails fast with a typed error saying
// what to do, and the other servers keep working.
func TestOAuthNonInteractiveDiscover(t *testing.T) {
	as := &oauthtest.Server{}
	rs := protected(t, as, mcptest.Modern, "")
	open := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{mcptest.EchoTool()}}
	openURL := open.Start()
	defer open.Close()

	cfg, err := config.Parse([]byte(fmt.Sprintf("mcp:\n  servers:\n    - name: locked\n      url: %s/mcp\n      auth: {type: oauth}\n    - name: open\n      url: %s\n", rs.URL, openURL)))
	require.NoError(t, err)
	started := time.Now()
	ts, err := toolset.Discover(context.Background(), cfg.Servers, nil)
	require.NoError(t, err)
	defer ts.Close()
	require.Less(t, time.Since(started), mcp.DefaultConnectTimeout, "waited for a browser")
	var skipped error
	for _, s := range ts.Servers() {
		if s.Name == "locked" {
			skipped = s.Err
		}
	}
	require.ErrorIs(t, skipped, mcp.ErrAuth)
	require.ErrorIs(t, skipped, oauth.ErrInteractionRequired)
	var ie *oauth.InteractionRequiredError
	require.True(t, errors.As(skipped, &ie))
	assert.Contains(t, skipped.Error(), rs.URL)
	assert.Equal(t, int32(0), as.Authorizations.Load())
	_, err = ts.Call(context.Background(), "open_echo", map[string]any{"text": "x"})
	require.NoError(t, err)
}

// countingTransport counts the requests it sends and keeps the password
// of the Basic credentials of the token requests.
type countingTransport struct {
	mu       sync.Mutex
	requests int
	secrets  []string
}

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.requests++
	if _, pw, ok := req.BasicAuth(); ok && strings.HasSuffix(req.URL.Path, "/token") {
		c.secrets = append(c.secrets, pw)
	}
	c.mu.Unlock()
	return http.DefaultTransport.RoundTrip(req)
}

// TestOAuthToolsetHostOptions: the host's HTTP client sends the OAuth
// requests, a client secret held in memory serves an entry, and the
// server's status gives the host the Authorizer: its state, and sign-out.
func TestOAuthToolsetHostOptions(t *testing.T) {
	as := &oauthtest.Server{Refresh: true, AuthMethods: []string{oauth.AuthBasic}}
	rs := protected(t, as, mcptest.Modern, "read")
	cfg, err := config.Parse([]byte(fmt.Sprintf(`mcp:
  servers:
    - name: crm
      url: %s/mcp
      auth:
        type: oauth
        clientId: app
        issuer: %s
`, rs.URL, as.Issuer())))
	require.NoError(t, err)
	counting := &countingTransport{}
	ts, err := toolset.Discover(context.Background(), cfg.Servers, &toolset.Options{
		Browser:         oauthtest.Follow,
		OAuthHTTPClient: &http.Client{Transport: counting},
		ClientSecrets:   map[string]oauth.Secret{"crm": "in-memory-secret"},
	})
	require.NoError(t, err)
	defer ts.Close()
	require.Empty(t, ts.Warnings())
	counting.mu.Lock()
	assert.Positive(t, counting.requests, "the host's client sent no OAuth request")
	assert.Equal(t, []string{"in-memory-secret"}, counting.secrets, "the token request's client secret")
	counting.mu.Unlock()

	st := ts.Servers()[0]
	require.NotNil(t, st.OAuth)
	state := st.OAuth.State()
	assert.Equal(t, "app", state.ClientID)
	assert.Equal(t, as.Issuer(), state.Issuer)
	assert.True(t, state.HasToken && state.Refreshable, "state %+v", state)
	require.NoError(t, st.OAuth.SignOut(context.Background()))
	assert.False(t, st.OAuth.State().HasToken)
}

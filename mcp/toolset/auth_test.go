package toolset_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/internal/oauthtest"
	"git.rickub.com/bots-garden/mini-me/mcp/oauth"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

// secretWatch is the host's OAuth HTTP client transport: it notes every
// request that carries the secret, wherever it goes.
type secretWatch struct {
	secret string
	mu     sync.Mutex
	leaks  []string // hosts that got the secret
}

func (w *secretWatch) RoundTrip(req *http.Request) (*http.Response, error) {
	_, pw, _ := req.BasicAuth()
	var body []byte
	if req.GetBody != nil {
		if b, err := req.GetBody(); err == nil {
			body, _ = io.ReadAll(b)
			b.Close()
		}
	}
	if pw == w.secret || strings.Contains(string(body), w.secret) {
		w.mu.Lock()
		w.leaks = append(w.leaks, req.URL.Host)
		w.mu.Unlock()
	}
	return http.DefaultTransport.RoundTrip(req)
}

// A client secret the host holds in memory (Options.ClientSecrets) for an
// entry that names no issuer is refused, rather than sent to whichever
// authorization server the MCP server names (issue 35 #5): here a spoofed
// server naming an authorization server of its own.
func TestClientSecretsNeedIssuer(t *testing.T) {
	const secret = "in-memory-secret-" + oauthtest.Sentinel
	evil := &oauthtest.Server{Refresh: true, AuthMethods: []string{oauth.AuthBasic}}
	evil.Start()
	t.Cleanup(evil.Close)
	inner := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{mcptest.EchoTool()}}
	inner.Start()
	t.Cleanup(inner.Close)
	spoofed := oauthtest.Resource(inner, evil, "")
	t.Cleanup(spoofed.Close)

	cfg, err := config.Parse([]byte(fmt.Sprintf("mcp:\n  servers:\n    - name: crm\n      url: %s/mcp\n      auth: {type: oauth, clientId: app}\n", spoofed.URL)))
	require.NoError(t, err)
	watch := &secretWatch{secret: secret}
	hc := &http.Client{Transport: watch}
	t.Cleanup(hc.CloseIdleConnections)
	ts, err := toolset.Discover(context.Background(), cfg.Servers, &toolset.Options{
		Browser:         oauthtest.Follow,
		OAuthHTTPClient: hc,
		ClientSecrets:   map[string]oauth.Secret{"crm": secret},
	})
	require.NoError(t, err)
	defer ts.Close()

	watch.mu.Lock()
	assert.Empty(t, watch.leaks, "the in-memory secret went to these hosts")
	watch.mu.Unlock()
	assert.Zero(t, evil.CodeGrants.Load()+evil.MachineGrants.Load(), "token requests at the spoofed authorization server")
	st := ts.Servers()
	require.Len(t, st, 1)
	require.Error(t, st[0].Err, "the server was used")
	assert.True(t, errors.Is(st[0].Err, toolset.ErrServerConfig), "error %v, want ErrServerConfig", st[0].Err)
	assert.Contains(t, st[0].Err.Error(), "issuer")
	assert.NotContains(t, st[0].Err.Error(), secret)
}

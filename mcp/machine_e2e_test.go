package mcp_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/internal/oauthtest"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

// TestMachineGrantsFromConfig: YAML entries with auth.grant, through
// Discover, against protected servers: a client_credentials client whose
// secret is in the environment, and a workload whose token is in a file
// the platform rewrites. No browser is configured.
func TestMachineGrantsFromConfig(t *testing.T) {
	cc := &oauthtest.Server{ClientID: "nightly", ClientSecret: "from-the-env-" + oauthtest.Sentinel}
	ccRS := protected(t, cc, mcptest.Modern, "")
	wif := &oauthtest.Server{Assertion: "h.workload.s"}
	wifRS := protected(t, wif, mcptest.Legacy, "")
	tokenFile := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte("h.workload.s\n"), 0o600))
	t.Setenv("MINIME_TEST_CC_SECRET", cc.ClientSecret)

	cfg, err := config.Parse([]byte(fmt.Sprintf(`mcp:
  servers:
    - name: reports
      url: %s/mcp
      auth:
        type: oauth
        grant: client_credentials
        clientId: nightly
        clientSecretEnv: MINIME_TEST_CC_SECRET
        issuer: %s
    - name: builds
      url: %s/mcp
      auth:
        type: oauth
        grant: jwt_bearer
        assertionFile: %s
        issuer: %s
`, ccRS.URL, cc.Issuer(), wifRS.URL, tokenFile, wif.Issuer())))
	require.NoError(t, err)
	ts, err := toolset.Discover(context.Background(), cfg.Servers, nil)
	require.NoError(t, err)
	defer ts.Close()
	require.Empty(t, ts.Warnings())
	for _, tool := range []string{"reports_echo", "builds_echo"} {
		res, err := ts.Call(context.Background(), tool, map[string]any{"text": "hi"})
		require.NoError(t, err, tool)
		assert.Equal(t, "hi", res.Result.Text())
	}
	assert.Equal(t, int32(1), cc.MachineGrants.Load(), "client credentials token requests")
	assert.Equal(t, int32(1), wif.MachineGrants.Load(), "jwt-bearer token requests")
	assert.Zero(t, cc.Authorizations.Load()+wif.Authorizations.Load()+cc.Registrations.Load()+wif.Registrations.Load(), "a browser step or a registration")
}

package examples_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/internal/oauthtest"
)

// The chat signs in to an oauth server as a person would: it prints the
// authorization URL, the "browser" (this test) opens it, the authorization
// server redirects to the chat's loopback listener, and the chat lists the
// server's tools, keeping the token in the user's configuration directory.
func TestChatOAuthSignIn(t *testing.T) {
	as := &oauthtest.Server{}
	as.Start()
	defer as.Close()
	inner := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{{
		Def: json.RawMessage(`{"name":"lookup","description":"Looks a customer up.","inputSchema":{"type":"object"}}`),
	}}}
	inner.Start()
	defer inner.Close()
	rs := oauthtest.Resource(inner, as, "")
	defer rs.Close()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	redirect := "http://" + ln.Addr().String() + "/callback"
	require.NoError(t, ln.Close())
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "mini-me.yaml")
	require.NoError(t, os.WriteFile(cfgPath, []byte(fmt.Sprintf(
		"mcp:\n  servers:\n    - name: crm\n      url: %s/mcp\n      auth:\n        type: oauth\n        redirectUrl: %s\n", rs.URL, redirect)), 0o600))

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "chat"), "-config", cfgPath)
	cmd.Env = environ(t, "XDG_CONFIG_HOME="+dir)
	cmd.Stdin = strings.NewReader("")
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	require.NoError(t, cmd.Start())
	waited := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		pw.Close()
		waited <- err
	}()

	var out strings.Builder
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		line := sc.Text()
		out.WriteString(line + "\n")
		if u := strings.TrimSpace(line); strings.HasPrefix(u, as.Issuer()+"/authorize?") {
			hc := &http.Client{Timeout: 10 * time.Second}
			resp, err := hc.Get(u)
			require.NoError(t, err)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			hc.CloseIdleConnections()
			assert.Contains(t, string(body), "Signed in")
		}
	}
	require.NoError(t, <-waited, out.String())
	assert.Contains(t, out.String(), "To authorize access, open this URL in your browser")
	assert.Contains(t, out.String(), "crm_lookup")
	assert.Contains(t, out.String(), "No model is configured")
	assert.NotContains(t, out.String(), oauthtest.Sentinel)
	assert.Equal(t, int32(1), as.CodeGrants.Load())

	fi, err := os.Stat(filepath.Join(dir, "mini-me", "tokens.json"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

//go:build unix

package interop

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/mcp"
)

// everythingMain is server-everything's entry point, below the folder
// setup.sh installs into.
const everythingMain = "node_modules/@modelcontextprotocol/server-everything/dist/index.js"

// Lines server-everything and our harness (testdata/node/harness.cjs)
// write.
const (
	listeningLine = "mini-me-interop: listening on "
	deletedLine   = "Received session termination request for session "
)

// TestEverythingHTTP runs the interop scenario against the reference
// TypeScript server, @modelcontextprotocol/server-everything, over
// Streamable HTTP. It is a legacy-only server (initialize, sessions).
func TestEverythingHTTP(t *testing.T) {
	url, p := startEverythingHTTP(t)
	for _, tc := range []struct {
		name    string
		pin     string
		version string
	}{
		// 2025-11-25 servers prime each SSE response with an event that
		// has an id and no data.
		{"negotiated 2025-11-25", "", mcp.Version20251125},
		{"pinned 2025-06-18", mcp.Version20250618, mcp.Version20250618},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := newFeed[mcp.Progress](0)
			ctx, cancel := stepContext()
			defer cancel()
			c, err := mcp.Connect(ctx, &mcp.HTTPTransport{URL: url}, options(log, tc.pin))
			require.NoError(t, err, "server output:\n%s", p.out)
			t.Cleanup(func() { _ = c.Close() })
			assert.Equal(t, mcp.EraLegacy, c.Era())
			assert.Equal(t, tc.version, c.ProtocolVersion())
			assert.Contains(t, c.Instructions(), "Everything Server")

			run(t, c, log, everythingScenario())
			// run closed the client: the server saw the session deleted.
			_, err = p.waitLine(deletedLine, stepTimeout)
			assert.NoError(t, err, "DELETE of the session")
			p.out.forget(func(l string) bool { return strings.HasPrefix(l, deletedLine) })
		})
	}
	t.Run("pinned 2026-07-28 refused", func(t *testing.T) {
		ctx, cancel := stepContext()
		defer cancel()
		_, err := mcp.Connect(ctx, &mcp.HTTPTransport{URL: url}, options(newFeed[mcp.Progress](0), mcp.Version20260728))
		assert.ErrorIs(t, err, mcp.ErrUnsupportedVersion)
	})
}

// everythingScenario is what server-everything offers a client without
// roots, sampling or elicitation.
func everythingScenario() scenario {
	const slow = "trigger-long-running-operation"
	return scenario{
		serverName: "mcp-servers/everything",
		// Tools registered for every client, with their readOnlyHint;
		// others depend on the client's capabilities.
		tools: map[string]bool{
			"echo": true, "get-annotated-message": true, "get-env": true, "get-resource-links": true,
			"get-resource-reference": true, "get-structured-content": true, "get-sum": true, "get-tiny-image": true,
			"gzip-file-as-resource": false, "toggle-simulated-logging": false, "toggle-subscriber-updates": false,
			slow: true,
		},
		calls: []toolCall{
			{name: "echo", args: map[string]any{"message": "héllo"}, want: "Echo: héllo"},
			{name: "get-sum", args: map[string]any{"a": 2, "b": 3.5}, want: "The sum of 2 and 3.5 is 5.5."},
			{name: "get-structured-content", args: map[string]any{"location": "Chicago"}, want: `"temperature":36`,
				structured: `{"temperature":36,"conditions":"Light rain / drizzle","humidity":82}`},
			// Argument validation failures and unknown tools are tool
			// errors in the TypeScript SDK.
			{name: "get-sum", args: map[string]any{"a": "two", "b": 2}, want: "Input validation error", isError: true},
			{name: "nope", want: "Tool nope not found", isError: true},
		},
		progress:      toolCall{name: slow, args: map[string]any{"duration": 0.3, "steps": 3}, want: "Long running operation completed"},
		progressSteps: 3,
		// Ten progress steps a second for 20 s: plenty of time to cancel.
		slow:     toolCall{name: slow, args: map[string]any{"duration": 20, "steps": 200}},
		slowStep: 100 * time.Millisecond,
		prompt:   promptCall{name: "args-prompt", args: map[string]string{"city": "Paris"}, want: "What's weather in Paris?"},
		resource: resourceRead{uri: "demo://resource/static/document/architecture.md", want: "# Everything Server – Architecture"},
	}
}

// everythingInstall returns node and the folder setup.sh installed
// server-everything into, or ends the test (see unavailable).
func everythingInstall(t *testing.T) (node, dir string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		unavailable(t, "node is not installed")
	}
	dir, err = npmInstallDir()
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err != nil {
		unavailable(t, "server-everything is not installed in %s", dir)
	}
	return node, dir
}

// startEverythingHTTP starts server-everything in Streamable HTTP mode on
// a free port of 127.0.0.1 and returns its MCP endpoint.
func startEverythingHTTP(t *testing.T) (string, *process) {
	t.Helper()
	node, dir := everythingInstall(t)
	harness, err := filepath.Abs(filepath.Join("testdata", "node", "harness.cjs"))
	require.NoError(t, err)
	start := time.Now()
	p := startProcess(t, dir, []string{"PORT=0"}, node, "--require", harness, filepath.Join(dir, everythingMain), "streamableHttp")
	line, err := p.waitLine(listeningLine, startTimeout)
	require.NoError(t, err, "server-everything did not start; output:\n%s", p.out)
	addr := strings.TrimPrefix(line, listeningLine)
	host, _, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1", host, "server-everything must listen on loopback only")
	t.Logf("server-everything listening on %s after %v", addr, time.Since(start).Round(time.Millisecond))
	return "http://" + addr + "/mcp", p
}

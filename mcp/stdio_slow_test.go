//go:build unix

package mcp_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/mcp"
)

// testStdioSlowStart: a server that reads its first line only after the
// probe timeout (as an npx or uvx server that downloads itself on first
// start) is reached in either era, in one process: a modern one refuses
// the initialize sent after the timeout, and its late answer to the probe
// is taken instead (issue 35 #19: Connect failed).
func testStdioSlowStart(t *testing.T, bin string) {
	const probe = 100 * time.Millisecond
	const slow = 5 * probe
	modern := []string{"server/discover", "initialize", "tools/call", "tools/call"}
	for _, tc := range []struct {
		name    string
		flags   []string
		era     mcp.Era
		methods []string // what the server received, history included
	}{
		// Answers initialize "method not found".
		{"modern", []string{"-era", "modern"}, mcp.EraModern, modern},
		// Answers initialize -32022: the probe fixed the era.
		{"both, era fixed by the first request", []string{"-era", "both", "-fix-era"}, mcp.EraModern, modern},
		// Answers the probe "method not found", then initialize.
		{"legacy", []string{"-era", "legacy"}, mcp.EraLegacy, []string{"server/discover", "initialize", "notifications/initialized", "tools/call", "tools/call"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			starts := filepath.Join(t.TempDir(), "starts")
			tr := finance(bin, append(tc.flags, "-slow-start", slow.String(), "-starts", starts)...)
			tr.ProbeTimeout = probe
			start := time.Now()
			c := stdioConnect(t, tr, nil)
			assert.GreaterOrEqual(t, time.Since(start), slow, "the server was slow to start")
			assert.Equal(t, tc.era, c.Era())
			assert.Equal(t, "finance", c.ServerInfo().Name)
			assert.NotNil(t, c.Capabilities().Tools)
			assert.Equal(t, "perso, pro", call(t, c, "list_profiles", nil))
			assert.Equal(t, tc.methods, history(t, c).Methods)
			n, err := os.ReadFile(starts)
			require.NoError(t, err)
			assert.Equal(t, "1", string(n), "process starts")
		})
	}
}

//go:build unix

package toolset_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

// A stdio server's stderr, forwarded to the log of a Toolset, names the
// server once (it was named twice: server=fs server=fs), and Options.Logger
// is the clients' logger when Client.Logger is unset.
func TestStdioStderrNamesTheServerOnce(t *testing.T) {
	bin := mcptest.BuildFinance(t)
	var out lockedBuffer
	log := slog.New(slog.NewTextHandler(&out, nil))
	// This server writes a line on stderr for each request, and as it
	// exits on the probe.
	ts, err := toolset.Discover(context.Background(), []config.Server{{Name: "fs", Command: bin, Args: []string{"-era", "legacy-exit-on-probe"}}},
		&toolset.Options{Logger: log}) // the Toolset's Logger reaches its clients
	require.NoError(t, err)
	ts.Close()
	lines := 0
	for _, line := range strings.Split(out.String(), "\n") {
		if !strings.Contains(line, "server stderr") {
			continue
		}
		lines++
		assert.Equal(t, 1, strings.Count(line, "server=fs"), "the server named once: %s", line)
	}
	assert.NotZero(t, lines, "no stderr line logged:\n%s", out.String())
}

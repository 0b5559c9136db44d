//go:build unix

package toolset_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

// lockedBuffer is a bytes.Buffer for concurrent writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A stdio server's stderr, forwarded to the log of a Toolset, names the
// server once (it was named twice: server=fs server=fs).
func TestStdioStderrNamesTheServerOnce(t *testing.T) {
	bin := mcptest.BuildFinance(t)
	var out lockedBuffer
	log := slog.New(slog.NewTextHandler(&out, nil))
	// This server writes a line on stderr for each request, and as it
	// exits on the probe.
	ts, err := toolset.Discover(context.Background(), []config.Server{{Name: "fs", Command: bin, Args: []string{"-era", "legacy-exit-on-probe"}}},
		&toolset.Options{Client: mcp.Options{Logger: log}})
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

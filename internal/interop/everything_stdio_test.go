//go:build linux

package interop

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/mcp"
)

// TestEverythingStdio runs the interop scenario against server-everything
// as a subprocess speaking MCP on stdin and stdout, started and stopped by
// our CommandTransport; after Close, no process of it may remain.
func TestEverythingStdio(t *testing.T) {
	node, dir := everythingInstall(t)
	// server-everything reads only its first argument; the second marks
	// this test's process so that we can look for it afterwards.
	marker := "--mini-me-interop-" + randomHex(t)
	log := newFeed[mcp.Progress](0)
	ctx, cancel := stepContext()
	defer cancel()
	c, err := mcp.Connect(ctx, &mcp.CommandTransport{
		Command: node,
		Args:    []string{filepath.Join(dir, everythingMain), "stdio", marker},
		Dir:     dir,
	}, options(log, ""))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	assert.Equal(t, mcp.EraLegacy, c.Era())
	assert.Equal(t, mcp.Version20251125, c.ProtocolVersion())
	assert.Contains(t, c.Instructions(), "Everything Server")
	require.NotEmpty(t, processesWith(t, marker), "the server process is not running")

	run(t, c, log, everythingScenario())
	// run closed the client.
	assert.Empty(t, processesWith(t, marker), "server processes left after Close")
}

func randomHex(t *testing.T) string {
	b := make([]byte, 8)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return hex.EncodeToString(b)
}

// processesWith returns the ids of the live processes (zombies included)
// that have arg among their arguments.
func processesWith(t *testing.T, arg string) []string {
	t.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	require.NoError(t, err)
	var pids []string
	for _, f := range dirs {
		cmdline, err := os.ReadFile(f)
		if err != nil {
			continue // the process ended meanwhile
		}
		for _, a := range bytes.Split(cmdline, []byte{0}) {
			if string(a) == arg {
				pids = append(pids, filepath.Base(filepath.Dir(f)))
				break
			}
		}
	}
	return pids
}

package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/permission"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The roots of the configuration are what the chat's servers see: /roots
// starts from mcp.roots and edits it, and a server with roots of its own
// keeps them.
func TestHostRootsFromConfiguration(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "mini-me.yaml")
	require.NoError(t, os.WriteFile(file, []byte(`mcp:
  roots: [/home/me/site]
  servers:
    - name: shared
      url: http://127.0.0.1:1/mcp
    - name: own
      url: http://127.0.0.1:1/mcp
      roots: [/home/me/notes]
    - name: none
      url: http://127.0.0.1:1/mcp
      roots: []
`), 0o600))
	cfg, err := config.Load(file)
	require.NoError(t, err)
	h := newHost(permission.NewTerminal(nil, nil), cfg)
	ctx := context.Background()

	roots, err := h.serverRoots(ctx, "shared")
	require.NoError(t, err)
	assert.Equal(t, []mcp.Root{{URI: "file:///home/me/site", Name: "site"}}, roots, "mcp.roots, which /roots lists")
	listed, err := h.listRoots(ctx)
	require.NoError(t, err)
	assert.Equal(t, roots, listed)

	h.roots = append(h.roots, mcp.Root{URI: "file:///tmp/shared", Name: "shared"}) // as /roots add does
	roots, err = h.serverRoots(ctx, "shared")
	require.NoError(t, err)
	assert.Len(t, roots, 2, "an edit reaches the servers without roots of their own")

	roots, err = h.serverRoots(ctx, "own")
	require.NoError(t, err)
	assert.Equal(t, []mcp.Root{{URI: "file:///home/me/notes", Name: "notes"}}, roots)
	roots, err = h.serverRoots(ctx, "none")
	require.NoError(t, err)
	assert.Empty(t, roots, "roots: [] shares nothing")
}

package mcp_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
)

// An AppServer reaches its own server only, with every tool it listed.
func TestToolsetAppServer(t *testing.T) {
	appOnly := echoTool()
	appOnly.Def = json.RawMessage(`{"name":"poll","inputSchema":{"type":"object"},"_meta":{"ui":{"visibility":["app"]}}}`)
	a := &mcptest.Server{Versions: []string{mcptest.Legacy}, Tools: []mcptest.Tool{echoTool(), appOnly}}
	b := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{failTool()}}
	ts, err := mcp.Discover(context.Background(), []config.Server{{Name: "a", URL: start(t, a)}, {Name: "b", URL: start(t, b)}}, nil)
	require.NoError(t, err)
	srv, ok := ts.AppServer("A")
	require.True(t, ok)
	_, ok = ts.AppServer("c")
	assert.False(t, ok)
	tools, err := srv.ListTools(context.Background())
	require.NoError(t, err)
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	assert.Equal(t, []string{"echo", "poll"}, names)
	res, err := srv.CallTool(context.Background(), "poll", map[string]any{"text": "hi"})
	require.NoError(t, err)
	assert.Equal(t, "hi", res.Text())
	_, err = srv.CallTool(context.Background(), "fail", nil)
	require.ErrorIs(t, err, mcp.ErrUnknownTool, "b's tool, through a")
	for _, r := range b.Requests() {
		assert.NotEqual(t, "tools/call", r.Method)
	}
	require.NoError(t, ts.Close(context.Background()))
	_, err = srv.CallTool(context.Background(), "poll", nil)
	require.ErrorIs(t, err, mcp.ErrClosed)
}

package toolset_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

// A tool whose MCP Apps visibility lacks "model" is out of the model's
// catalogue (Tools, Tool, Call) but reachable through its server's
// AppServer, which reaches no other server.
func TestToolsetAppServer(t *testing.T) {
	appOnly := mcptest.EchoTool()
	appOnly.Def = json.RawMessage(`{"name":"poll","inputSchema":{"type":"object"},"_meta":{"ui":{"visibility":["app"]}}}`)
	a := &mcptest.Server{Versions: []string{mcptest.Legacy}, Tools: []mcptest.Tool{mcptest.EchoTool(), appOnly}}
	b := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{mcptest.PlainTool("other")}}
	ts, err := toolset.Discover(context.Background(), []config.Server{{Name: "a", URL: mcptest.Start(t, a)}, {Name: "b", URL: mcptest.Start(t, b)}}, nil)
	require.NoError(t, err)

	var model []string
	for _, st := range ts.Tools() {
		model = append(model, st.Name)
	}
	assert.Equal(t, []string{"a_echo", "b_other"}, model)
	_, ok := ts.Tool("a_poll")
	assert.False(t, ok)
	_, err = ts.Call(context.Background(), "a_poll", nil)
	require.ErrorIs(t, err, toolset.ErrUnknownTool)
	assert.Zero(t, a.Count("tools/call"), "the model's route never reaches an app-only tool")

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
	_, err = srv.CallTool(context.Background(), "other", nil)
	require.ErrorIs(t, err, toolset.ErrUnknownTool, "b's tool, through a")
	assert.Zero(t, b.Count("tools/call"))

	require.NoError(t, ts.Close())
	_, err = srv.CallTool(context.Background(), "poll", nil)
	require.ErrorIs(t, err, mcp.ErrClosed)
}

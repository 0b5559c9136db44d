package interop

import (
	"context"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

// TestGoSDKPromptsAndResources gathers the go-sdk peer's prompt and
// resource through a Toolset, uses them, and sees a prompt the server
// adds while it runs (notifications/prompts/list_changed).
func TestGoSDKPromptsAndResources(t *testing.T) {
	g := startGoSDK(t, nil)
	ctx, cancel := stepContext()
	defer cancel()
	ts, err := toolset.Discover(ctx, []config.Server{{Name: "peer", URL: g.url}}, nil)
	require.NoError(t, err)
	defer func() { assert.NoError(t, ts.Close()) }()
	require.True(t, ts.Servers()[0].Connected, "%v", ts.Servers()[0].Err)

	require.Len(t, ts.Prompts(), 1)
	assert.Equal(t, "peer_greet", ts.Prompts()[0].Name)
	p, err := ts.GetPrompt(ctx, "peer_greet", map[string]string{"name": "Ada"})
	require.NoError(t, err)
	require.NotEmpty(t, p.Result.Messages)
	assert.Contains(t, p.Result.Messages[0].Text(), "Ada")

	require.Len(t, ts.Resources(), 1)
	r, err := ts.ReadResource(ctx, "mem://interop/readme")
	require.NoError(t, err)
	assert.Equal(t, "hello from the go-sdk", r.Text())
	_, err = ts.ReadResource(ctx, "mem://interop/other")
	assert.ErrorIs(t, err, toolset.ErrUnknownResource)

	g.srv.AddPrompt(&sdk.Prompt{Name: "farewell"}, func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "Say goodbye."}}}}, nil
	})
	require.Eventually(t, func() bool { return len(ts.Prompts()) == 2 }, stepTimeout, 10*time.Millisecond,
		"the prompt added while the server runs is listed")
	p, err = ts.GetPrompt(ctx, "peer_farewell", nil)
	require.NoError(t, err)
	assert.Equal(t, "Say goodbye.", p.Result.Messages[0].Text())
}

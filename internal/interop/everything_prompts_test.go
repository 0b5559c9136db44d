//go:build unix

package interop

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/openai"
	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

// TestEverythingPromptsAndResources gathers server-everything's prompts,
// resources and templates through a Toolset, renders and completes its
// prompts, reads through a template, and checks that a URI it never named
// is not sent to it; a subscription delivers the server's updates.
func TestEverythingPromptsAndResources(t *testing.T) {
	url, _ := startEverythingHTTP(t)
	ctx, cancel := stepContext()
	defer cancel()
	updates := make(chan string, 8)
	ts, err := toolset.Discover(ctx, []config.Server{{Name: "everything", URL: url}}, &toolset.Options{
		OnResourceUpdated: func(u mcp.ResourceUpdate) {
			select {
			case updates <- u.Server + " " + u.URI:
			default:
			}
		}})
	require.NoError(t, err)
	defer func() { assert.NoError(t, ts.Close()) }()
	require.True(t, ts.Servers()[0].Connected, "%v", ts.Servers()[0].Err)

	var prompts []string
	for _, p := range ts.Prompts() {
		prompts = append(prompts, p.Name)
	}
	for _, want := range []string{"everything_simple-prompt", "everything_args-prompt", "everything_completable-prompt", "everything_resource-prompt"} {
		assert.Contains(t, prompts, want)
	}
	st := ts.Servers()[0]
	assert.Equal(t, len(prompts), st.Prompts)
	assert.Positive(t, st.Resources)
	assert.Positive(t, st.ResourceTemplates)
	assert.True(t, slices.ContainsFunc(ts.Resources(), func(r toolset.Resource) bool {
		return r.Resource.URI == "demo://resource/static/document/architecture.md"
	}))
	const textTemplate = "demo://resource/dynamic/text/{resourceId}"
	assert.True(t, slices.ContainsFunc(ts.ResourceTemplates(), func(r toolset.ResourceTemplate) bool {
		return r.Template.URITemplate == textTemplate
	}))

	p, err := ts.GetPrompt(ctx, "everything_args-prompt", map[string]string{"city": "Paris"})
	require.NoError(t, err)
	require.NotEmpty(t, p.Result.Messages)
	assert.Contains(t, p.Result.Messages[0].Text(), "Paris")

	// A prompt that embeds a resource: framed as data in the conversation.
	p, err = ts.GetPrompt(ctx, "everything_resource-prompt", map[string]string{"resourceType": "Text", "resourceId": "3"})
	require.NoError(t, err)
	msgs, err := (&agent.Agent{Model: &openai.Model{BaseURL: "http://127.0.0.1:1/v1"}}).PromptMessages(p)
	require.NoError(t, err)
	require.NotEmpty(t, msgs)
	assert.Contains(t, msgs[0].Text(), `<tool_output server="everything" tool="resource:demo://resource/dynamic/text/3">`)

	c, err := ts.CompletePrompt(ctx, "everything_completable-prompt", mcp.CompletionArgument{Name: "department", Value: "En"})
	require.NoError(t, err)
	assert.Equal(t, []string{"Engineering"}, c.Values)
	c, err = ts.CompletePrompt(ctx, "everything_completable-prompt", mcp.CompletionArgument{Name: "name", Value: "A", Context: map[string]string{"department": "Engineering"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"Alice"}, c.Values, "the arguments already chosen reach the server")
	c, err = ts.CompleteResource(ctx, "everything", textTemplate, mcp.CompletionArgument{Name: "resourceId", Value: "1"})
	require.NoError(t, err)
	assert.NotEmpty(t, c.Values)

	r, err := ts.ReadResource(ctx, "demo://resource/dynamic/text/7")
	require.NoError(t, err, "a URI its template matches")
	require.NotEmpty(t, r.Result.Contents)
	assert.NotEmpty(t, r.Text())
	r, err = ts.ReadResource(ctx, "demo://resource/static/document/architecture.md")
	require.NoError(t, err)
	assert.Contains(t, r.Text(), "# Everything Server")
	_, err = ts.ReadResource(ctx, "file:///etc/passwd")
	assert.ErrorIs(t, err, toolset.ErrUnknownResource)

	// Subscriptions: the server sends an update at once when its
	// simulated updates are switched on, then every 5 s.
	const doc = "demo://resource/static/document/architecture.md"
	require.NoError(t, ts.SubscribeResource(ctx, doc))
	require.ErrorIs(t, ts.SubscribeResource(ctx, "file:///etc/passwd"), toolset.ErrUnknownResource)
	_, err = ts.Call(ctx, "everything_toggle-subscriber-updates", nil)
	require.NoError(t, err)
	select {
	case u := <-updates:
		assert.Equal(t, "everything "+doc, u)
	case <-ctx.Done():
		t.Fatal("no resource update from server-everything")
	}
	require.NoError(t, ts.UnsubscribeResource(ctx, doc))
	_, err = ts.Call(ctx, "everything_toggle-subscriber-updates", nil)
	require.NoError(t, err)
}

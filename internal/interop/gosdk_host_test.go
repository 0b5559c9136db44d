//go:build unix

//lint:file-ignore SA1019 sampling is deprecated in 2026-07-28 yet still in it, and what this file tests

package interop

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/openai"
	"git.rickub.com/bots-garden/mini-me/agent/openai/openaitest"
	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// TestGoSDKInputRequests: a go-sdk server's tool asks for a completion and
// a form, as input requests of one result. In 2026-07-28 (stateless) they
// come in an input_required result (multi round-trip) and the retry carries
// both answers and the request state; in 2025-11-25 (stateful) the go-sdk
// sends them as sampling/createMessage and elicitation/create requests.
// Either way the Sampler answers the first with its model, an Elicitor the
// second.
func TestGoSDKInputRequests(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts *sdk.StreamableHTTPOptions
		era  mcp.Era
	}{
		{"2026-07-28", &sdk.StreamableHTTPOptions{Stateless: true}, mcp.EraModern},
		{"2025-11-25", nil, mcp.EraLegacy},
	} {
		t.Run(tc.name, func(t *testing.T) { testGoSDKInputRequests(t, tc.opts, tc.era) })
	}
}

func testGoSDKInputRequests(t *testing.T, opts *sdk.StreamableHTTPOptions, era mcp.Era) {
	s := sdk.NewServer(&sdk.Implementation{Name: "gosdk-host", Version: "1.0.0"}, nil)
	rounds := 0
	sdk.AddTool(s, &sdk.Tool{Name: "greet", Description: "Greets the user in French."},
		func(_ context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			rounds++
			in := req.Params.InputResponses
			if in == nil {
				return &sdk.CallToolResult{RequestState: "state-1", InputRequests: sdk.InputRequestMap{
					"hello": &sdk.CreateMessageParams{MaxTokens: 30, Messages: []*sdk.SamplingMessage{
						{Role: "user", Content: &sdk.TextContent{Text: "Say hello in French"}}}},
					"who": &sdk.ElicitParams{Message: "Your name?", RequestedSchema: map[string]any{
						"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}},
				}}, nil, nil
			}
			hello, ok1 := in["hello"].(*sdk.CreateMessageWithToolsResult) // how the go-sdk reads every sampling answer
			who, ok2 := in["who"].(*sdk.ElicitResult)
			if !ok1 || !ok2 || req.Params.RequestState != "state-1" {
				return nil, nil, fmt.Errorf("bad retry: %T %T %q", in["hello"], in["who"], req.Params.RequestState)
			}
			text := hello.Content[0].(*sdk.TextContent).Text
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("%s %v (by %s)", text, who.Content["name"], hello.Model)}}}, nil, nil
		})
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, opts))
	t.Cleanup(hs.Close)

	llm := &openaitest.Server{Turns: []openaitest.Turn{{Text: "Bonjour"}}}
	llmURL := llm.Start()
	t.Cleanup(llm.Close)
	sampler := &agent.Sampler{Model: &openai.Model{BaseURL: llmURL, Model: "tiny"}, ModelName: "tiny",
		Servers: []config.Server{{Name: "gosdk"}}, Policy: permission.NewPolicy(permission.AllowAll{})}
	elicitor := &agent.Elicitor{Ask: func(_ context.Context, e permission.Elicitation) (permission.ElicitAnswer, error) {
		return permission.ElicitAnswer{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
	}}
	ctx, cancel := stepContext()
	defer cancel()
	c, err := mcp.Connect(ctx, &mcp.HTTPTransport{URL: hs.URL}, &mcp.Options{ServerName: "gosdk", Sample: sampler.Sample, Elicit: elicitor.Elicit})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	require.Equal(t, era, c.Era())
	res, err := c.CallTool(ctx, "greet", nil)
	require.NoError(t, err)
	assert.Equal(t, "Bonjour Ada (by tiny)", res.Text())
	if era == mcp.EraModern {
		assert.Equal(t, 2, rounds, "one round with the input requests, one retry")
	}
	require.Len(t, llm.Requests(), 1)
	assert.Equal(t, "Say hello in French", llm.Requests()[0].Messages[0].Content)
}

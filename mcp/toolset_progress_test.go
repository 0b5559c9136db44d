package mcp_test

import (
	"context"
	"fmt"
	"log"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
)

func TestDiscoverProgress(t *testing.T) {
	modern := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{plainTool("a"), plainTool("b")}}
	legacy := &mcptest.Server{Versions: []string{mcptest.Legacy}, Tools: []mcptest.Tool{plainTool("c")}}
	var mu sync.Mutex
	var reports []mcp.DiscoverProgress
	byServer := map[int][]mcp.DiscoverStage{}
	discover(t, []config.Server{
		{Name: "modern", URL: start(t, modern)},
		{Name: "legacy", URL: start(t, legacy)},
		{Name: "down", URL: closedURL(t)},
		{Name: "modern", URL: "http://127.0.0.1:1/mcp"}, // a duplicate name
	}, &mcp.ToolsetOptions{OnDiscover: func(p mcp.DiscoverProgress) {
		mu.Lock()
		defer mu.Unlock()
		reports = append(reports, p)
		byServer[p.Index] = append(byServer[p.Index], p.Stage)
	}})
	// Discover has returned: every report is in.
	mu.Lock()
	defer mu.Unlock()
	ready := []mcp.DiscoverStage{mcp.DiscoverConnecting, mcp.DiscoverListing, mcp.DiscoverReady}
	assert.Equal(t, ready, byServer[0])
	assert.Equal(t, ready, byServer[1])
	assert.Equal(t, []mcp.DiscoverStage{mcp.DiscoverConnecting, mcp.DiscoverSkipped}, byServer[2])
	assert.Equal(t, []mcp.DiscoverStage{mcp.DiscoverSkipped}, byServer[3], "the duplicate name")
	for _, p := range reports {
		switch {
		case p.Stage == mcp.DiscoverReady && p.Server == "modern":
			assert.Equal(t, 2, p.Tools)
			assert.Equal(t, mcp.EraModern, p.Era)
		case p.Stage == mcp.DiscoverReady && p.Server == "legacy":
			assert.Equal(t, 1, p.Tools)
			assert.Equal(t, mcptest.Legacy, p.ProtocolVersion)
		case p.Stage == mcp.DiscoverSkipped:
			assert.Error(t, p.Err, p.Server)
			assert.Empty(t, p.Era)
		default:
			assert.NoError(t, p.Err)
		}
	}
}

func TestDiscoverProgressOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var n int
	_, err := mcp.Discover(ctx, []config.Server{{Name: "down", URL: closedURL(t)}},
		&mcp.ToolsetOptions{OnDiscover: func(mcp.DiscoverProgress) { n++ }})
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 2, n, "connecting, then skipped")
}

// A start-up banner drawn as the servers answer.
func ExampleToolsetOptions_onDiscover() {
	servers := []config.Server{{Name: "notes", URL: "unix:///nonexistent/notes.sock"}}
	tools, err := mcp.Discover(context.Background(), servers, &mcp.ToolsetOptions{
		OnDiscover: func(p mcp.DiscoverProgress) {
			switch p.Stage {
			case mcp.DiscoverReady:
				fmt.Printf("%s: ready, %d tools\n", p.Server, p.Tools)
			case mcp.DiscoverSkipped:
				fmt.Printf("%s: skipped\n", p.Server)
			default:
				fmt.Printf("%s: %s\n", p.Server, p.Stage)
			}
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer tools.Close(context.Background())
	// Output:
	// notes: connecting
	// notes: skipped
}

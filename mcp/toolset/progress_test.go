package toolset_test

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
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

func TestDiscoverProgress(t *testing.T) {
	modern := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{mcptest.PlainTool("a"), mcptest.PlainTool("b")}}
	legacy := &mcptest.Server{Versions: []string{mcptest.Legacy}, Tools: []mcptest.Tool{mcptest.PlainTool("c")}}
	var mu sync.Mutex
	var reports []toolset.DiscoverProgress
	byServer := map[int][]toolset.DiscoverStage{}
	discover(t, []config.Server{
		{Name: "modern", URL: mcptest.Start(t, modern)},
		{Name: "legacy", URL: mcptest.Start(t, legacy)},
		{Name: "down", URL: mcptest.ClosedURL(t)},
		{Name: "modern", URL: "http://127.0.0.1:1/mcp"}, // a duplicate name
	}, &toolset.Options{OnDiscover: func(p toolset.DiscoverProgress) {
		mu.Lock()
		defer mu.Unlock()
		reports = append(reports, p)
		byServer[p.Index] = append(byServer[p.Index], p.Stage)
	}})
	// Discover has returned: every report is in.
	mu.Lock()
	defer mu.Unlock()
	ready := []toolset.DiscoverStage{toolset.DiscoverConnecting, toolset.DiscoverListing, toolset.DiscoverReady}
	assert.Equal(t, ready, byServer[0])
	assert.Equal(t, ready, byServer[1])
	assert.Equal(t, []toolset.DiscoverStage{toolset.DiscoverConnecting, toolset.DiscoverSkipped}, byServer[2])
	assert.Equal(t, []toolset.DiscoverStage{toolset.DiscoverSkipped}, byServer[3], "the duplicate name")
	for _, p := range reports {
		switch {
		case p.Stage == toolset.DiscoverReady && p.Server == "modern":
			assert.Equal(t, 2, p.Tools)
			assert.Equal(t, mcp.EraModern, p.Era)
		case p.Stage == toolset.DiscoverReady && p.Server == "legacy":
			assert.Equal(t, 1, p.Tools)
			assert.Equal(t, mcptest.Legacy, p.ProtocolVersion)
		case p.Stage == toolset.DiscoverSkipped:
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
	_, err := toolset.Discover(ctx, []config.Server{{Name: "down", URL: mcptest.ClosedURL(t)}},
		&toolset.Options{OnDiscover: func(toolset.DiscoverProgress) { n++ }})
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 2, n, "connecting, then skipped")
}

// A start-up banner drawn as the servers answer.
func ExampleOptions_onDiscover() {
	servers := []config.Server{{Name: "notes", URL: "unix:///nonexistent/notes.sock"}}
	tools, err := toolset.Discover(context.Background(), servers, &toolset.Options{
		OnDiscover: func(p toolset.DiscoverProgress) {
			switch p.Stage {
			case toolset.DiscoverReady:
				fmt.Printf("%s: ready, %d tools\n", p.Server, p.Tools)
			case toolset.DiscoverSkipped:
				fmt.Printf("%s: skipped\n", p.Server)
			default:
				fmt.Printf("%s: %s\n", p.Server, p.Stage)
			}
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer tools.Close()
	// Output:
	// notes: connecting
	// notes: skipped
}

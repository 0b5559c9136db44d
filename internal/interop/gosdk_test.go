package interop

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/mcp"
)

// TestGoSDK runs the interop scenario against the official Go SDK's
// Streamable HTTP server in each of its modes: stateless (the 2026-07-28
// revision) and stateful (the initialize-based revisions, with sessions),
// each with SSE or JSON responses.
func TestGoSDK(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts sdk.StreamableHTTPOptions
		// pin is the client's Options.ProtocolVersion ("" detects).
		pin     string
		era     mcp.Era
		version string
		// progress says progress notifications can reach the client:
		// not with JSON responses.
		progress bool
	}{
		{
			name: "stateless 2026-07-28 sse",
			opts: sdk.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true},
			era:  mcp.EraModern, version: mcp.Version20260728, progress: true,
		},
		{
			name: "stateless 2026-07-28 json",
			opts: sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true, PropagateRequestCancellation: true},
			era:  mcp.EraModern, version: mcp.Version20260728,
		},
		{
			name: "stateful legacy sse",
			era:  mcp.EraLegacy, version: mcp.Version20251125, progress: true,
		},
		{
			// An event store makes the server resumable: it primes each
			// SSE response with an event that has an id and no data.
			name: "stateful legacy sse resumable",
			opts: sdk.StreamableHTTPOptions{EventStore: sdk.NewMemoryEventStore(nil)},
			era:  mcp.EraLegacy, version: mcp.Version20251125, progress: true,
		},
		{
			name: "stateful legacy json pinned 2025-06-18",
			opts: sdk.StreamableHTTPOptions{JSONResponse: true},
			pin:  mcp.Version20250618,
			era:  mcp.EraLegacy, version: mcp.Version20250618,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := startGoSDK(t, &tc.opts)
			require.True(t, strings.HasPrefix(g.url, "http://127.0.0.1:"), "server url %s", g.url)
			log := newFeed[mcp.Progress](0)
			ctx, cancel := stepContext()
			defer cancel()
			c, err := mcp.Connect(ctx, &mcp.HTTPTransport{URL: g.url}, options(log, tc.pin))
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.Close() })
			assert.Equal(t, tc.era, c.Era())
			assert.Equal(t, tc.version, c.ProtocolVersion())

			s := gosdkScenario(g)
			if tc.progress {
				s.progressSteps = 3
			}
			run(t, c, log, s)
			checkSessionEnd(t, g, tc.era)
		})
	}
}

// gosdkScenario is what the server of startGoSDK offers.
func gosdkScenario(g *gosdkServer) scenario {
	return scenario{
		serverName: gosdkServerName,
		tools:      map[string]bool{"add": false, "echo": true, "fail": false, "slow": false},
		exactTools: true,
		calls: []toolCall{
			{name: "echo", args: map[string]any{"text": "héllo"}, want: "echo: héllo"},
			{name: "add", args: map[string]any{"a": 2, "b": 3.5}, want: `{"sum":5.5}`, structured: `{"sum":5.5}`},
			{name: "fail", args: map[string]any{}, want: "no such account", isError: true},
			// The SDK checks arguments against the schema it inferred.
			{name: "add", args: map[string]any{"a": "two"}, want: "/properties/a", isError: true},
			{name: "nope", want: "nope", rpcCode: mcp.CodeInvalidParams},
		},
		progress:        toolCall{name: "slow", args: slowArgs{Steps: 3, DelayMS: 10}, want: "done after 3 steps"},
		slow:            toolCall{name: "slow", args: slowArgs{Steps: 100, DelayMS: 100, Tag: "cancel"}},
		slowStep:        100 * time.Millisecond,
		slowStarted:     g.waitStarted("cancel"),
		serverCancelled: g.waitCancelled,
		prompt:          promptCall{name: "greet", args: map[string]string{"name": "Ada"}, want: "Say hi to Ada"},
		resource:        resourceRead{uri: "mem://interop/readme", want: "hello from the go-sdk"},
	}
}

// checkSessionEnd checks, after Close, that a legacy client deleted the
// session the server issued, and that a modern one had none to delete.
func checkSessionEnd(t *testing.T, g *gosdkServer, era mcp.Era) {
	var issued []string
	var deletes []seenRequest
	for _, r := range g.seen() {
		if r.issued != "" {
			issued = append(issued, r.issued)
		}
		if r.method == http.MethodDelete {
			deletes = append(deletes, r)
		}
	}
	if era == mcp.EraModern {
		assert.Empty(t, issued, "a stateless server issued a session")
		assert.Empty(t, deletes, "DELETE sent without a session")
		return
	}
	require.Len(t, issued, 1, "sessions issued")
	require.Len(t, deletes, 1, "DELETE requests")
	assert.Equal(t, issued[0], deletes[0].session, "DELETE of the wrong session")
	assert.Equal(t, 2, deletes[0].status/100, "DELETE status %d", deletes[0].status)

	// The session is gone: the server no longer knows it.
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, g.url,
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", issued[0])
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	http.DefaultClient.CloseIdleConnections()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "request on the deleted session")
}

//go:build unix

package mcp_test

import (
	"context"
	"encoding/json"
	"runtime"
	"testing"
	"time"

	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
)

// TestServerRequestFlood: a legacy stdio server that sends 5,000
// elicitation/create requests at once gets DefaultMaxServerRequests
// handlers running and an error answer for every other request, at once,
// while those handlers still wait for the user (issue 35 #4: 5,000
// goroutines).
func TestServerRequestFlood(t *testing.T) {
	bin := mcptest.BuildFinance(t)
	const n = 5000
	limit := mcp.DefaultMaxServerRequests
	b := newBlockingElicit(n)
	c := stdioConnect(t, finance(bin, "-era", "legacy", "-quiet"), &mcp.Options{Elicit: b.handle})
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	params := json.RawMessage(`{"message":"Name?","requestedSchema":{"type":"object","properties":{}}}`)
	res, err := c.CallTool(ctx, "flood_client", map[string]any{"method": "elicitation/create", "params": params, "n": n, "errors": n - limit})
	b.check(t, n, limit, res, err, runtime.NumGoroutine()-before)
}

//go:build unix

package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	release := make(chan struct{})
	entered := make(chan struct{}, n)
	var inflight, most atomic.Int32
	c := stdioConnect(t, finance(bin, "-era", "legacy", "-quiet"), &mcp.Options{Elicit: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		cur := inflight.Add(1)
		defer inflight.Add(-1)
		for m := most.Load(); cur > m && !most.CompareAndSwap(m, cur); m = most.Load() {
		}
		entered <- struct{}{}
		select {
		case <-release:
			return &mcp.ElicitResult{Action: "decline"}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}})
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	params := json.RawMessage(`{"message":"Name?","requestedSchema":{"type":"object","properties":{}}}`)
	res, err := c.CallTool(ctx, "flood_client", map[string]any{"method": "elicitation/create", "params": params, "n": n, "errors": n - limit})
	during := runtime.NumGoroutine()
	assert.LessOrEqual(t, int(most.Load()), limit, "handlers in flight at once")
	require.NoError(t, err, "the requests over the bound were not answered at once")
	assert.JSONEq(t, fmt.Sprintf(`{"errors":%d,"results":0}`, n-limit), res.Text(), "answered while the first handlers still wait")
	for range limit {
		<-entered // the handlers started, none of them done
	}
	assert.EqualValues(t, limit, most.Load())
	assert.Less(t, during-before, limit+32, "goroutines while the flood is answered")
	close(release)
	released = true
}

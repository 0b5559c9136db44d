package mcp_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
)

// Arguments made only of white space are refused with an error before
// anything is sent (they used to panic in CallTool).
func TestCallToolWhiteSpaceArguments(t *testing.T) {
	var calls atomic.Int64
	tool := mcptest.EchoTool()
	echo := tool.Call
	tool.Call = func(ctx context.Context, args json.RawMessage, send func(string, any)) (any, error) {
		calls.Add(1)
		return echo(ctx, args, send)
	}
	c := connect(t, mcptest.Start(t, &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{tool}}), nil)
	for _, args := range []any{json.RawMessage(" "), json.RawMessage("\t\r\n"), []byte("  ")} {
		res, err := c.CallTool(context.Background(), "echo", args)
		require.Error(t, err, "%q", args)
		assert.Nil(t, res)
		assert.Contains(t, err.Error(), "arguments must be a JSON object")
	}
	assert.Zero(t, calls.Load(), "a refused call reached the server")
	_, err := c.CallTool(context.Background(), "echo", json.RawMessage(` {"text":"ok"} `))
	require.NoError(t, err)
	assert.EqualValues(t, 1, calls.Load())
}

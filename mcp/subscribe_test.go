package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/internal/jsonrpc"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
)

func subscribableServer() *mcptest.Server {
	return &mcptest.Server{Versions: []string{mcptest.Modern}, Catalog: &mcptest.Catalog{Resources: []mcptest.Resource{{
		Def:      json.RawMessage(`{"uri":"file:///m.txt","name":"m"}`),
		Contents: json.RawMessage(`[{"uri":"file:///m.txt","text":"m"}]`),
	}}}}
}

// A change made right after SubscribeResource returns is told: it returns
// once the server acknowledged the stream.
func TestModernSubscribeWaitsForTheAcknowledgement(t *testing.T) {
	for i := range 20 {
		s := subscribableServer()
		updates := make(chan string, 1)
		c := connect(t, mcptest.Start(t, s), &mcp.Options{OnResourceUpdated: func(u mcp.ResourceUpdate) { updates <- u.URI }})
		require.NoError(t, c.SubscribeResource(context.Background(), "file:///m.txt"))
		require.Equal(t, 1, s.NotifyResourceUpdated("file:///m.txt"), "try %d: the stream is open once SubscribeResource returns", i)
		select {
		case u := <-updates:
			assert.Equal(t, "file:///m.txt", u)
		case <-time.After(5 * time.Second):
			t.Fatal("no update delivered")
		}
		require.NoError(t, c.SubscribeResource(context.Background(), "file:///m.txt"), "again: the same stream")
		assert.Equal(t, 1, s.Listeners())
	}
}

func TestModernSubscribeRefused(t *testing.T) {
	s := subscribableServer()
	s.Intercept = func(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) bool {
		if msg.Method != "subscriptions/listen" {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"no such resource"}}`, msg.ID)
		return true
	}
	c := connect(t, mcptest.Start(t, s), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := c.SubscribeResource(ctx, "file:///m.txt")
	var rpc *mcp.RPCError
	require.ErrorAs(t, err, &rpc)
	assert.Equal(t, mcp.CodeInvalidParams, rpc.Code)
}

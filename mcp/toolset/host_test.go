package toolset_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/internal/jsonrpc"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

// rootsServer is a 2026-07-28 server whose tool "where" asks for the
// client's roots (an input request), then returns the answer as its text.
func rootsServer(t *testing.T) string {
	t.Helper()
	s := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{mcptest.PlainTool("where")}}
	s.Intercept = func(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) bool {
		if msg.Method != "tools/call" {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		var p struct {
			InputResponses map[string]json.RawMessage `json:"inputResponses"`
		}
		_ = json.Unmarshal(msg.Params, &p)
		if p.InputResponses == nil {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"input_required","inputRequests":{"r":{"method":"roots/list","params":{}}}}}`, msg.ID)
			return true
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":%q}]}}`, msg.ID, string(p.InputResponses["r"]))
		return true
	}
	return mcptest.Start(t, s)
}

func TestToolsetRoots(t *testing.T) {
	ctx := context.Background()
	servers := []config.Server{
		{Name: "configured", URL: rootsServer(t), Roots: []string{"file:///home/me/site"}},
		{Name: "none", URL: rootsServer(t), Roots: []string{}},
		{Name: "unset", URL: rootsServer(t)},
	}
	host := func(context.Context) ([]mcp.Root, error) { return []mcp.Root{{URI: "file:///host"}}, nil }
	ts := discover(t, servers, &toolset.Options{Client: mcp.Options{Roots: host}})
	res, err := ts.Call(ctx, "configured_where", nil)
	require.NoError(t, err)
	assert.JSONEq(t, `{"roots":[{"uri":"file:///home/me/site","name":"site"}]}`, res.Text())
	_, err = ts.Call(ctx, "none_where", nil)
	require.ErrorIs(t, err, mcp.ErrInputRequired, "roots: [] offers no roots")
	res, err = ts.Call(ctx, "unset_where", nil)
	require.NoError(t, err)
	assert.JSONEq(t, `{"roots":[{"uri":"file:///host"}]}`, res.Text(), "nothing configured: Client.Roots")

	hooked := discover(t, servers, &toolset.Options{Client: mcp.Options{Roots: host},
		Roots: func(_ context.Context, server string) ([]mcp.Root, error) {
			return []mcp.Root{{URI: "file:///for/" + server}}, nil
		}})
	for _, name := range []string{"configured", "none", "unset"} {
		res, err := hooked.Call(ctx, name+"_where", nil)
		require.NoError(t, err, name)
		assert.JSONEq(t, fmt.Sprintf(`{"roots":[{"uri":"file:///for/%s"}]}`, name), res.Text(), "the hook decides")
	}
}

func TestToolsetProtocolVersionPin(t *testing.T) {
	both := &mcptest.Server{Versions: []string{mcptest.Modern, mcptest.Legacy}, Tools: []mcptest.Tool{mcptest.EchoTool()}}
	url := mcptest.Start(t, both)
	ts := discover(t, []config.Server{{Name: "detected", URL: url}, {Name: "pinned", URL: url, ProtocolVersion: mcp.Version20251125}}, nil)
	versions := map[string]string{}
	for _, s := range ts.Servers() {
		versions[s.Name] = s.ProtocolVersion
	}
	assert.Equal(t, map[string]string{"detected": mcp.Version20260728, "pinned": mcp.Version20251125}, versions)
}

func TestToolsetResourceFromAChosenServer(t *testing.T) {
	logs := func() *mcptest.Catalog {
		return &mcptest.Catalog{Templates: []json.RawMessage{json.RawMessage(`{"uriTemplate":"logs://{day}","name":"logs"}`)}}
	}
	a, b := logs(), logs()
	ts := discover(t, []config.Server{
		{Name: "a", URL: mcptest.Start(t, &mcptest.Server{Versions: []string{mcptest.Modern}, Catalog: a})},
		{Name: "b", URL: mcptest.Start(t, &mcptest.Server{Versions: []string{mcptest.Legacy}, Catalog: b})},
	}, nil)
	ctx := context.Background()
	res, err := ts.ReadResource(ctx, "logs://monday")
	require.NoError(t, err)
	assert.Equal(t, "a", res.Server, "the first matching server by default")
	res, err = ts.ReadResourceFrom(ctx, "b", "logs://tuesday")
	require.NoError(t, err)
	assert.Equal(t, "b", res.Server)
	assert.Equal(t, []string{"logs://monday"}, a.Reads())
	assert.Equal(t, []string{"logs://tuesday"}, b.Reads(), "read where the host chose")

	require.NoError(t, ts.SubscribeResourceOn(ctx, "b", "logs://tuesday"))
	assert.Equal(t, []string{"+logs://tuesday"}, b.Subscriptions())
	require.NoError(t, ts.UnsubscribeResourceOn(ctx, "b", "logs://tuesday"))
	assert.Equal(t, []string{"+logs://tuesday", "-logs://tuesday"}, b.Subscriptions())

	_, err = ts.ReadResourceFrom(ctx, "b", "notes://x")
	require.ErrorIs(t, err, toolset.ErrUnknownResource, "a URI the server does not serve is sent nowhere")
	_, err = ts.ReadResourceFrom(ctx, "c", "logs://x")
	require.ErrorIs(t, err, toolset.ErrUnknownServer)
	assert.Len(t, b.Reads(), 1)
}

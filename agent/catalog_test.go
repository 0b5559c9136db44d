package agent_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// chatFunc is a Model made of a function.
type chatFunc func(req *agent.ChatRequest) *agent.Reply

func (f chatFunc) Chat(_ context.Context, req *agent.ChatRequest, _ func(agent.Delta)) (*agent.Reply, error) {
	return f(req), nil
}

func defNames(req *agent.ChatRequest) []string {
	var out []string
	for _, d := range req.Tools {
		out = append(out, d.Name)
	}
	return out
}

// The Agent keeps its catalogue from one model call to the next, and
// still offers, at the next turn, the tools an MCP server announced with
// notifications/tools/list_changed during the turn.
func TestCatalogueFollowsListChanged(t *testing.T) {
	s := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{mcptest.EchoTool()}}
	url := mcptest.Start(t, s)
	changed := make(chan toolset.ToolsChange, 4)
	ts, err := toolset.Discover(context.Background(), []config.Server{{Name: "srv", URL: url}},
		&toolset.Options{OnChange: func(c toolset.ToolsChange) { changed <- c }})
	require.NoError(t, err)
	defer ts.Close()

	var seen [][]string
	call := agent.ToolCall{ID: "c1", Name: "srv_echo", Arguments: `{"text":"hi"}`}
	model := chatFunc(func(req *agent.ChatRequest) *agent.Reply {
		seen = append(seen, defNames(req))
		if len(seen) == 2 { // the second run's first call: the server's tools change meanwhile
			s.SetTools([]mcptest.Tool{mcptest.EchoTool(), mcptest.PlainTool("added")})
			require.Equal(t, 1, s.NotifyToolsChanged())
			select {
			case <-changed:
			case <-time.After(10 * time.Second):
				t.Error("the Toolset did not refresh its tools")
			}
			return &agent.Reply{Message: agent.Message{Role: agent.RoleAssistant, Parts: agent.Parts("", []agent.ToolCall{call}...)}, Finish: agent.FinishToolCalls}
		}
		return &agent.Reply{Message: agent.Message{Role: agent.RoleAssistant, Parts: agent.Parts("done")}, Finish: agent.FinishStop}
	})
	a := &agent.Agent{Model: model, Tools: ts, Policy: permission.NewPolicy(permission.AllowAll{}), ToolSearch: agent.ToolSearchOff}
	// The first run answers at once; the second calls a tool, during which
	// the list changes, then answers; the third answers at once.
	for range 3 {
		res, err := a.Run(context.Background(), []agent.Message{agent.UserMessage("x")})
		require.NoError(t, err)
		require.Equal(t, "done", res.Answer)
	}
	assert.Equal(t, [][]string{{"srv_echo"}, {"srv_echo"}, {"srv_echo", "srv_added"}, {"srv_echo", "srv_added"}}, seen)
}

// A source that changes a tool of the slice it returned, in place, is
// seen too: the catalogue compares against its own copy.
func TestCatalogueFollowsChangeInPlace(t *testing.T) {
	src := &fakeSource{tools: []toolset.Tool{{Name: "docs_search", Server: "docs",
		Tool: mcp.Tool{Name: "search", Description: "Searches", InputSchema: json.RawMessage(`{"type":"object"}`)}}}}
	var descs []string
	var params json.RawMessage
	model := chatFunc(func(req *agent.ChatRequest) *agent.Reply {
		descs, params = append(descs, req.Tools[0].Description), req.Tools[0].Parameters
		return &agent.Reply{Message: agent.Message{Role: agent.RoleAssistant, Parts: agent.Parts("done")}, Finish: agent.FinishStop}
	})
	a := &agent.Agent{Model: model, Tools: src, ToolSearch: agent.ToolSearchOff}
	for _, d := range []string{"Searches", "Searches the docs", "Searches the docs"} {
		src.tools[0].Tool.Description = d
		_, err := a.Run(context.Background(), []agent.Message{agent.UserMessage("x")})
		require.NoError(t, err)
	}
	src.tools[0].Tool.InputSchema = json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)
	_, err := a.Run(context.Background(), []agent.Message{agent.UserMessage("x")})
	require.NoError(t, err)
	assert.Equal(t, []string{"Searches", "Searches the docs", "Searches the docs", "Searches the docs"}, descs)
	assert.Contains(t, string(params), `"q"`, "the new schema is offered")
}

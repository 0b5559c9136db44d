package agent_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/openai/openaitest"
	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

// appServer offers a tool with an MCP App view and an app-only tool, as
// @modelcontextprotocol/server-system-monitor does. The Toolset keeps the
// app-only tool from its catalogue; the source returned offers it anyway,
// as a ToolSource that does not know MCP Apps would, so that the agent's
// own filter is what is tested.
func appServer(t *testing.T) (*mcptest.Server, *unfiltered) {
	t.Helper()
	ok := func(context.Context, map[string]any) (string, bool) { return "ok", false }
	s, srv := startMCP(t, "mon",
		mcpTool(`{"name":"get-info","description":"system information","inputSchema":{"type":"object"},"_meta":{"ui":{"resourceUri":"ui://mon/app.html"}}}`, ok),
		mcpTool(`{"name":"bad-view","description":"a tool whose view URI is not ui://","inputSchema":{"type":"object"},"_meta":{"ui":{"resourceUri":"https://evil.example/x"}}}`, ok),
	)
	poll := toolset.Tool{Name: "mon_poll-stats", Server: "mon", Tool: mcp.Tool{Name: "poll-stats", Description: "poll system stats",
		InputSchema: json.RawMessage(`{"type":"object"}`), Meta: json.RawMessage(`{"ui":{"visibility":["app"]}}`)}}
	return s, &unfiltered{ToolSource: discover(t, srv), extra: poll}
}

// unfiltered is a ToolSource that offers one more tool than its Toolset.
type unfiltered struct {
	agent.ToolSource
	extra toolset.Tool
	mu    sync.Mutex
	calls []string
}

func (u *unfiltered) Tools() []toolset.Tool { return append(u.ToolSource.Tools(), u.extra) }

func (u *unfiltered) Call(ctx context.Context, name string, args any) (*toolset.ToolResult, error) {
	u.mu.Lock()
	u.calls = append(u.calls, name)
	u.mu.Unlock()
	return u.ToolSource.Call(ctx, name, args)
}

// A tool whose visibility lacks "model" is never offered, and a call the
// model makes of it anyway is an unknown tool, never sent to the server.
func TestAppOnlyToolNeverOffered(t *testing.T) {
	s, ts := appServer(t)
	llm, model := startLLM(t,
		openaitest.Turn{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "mon_poll-stats", Arguments: `{}`}}},
		openaitest.Turn{ToolCalls: []openaitest.ToolCall{{ID: "c2", Name: "mon_get-info", Arguments: `{"detail":1}`}, {ID: "c3", Name: "mon_bad-view", Arguments: `{}`}}},
		openaitest.Turn{Text: "done"})
	var rec recorder
	res, err := (&agent.Agent{Model: model, Tools: ts, Policy: allowAll()}).RunStream(context.Background(), user("how is the system?"), rec.on)
	require.NoError(t, err)
	assert.Equal(t, "done", res.Answer)
	for i, r := range llm.Requests() {
		assert.ElementsMatch(t, []string{"mon_get-info", "mon_bad-view"}, toolNames(r), "request %d", i)
	}
	assert.NotContains(t, string(llm.Requests()[0].Body), "poll-stats", "nowhere in the first request")
	assert.Equal(t, agent.StatusUnknown, rec.results()["1.0"].Status)
	assert.ElementsMatch(t, []string{`get-info {"detail":1}`, "bad-view {}"}, toolCalls(s))
	assert.ElementsMatch(t, []string{"mon_get-info", "mon_bad-view"}, ts.calls, "the app-only tool is never called")

	var views []*agent.ToolView
	started, viewAt, ended := -1, -1, -1
	for i, e := range rec.events {
		switch e := e.(type) {
		case *agent.ToolStarted:
			if e.Call.ID == "c2" {
				started = i
			}
		case *agent.ToolView:
			views = append(views, e)
			viewAt = i
		case *agent.ToolFinished:
			if e.Call.ID == "c2" {
				ended = i
			}
		}
	}
	assert.True(t, started >= 0 && started < viewAt && viewAt < ended, "ToolStarted, ToolView, ToolFinished: %d %d %d", started, viewAt, ended)
	require.Len(t, views, 1, "one view: the bad URI gives none")
	assert.Equal(t, agent.ToolView{Turn: 2, Index: 0, Call: views[0].Call, Server: "mon", Tool: "get-info", ResourceURI: "ui://mon/app.html"}, *views[0])
	assert.Equal(t, "c2", views[0].Call.ID)
	assert.Contains(t, rec.warnings(), agent.WarnAppView)
}

// Tool search never finds an app-only tool either.
func TestAppOnlyToolNotSearchable(t *testing.T) {
	_, ts := appServer(t)
	llm, model := startLLM(t,
		openaitest.Turn{ToolCalls: []openaitest.ToolCall{{ID: "s1", Name: agent.ToolSearchTool, Arguments: `{"query":"poll system stats"}`}}},
		openaitest.Turn{Text: "done"})
	_, err := (&agent.Agent{Model: model, Tools: ts, Policy: allowAll(), ToolSearch: agent.ToolSearchOn}).Run(context.Background(), user("poll"))
	require.NoError(t, err)
	reqs := llm.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, []string{agent.ToolSearchTool}, toolNames(reqs[0]))
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	require.Equal(t, "tool", last.Role)
	assert.NotContains(t, last.Content, "poll-stats")
	assert.NotContains(t, toolNames(reqs[1]), "mon_poll-stats")
}

// What a view sends while the run goes on reaches the next model call:
// posted messages in order, then only the latest context of each view;
// what comes after the run stays in the Inbox.
func TestInbox(t *testing.T) {
	in := &agent.Inbox{}
	tool := mcpTool(`{"name":"get-info","inputSchema":{"type":"object"},"_meta":{"ui":{"resourceUri":"ui://mon/app.html"}}}`,
		func(context.Context, map[string]any) (string, bool) {
			// The view, started beside the call, speaks before it ends.
			in.Post(agent.Message{Role: agent.RoleUser, Parts: agent.Parts("from the view: show me the CPU"), Server: "mon"})
			in.SetContext("view-1", agent.UserMessage("selected: disk"))
			in.SetContext("view-1", agent.UserMessage("selected: cpu"))
			in.SetContext("view-2", agent.UserMessage("gone"))
			in.SetContext("view-2", agent.Message{Role: agent.RoleUser})
			return "ok", false
		})
	_, srv := startMCP(t, "mon", tool)
	ts := discover(t, srv)
	llm, model := startLLM(t,
		openaitest.Turn{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "mon_get-info", Arguments: `{}`}}},
		openaitest.Turn{Text: "CPU is fine"})
	res, err := (&agent.Agent{Model: model, Tools: ts, Policy: allowAll()}).Run(agent.WithInbox(context.Background(), in), user("status?"))
	require.NoError(t, err)
	reqs := llm.Requests()
	require.Len(t, reqs, 2)
	var tail []string
	for _, m := range reqs[1].Messages[len(reqs[1].Messages)-2:] {
		tail = append(tail, m.Role+": "+m.Content)
	}
	assert.Equal(t, []string{"user: from the view: show me the CPU", "user: selected: cpu"}, tail)
	assert.NotContains(t, string(reqs[1].Body), "selected: disk")
	assert.NotContains(t, string(reqs[1].Body), "gone")
	assert.Equal(t, "from the view: show me the CPU", res.Messages[len(res.Messages)-3].Text(), "kept in the conversation")
	assert.Empty(t, in.Take(), "taken by the run")

	in.Post(agent.UserMessage("late"))
	in.SetContext("view-1", agent.UserMessage("ctx"))
	late := in.Take()
	require.Len(t, late, 2)
	assert.Equal(t, "late", late[0].Text())
	assert.Equal(t, "ctx", late[1].Text())
	assert.Empty(t, in.Take())
}

// A local-only view's message taken from the Inbox counts as local-only
// content: the local model's reply after it is labelled local too, so a
// hosted model carrying the conversation on never reads it.
func TestInboxLocalOnlyLabelsLaterReplies(t *testing.T) {
	in := &agent.Inbox{}
	in.Post(agent.Message{Role: agent.RoleUser, Parts: agent.Parts("from the view: the diary says call Bob"), Server: "notes", Egress: config.EgressLocal})
	_, local := startLLM(t, openaitest.Turn{Text: "Call Bob."})
	res, err := (&agent.Agent{Model: local}).Run(agent.WithInbox(context.Background(), in), user("what now?"))
	require.NoError(t, err)
	require.Len(t, res.Messages, 3)
	assert.Equal(t, config.EgressLocal, res.Messages[1].Egress, "the view's message keeps its label")
	assert.Equal(t, config.EgressLocal, res.Messages[2].Egress, "the local model's reply after it is labelled too")
}

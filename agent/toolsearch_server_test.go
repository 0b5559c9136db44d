package agent_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/openai/openaitest"
	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// The built-in search_tools belongs to agent.BuiltinServer: in the approval
// request, the event and the frame of its output. A configuration whose
// servers are all auto does not ask for each search, and a host's policy
// rule for BuiltinServer does.
func TestToolSearchServer(t *testing.T) {
	_, srv := startMCP(t, "tracker", catalogueTools(60)...)
	srv.Permissions = permission.ModeAuto
	ts := discover(t, srv)
	cfg := &config.Config{Permissions: permission.ModeAsk, Servers: []config.Server{srv}}
	turns := func() []openaitest.Turn {
		return []openaitest.Turn{
			{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: agent.ToolSearchTool, Arguments: `{"query":"create issue","limit":1}`}}},
			{ToolCalls: []openaitest.ToolCall{{ID: "c2", Name: "tracker_create_issue", Arguments: `{"repo":"a","title":"bug"}`}}},
			{Text: "created"},
		}
	}
	for _, tc := range []struct {
		name  string
		opts  []permission.Option
		asked []string // servers the approver was asked about
	}{
		{"auto servers", nil, nil},
		{"a rule asks for built-ins", []permission.Option{permission.WithServerMode(agent.BuiltinServer, permission.ModeAsk)}, []string{agent.BuiltinServer}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, model := startLLM(t, turns()...)
			var mu sync.Mutex
			var asked []string
			approver := permission.ApproverFunc(func(_ context.Context, req permission.Request) (permission.Decision, error) {
				mu.Lock()
				asked = append(asked, req.Server)
				mu.Unlock()
				return permission.Decision{Verdict: permission.AllowOnce}, nil
			})
			var rec recorder
			res, err := (&agent.Agent{Model: model, Tools: ts, Policy: agent.PolicyFromConfig(cfg, approver, tc.opts...)}).RunStream(context.Background(), user("file a bug"), rec.on)
			require.NoError(t, err)
			assert.Equal(t, "created", res.Answer)
			mu.Lock()
			assert.Equal(t, tc.asked, asked)
			mu.Unlock()
			search := rec.results()["1.0"]
			assert.Equal(t, agent.StatusOK, search.Status)
			var proposed []string
			rec.mu.Lock()
			for _, e := range rec.events {
				if p, ok := e.(*agent.ToolCallProposed); ok {
					proposed = append(proposed, p.Server+" "+p.Tool)
				}
			}
			rec.mu.Unlock()
			assert.Equal(t, []string{agent.BuiltinServer + " search_tools", "tracker create_issue"}, proposed)
			for _, m := range res.Messages {
				if m.Role == agent.RoleTool && m.Name == agent.ToolSearchTool {
					assert.Equal(t, agent.BuiltinServer, m.Server, "the tool message names the server")
				}
			}
			assert.Contains(t, search.Sent, `<tool_output server="`+agent.BuiltinServer+`" tool="search_tools">`)
		})
	}
}

// A PinnedTools name that matches no tool is warned about, as a ToolChoice
// that names none fails the run.
func TestPinnedToolUnknown(t *testing.T) {
	_, srv := startMCP(t, "tracker", catalogueTools(60)...)
	ts := discover(t, srv)
	_, model := startLLM(t, openaitest.Turn{Text: "ok"})
	var rec recorder
	res, err := (&agent.Agent{Model: model, Tools: ts, Policy: allowAll(), PinnedTools: []string{"tracker_op_007", "tracker_nope"}}).RunStream(context.Background(), user("hi"), rec.on)
	require.NoError(t, err)
	require.Len(t, res.Warnings, 1)
	assert.Equal(t, agent.WarnPinnedTool, res.Warnings[0].Kind)
	assert.Contains(t, res.Warnings[0].Message, `"tracker_nope"`)
	assert.Equal(t, []agent.WarningKind{agent.WarnPinnedTool}, rec.warnings())
}

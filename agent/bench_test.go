package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// echoModel answers instantly: a call of echo first, then, once it sees the
// result, a final answer. It stands for the model, so that benchmarks
// measure the loop alone.
type echoModel struct{ tool string }

var (
	echoCall   = &agent.Reply{Message: agent.Message{Role: agent.RoleAssistant}, Finish: agent.FinishToolCalls}
	echoAnswer = &agent.Reply{Message: agent.Message{Role: agent.RoleAssistant, Parts: agent.Parts("done")}, Finish: agent.FinishStop}
)

func (m echoModel) Chat(_ context.Context, req *agent.ChatRequest, onDelta func(agent.Delta)) (*agent.Reply, error) {
	if req.Messages[len(req.Messages)-1].Role == agent.RoleTool {
		if onDelta != nil {
			onDelta(agent.Delta{Text: "done"})
		}
		return echoAnswer, nil
	}
	r := *echoCall
	r.Message.Parts = []agent.Part{agent.CallPart(agent.ToolCall{ID: "c1", Name: m.tool, Arguments: `{"text":"hello","count":3}`})}
	return &r, nil
}

type echoIn struct {
	Text  string `json:"text" jsonschema:"what to echo"`
	Count int    `json:"count,omitempty"`
}

func echo(_ context.Context, in echoIn) (string, error) { return in.Text, nil }

// BenchmarkTurn measures one tool-calling round of the loop (two model
// calls, one tool call, with validation, approval, events and framing)
// with a model and a tool that cost nothing, against a baseline that makes
// the same model and tool calls by hand.
func BenchmarkTurn(b *testing.B) {
	f, err := agent.NewFunc("echo", "Echoes text", echo)
	if err != nil {
		b.Fatal(err)
	}
	model := echoModel{tool: "echo"}
	msgs := user("say hello")
	b.Run("agent", func(b *testing.B) {
		a := &agent.Agent{Model: model, Funcs: []*agent.Func{f}, Policy: permission.NewPolicy(permission.AllowAll{})}
		events := 0
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			res, err := a.RunStream(context.Background(), msgs, func(agent.Event) { events++ })
			if err != nil || res.Answer != "done" {
				b.Fatal(res.Answer, err)
			}
		}
	})
	b.Run("baseline", func(b *testing.B) {
		ctx := context.Background()
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			req := &agent.ChatRequest{Messages: msgs}
			reply, _ := model.Chat(ctx, req, nil)
			var in echoIn
			if err := json.Unmarshal([]byte(reply.Message.Parts[0].Arguments), &in); err != nil {
				b.Fatal(err)
			}
			out, _ := echo(ctx, in)
			req.Messages = append(append(msgs[:1:1], reply.Message), agent.Message{Role: agent.RoleTool, Parts: []agent.Part{agent.ToolResultPart(out)}})
			if final, _ := model.Chat(ctx, req, nil); final.Message.Text() != "done" {
				b.Fatal(final)
			}
		}
	})
}

// BenchmarkTurnMCP is BenchmarkTurn with an MCP tool on a server on
// 127.0.0.1, against calling the same tool through the Toolset directly:
// the difference is the loop's cost on top of a real tool call.
func BenchmarkTurnMCP(b *testing.B) {
	def := `{"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"},"count":{"type":"integer"}},"required":["text"]}}`
	_, server := startMCP(b, "svc", mcpTool(def, func(_ context.Context, args map[string]any) (string, bool) {
		return args["text"].(string), false
	}))
	ts := discover(b, server)
	model := echoModel{tool: "svc_echo"}
	msgs := user("say hello")
	b.Run("agent", func(b *testing.B) {
		a := &agent.Agent{Model: model, Tools: ts, Policy: permission.NewPolicy(permission.AllowAll{})}
		for i := 0; i < b.N; i++ {
			res, err := a.Run(context.Background(), msgs)
			if err != nil || res.Answer != "done" {
				b.Fatal(res.Answer, err)
			}
		}
	})
	b.Run("direct", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := ts.Call(context.Background(), "svc_echo", json.RawMessage(`{"text":"hello","count":3}`)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkTurnCatalogue is BenchmarkTurn's agent over a source of 500
// MCP tools with tool search on (the tool called is pinned): the loop's
// cost with a large catalogue, kept from one model call to the next.
//
//	go test -run '^$' -bench TurnCatalogue -benchmem ./agent
func BenchmarkTurnCatalogue(b *testing.B) {
	src := &fakeSource{}
	for i := range 500 {
		src.tools = append(src.tools, toolset.Tool{Name: fmt.Sprintf("svc_tool%d", i), Server: "svc", Tool: mcp.Tool{Name: fmt.Sprintf("tool%d", i),
			Description: fmt.Sprintf("Does thing %d of the service, by id.", i), InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)}})
	}
	a := &agent.Agent{Model: echoModel{tool: "svc_tool7"}, Tools: src, Policy: permission.NewPolicy(permission.AllowAll{}),
		ToolSearch: agent.ToolSearchOn, PinnedTools: []string{"svc_tool7"}}
	msgs := user("say hello")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if res, err := a.Run(context.Background(), msgs); err != nil || res.Answer != "done" {
			b.Fatal(res.Answer, err)
		}
	}
}

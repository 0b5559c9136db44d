//go:build unix

package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/openai"
	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
	"git.rickub.com/bots-garden/mini-me/permission"
)

func TestLlamaCppErrors(t *testing.T) {
	base := startLlama(t, nil)

	t.Run("a schema the converter rejects", func(t *testing.T) {
		float := agent.ToolDef{Name: "scale", Parameters: json.RawMessage(`{"type":"object","properties":{"by":{"type":"float"}}}`)}
		for _, noStream := range []bool{false, true} {
			_, err := tiny(base, noStream).Chat(llamaCtx(t), hello(float), nil)
			var apiErr *openai.APIError
			require.ErrorAs(t, err, &apiErr, "noStream %v", noStream)
			assert.Equal(t, http.StatusBadRequest, apiErr.StatusCode)
			assert.Equal(t, "invalid_request_error", apiErr.Type)
			assert.Contains(t, apiErr.Message, "unrecognized type float")
		}

		// The agent shows the model a projection that maps the alias, and
		// validates the call against it.
		srv, tools := startTool(t, "calc", `{"name":"scale","description":"Scales","inputSchema":{"type":"object","properties":{"by":{"type":"float"}},"required":["by"]}}`)
		var warnings []string
		res, err := (&agent.Agent{Model: tiny(base, false), Tools: tools, Policy: permission.NewPolicy(permission.AllowAll{})}).
			RunStream(llamaCtx(t), []agent.Message{agent.UserMessage("scale")}, func(e agent.Event) {
				if w, ok := e.(*agent.Warning); ok {
					warnings = append(warnings, w.Message)
				}
			})
		require.NoError(t, err)
		assert.Equal(t, agent.StopAnswer, res.Stop, "the run ends with the model's answer (the tiny model's may be empty)")
		require.NotEmpty(t, srv.calls(), "the tool was called")
		assert.Contains(t, strings.Join(warnings, "\n"), `"float" → "number"`)
	})

	t.Run("a malformed request", func(t *testing.T) {
		// json_schema and grammar together: llama-server throws, and
		// answers 500. It is not sent again.
		var sent atomic.Int32
		m := tiny(base, false)
		m.HTTPClient = &http.Client{Transport: countingTransport{&sent}}
		m.Extra = map[string]any{"json_schema": map[string]any{"type": "object"}, "grammar": `root ::= "a"`}
		res, err := (&agent.Agent{Model: m}).Run(llamaCtx(t), []agent.Message{agent.UserMessage("hi")})
		var apiErr *openai.APIError
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, http.StatusInternalServerError, apiErr.StatusCode)
		assert.Equal(t, "server_error", apiErr.Type)
		assert.Equal(t, "Cannot use both json_schema and grammar", apiErr.Message)
		assert.Equal(t, agent.StopError, res.Stop)
		assert.Equal(t, int32(1), sent.Load())
	})

	t.Run("a prompt longer than the context", func(t *testing.T) {
		log := strings.Repeat("line of the log\n", 3000) // about 15,000 tokens; the context is 8,192
		_, err := tiny(base, false).Chat(llamaCtx(t), &agent.ChatRequest{Messages: []agent.Message{agent.UserMessage(log)}}, nil)
		require.ErrorIs(t, err, agent.ErrContextExceeded)
		var apiErr *openai.APIError
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, http.StatusBadRequest, apiErr.StatusCode)
		assert.Equal(t, 8192, apiErr.ContextSize)
		assert.Greater(t, apiErr.PromptTokens, apiErr.ContextSize)

		// The run has nothing to shorten: a typed error.
		res, err := (&agent.Agent{Model: tiny(base, false), ContextBudget: 32768}).Run(llamaCtx(t), []agent.Message{agent.UserMessage(log)})
		require.ErrorIs(t, err, agent.ErrContextExceeded)
		assert.ErrorContains(t, err, "no tool output left to shorten")
		assert.Equal(t, agent.StopError, res.Stop)

		// An old tool output is shortened and the request sent again. The
		// host's budget (32,768 estimated tokens) lets the first request
		// through whole.
		echo := echoFunc(t)
		msgs := []agent.Message{
			agent.UserMessage("read the log"),
			{Role: agent.RoleAssistant, Parts: agent.Parts("", []agent.ToolCall{{ID: "old", Name: "echo", Arguments: `{"text":"log"}`}}...)},
			{Role: agent.RoleTool, ToolCallID: "old", Name: "echo", Server: agent.FuncServer, Parts: []agent.Part{agent.ToolResultPart(log)}},
			agent.UserMessage("what failed?"),
		}
		var sent atomic.Int32
		m := tiny(base, false)
		m.HTTPClient = &http.Client{Transport: countingTransport{&sent}}
		res, err = (&agent.Agent{Model: m, Funcs: []*agent.Func{echo}, ContextBudget: 32768, MaxTurns: 1}).Run(llamaCtx(t), msgs)
		require.NoError(t, err)
		assert.NotEmpty(t, res.Answer, "the model read the shortened conversation")
		assert.Equal(t, int32(2), sent.Load())
		assert.Less(t, len(res.Messages[2].Text()), 2048)
		require.NotEmpty(t, res.Warnings)
		assert.Contains(t, res.Warnings[0].Message, "longer than the model's context")
	})

	t.Run("a call cut at the output limit", func(t *testing.T) {
		// Cut before the call's name is whole, llama-server withholds the
		// call from a stream and leaves "<tool_call>..." as text in a whole
		// answer; cut after, both have the partial arguments.
		for _, limit := range []int{10, 18} {
			for _, noStream := range []bool{false, true} {
				t.Run(fmt.Sprintf("max_tokens %d noStream %v", limit, noStream), func(t *testing.T) {
					m := tiny(base, noStream)
					m.MaxTokens = limit
					res, err := (&agent.Agent{Model: m, Funcs: []*agent.Func{echoFunc(t)}, MaxTurns: 1}).
						Run(llamaCtx(t), []agent.Message{agent.UserMessage("hi")})
					require.ErrorIs(t, err, agent.ErrMaxTurns)
					require.Len(t, res.Messages, 3)
					told := res.Messages[2]
					assert.Contains(t, told.Text(), "cut off at the output limit", "%+v", res.Messages[1])
					assert.NotContains(t, told.Text(), "Correct the arguments")
					require.NotEmpty(t, res.Warnings)
					assert.Equal(t, agent.WarnTruncatedAnswer, res.Warnings[0].Kind)
					assert.Contains(t, res.Warnings[0].Message, "in the middle of a tool call")
				})
			}
		}
	})
}

// countingTransport counts the requests it sends.
type countingTransport struct{ n *atomic.Int32 }

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

// echoFunc is a local tool that returns its text.
func echoFunc(t *testing.T) *agent.Func {
	t.Helper()
	type in struct {
		Text string `json:"text" jsonschema:"what to echo"`
	}
	f, err := agent.NewFunc("echo", "Echoes its text", func(_ context.Context, a in) (string, error) { return "echo: " + a.Text, nil })
	require.NoError(t, err)
	return f
}

// toolServer is an mcptest server with one tool that records its calls.
type toolServer struct {
	mu  sync.Mutex
	got []string
}

func (s *toolServer) calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.got...)
}

// startTool serves one MCP tool with definition def, answering "done: ARGS",
// and returns a Toolset connected to it, closed when the test ends.
func startTool(t *testing.T, server, def string) (*toolServer, *toolset.Toolset) {
	t.Helper()
	ts := &toolServer{}
	s := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{{
		Def: json.RawMessage(def),
		Call: func(_ context.Context, args json.RawMessage, _ func(string, any)) (any, error) {
			ts.mu.Lock()
			ts.got = append(ts.got, string(args))
			ts.mu.Unlock()
			return map[string]any{"content": []any{map[string]any{"type": "text", "text": "done: " + string(args)}}}, nil
		},
	}}}
	t.Cleanup(s.Close)
	set, err := toolset.Discover(context.Background(), []config.Server{{Name: server, URL: s.Start(), Permissions: permission.ModeAsk}}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, set.Close()) })
	require.Empty(t, set.Warnings())
	return ts, set
}

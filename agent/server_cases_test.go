package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/internal/llmtest"
)

// The cases below are those a real llama-server produces (see
// internal/interop's llama.cpp tests, which meet them for real).

// llamaContextError is llama-server's answer to a request longer than the
// context of its slot.
const llamaContextError = `{"error":{"code":400,"message":"request (9000 tokens) exceeds the available context size (2048 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":2048}}`

// echoFunc is a local tool that returns its text.
func echoFunc(t *testing.T) *agent.Func {
	t.Helper()
	type in struct {
		Text string `json:"text"`
	}
	f, err := agent.NewFunc("echo", "Echoes its text", func(_ context.Context, a in) (string, error) { return "echo: " + a.Text, nil })
	require.NoError(t, err)
	return f
}

// withOldOutput is a conversation that holds a tool output of size bytes,
// then a new question.
func withOldOutput(size int) []agent.Message {
	return []agent.Message{
		{Role: agent.RoleUser, Content: "read the log"},
		{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "old", Name: "echo", Arguments: `{"text":"log"}`}}},
		{Role: agent.RoleTool, ToolCallID: "old", Name: "echo", Server: agent.FuncServer, Content: strings.Repeat("line of the log\n", size/16)},
		{Role: agent.RoleUser, Content: "what failed?"},
	}
}

func TestRunContextExceeded(t *testing.T) {
	t.Run("shortened and sent again", func(t *testing.T) {
		llm, model := startLLM(t, llmtest.Turn{Status: 400, ErrorBody: llamaContextError}, llmtest.Turn{Text: "the disk"})
		var rec recorder
		res, err := (&agent.Agent{Model: model, Funcs: []*agent.Func{echoFunc(t)}}).RunStream(context.Background(), withOldOutput(30_000), rec.on)
		require.NoError(t, err)
		assert.Equal(t, "the disk", res.Answer)
		assert.Equal(t, 2, res.Turns, "two model calls")
		reqs := llm.Requests()
		require.Len(t, reqs, 2)
		assert.Len(t, reqs[0].Messages[3].Content, 30_000, "the first request holds the whole output")
		assert.Less(t, len(reqs[1].Messages[3].Content), 1500, "the second holds it shortened")
		assert.Contains(t, reqs[1].Messages[3].Content, "bytes of this output were cut")
		assert.Equal(t, []agent.WarningKind{agent.WarnContextBudget}, rec.warnings())
		assert.Contains(t, res.Warnings[0].Message, "longer than the model's context")
		for _, e := range rec.events {
			if tf, ok := e.(*agent.TurnFinished); ok {
				assert.Equal(t, 1, tf.Turn, "the retry is part of the turn")
			}
		}
		requireResumable(t, res.Messages)
	})
	t.Run("still too long", func(t *testing.T) {
		llm, model := startLLM(t, llmtest.Turn{Status: 400, ErrorBody: llamaContextError}, llmtest.Turn{Status: 400, ErrorBody: llamaContextError})
		res, err := (&agent.Agent{Model: model, Funcs: []*agent.Func{echoFunc(t)}}).Run(context.Background(), withOldOutput(30_000))
		require.ErrorIs(t, err, agent.ErrContextExceeded)
		assert.ErrorContains(t, err, "even with tool outputs shortened")
		var apiErr *agent.APIError
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, 9000, apiErr.PromptTokens)
		assert.Equal(t, 2048, apiErr.ContextSize)
		assert.Equal(t, agent.StopError, res.Stop)
		assert.Len(t, llm.Requests(), 2, "sent again once only")
		requireResumable(t, res.Messages)
	})
	t.Run("nothing to shorten", func(t *testing.T) {
		llm, model := startLLM(t, llmtest.Turn{Status: 400, ErrorBody: llamaContextError})
		res, err := (&agent.Agent{Model: model}).Run(context.Background(), user(strings.Repeat("long question ", 3000)))
		require.ErrorIs(t, err, agent.ErrContextExceeded)
		assert.ErrorContains(t, err, "no tool output left to shorten")
		assert.Equal(t, agent.StopError, res.Stop)
		assert.Len(t, llm.Requests(), 1, "not sent again")
	})
	t.Run("without the server's figures", func(t *testing.T) {
		openaiErr := `{"error":{"message":"This model's maximum context length is 8192 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`
		llm, model := startLLM(t, llmtest.Turn{Status: 400, ErrorBody: openaiErr}, llmtest.Turn{Text: "ok"})
		res, err := (&agent.Agent{Model: model, Funcs: []*agent.Func{echoFunc(t)}}).Run(context.Background(), withOldOutput(30_000))
		require.NoError(t, err)
		assert.Equal(t, "ok", res.Answer)
		assert.Less(t, len(llm.Requests()[1].Messages[3].Content), 1500)
	})
	t.Run("the lower budget holds for the rest of the run", func(t *testing.T) {
		llm, model := startLLM(t, llmtest.Turn{Status: 400, ErrorBody: llamaContextError},
			llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "echo", Arguments: `{"text":"` + strings.Repeat("x", 5000) + `"}`}}},
			llmtest.Turn{Text: "done"})
		res, err := (&agent.Agent{Model: model, Funcs: []*agent.Func{echoFunc(t)}, Policy: allowAll()}).Run(context.Background(), withOldOutput(30_000))
		require.NoError(t, err)
		assert.Equal(t, "done", res.Answer)
		last := llm.Requests()[2].Messages
		assert.Less(t, len(last[len(last)-1].Content), 1500, "the new output is shortened to the lower budget too")
	})
}

func TestRunServerError(t *testing.T) {
	// llama-server answers 500 to a request it cannot parse: not retried,
	// the run stops with the server's message.
	llm, model := startLLM(t, llmtest.Turn{Status: 500, ErrorBody: `{"error":{"code":500,"message":"[json.exception.type_error.302] type must be number, but is string","type":"server_error"}}`},
		llmtest.Turn{Text: "never"})
	res, err := (&agent.Agent{Model: model}).Run(context.Background(), user("x"))
	var apiErr *agent.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 500, apiErr.StatusCode)
	assert.Equal(t, "server_error", apiErr.Type)
	assert.Contains(t, apiErr.Message, "type must be number")
	assert.False(t, errors.Is(err, agent.ErrContextExceeded))
	assert.Equal(t, agent.StopError, res.Stop)
	assert.Len(t, llm.Requests(), 1)
}

func TestRunToolChoice(t *testing.T) {
	call := llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "echo", Arguments: `{"text":"a"}`}}}
	for _, tt := range []struct {
		choice agent.ToolChoice
		wire   string
	}{
		{agent.ToolChoiceRequired, `"required"`},
		{agent.ToolChoiceNone, `"none"`},
		{agent.ToolChoiceAuto, `"auto"`},
		{"echo", `{"type":"function","function":{"name":"echo"}}`},
	} {
		t.Run(string(tt.choice), func(t *testing.T) {
			llm, model := startLLM(t, call, llmtest.Turn{Text: "done"})
			_, err := (&agent.Agent{Model: model, Funcs: []*agent.Func{echoFunc(t)}, Policy: allowAll(), ToolChoice: tt.choice}).Run(context.Background(), user("x"))
			require.NoError(t, err)
			reqs := llm.Requests()
			require.Len(t, reqs, 2)
			assert.JSONEq(t, tt.wire, string(reqs[0].ToolChoice), "the first call")
			assert.Nil(t, reqs[1].ToolChoice, "later calls leave it to the model")
		})
	}
	t.Run("not sent without tools", func(t *testing.T) {
		llm, model := startLLM(t, llmtest.Turn{Text: "done"})
		_, err := (&agent.Agent{Model: model, ToolChoice: agent.ToolChoiceNone}).Run(context.Background(), user("x"))
		require.NoError(t, err)
		assert.Nil(t, llm.Requests()[0].ToolChoice)
		assert.NotContains(t, string(llm.Requests()[0].Body), "tool_choice")
	})
	t.Run("a tool not offered", func(t *testing.T) {
		llm, model := startLLM(t, llmtest.Turn{Text: "done"})
		res, err := (&agent.Agent{Model: model, Funcs: []*agent.Func{echoFunc(t)}, ToolChoice: "search"}).Run(context.Background(), user("x"))
		require.ErrorContains(t, err, `Agent.ToolChoice names tool "search", which is not offered`)
		assert.Equal(t, agent.StopError, res.Stop)
		assert.Empty(t, llm.Requests())
	})
}

func TestRunCallCutAtOutputLimit(t *testing.T) {
	for _, noStream := range []bool{false, true} {
		t.Run(map[bool]string{false: "streamed", true: "whole"}[noStream], func(t *testing.T) {
			llm, model := startLLM(t,
				llmtest.Turn{ToolCalls: []llmtest.ToolCall{
					{ID: "c1", Name: "echo", Arguments: `{"text":"a"}`},
					{ID: "c2", Name: "echo", Arguments: `{"text":"a long text that was cu`},
				}, Finish: "length"},
				llmtest.Turn{Text: "done"})
			model.NoStream = noStream
			var rec recorder
			res, err := (&agent.Agent{Model: model, Funcs: []*agent.Func{echoFunc(t)}, Policy: allowAll()}).RunStream(context.Background(), user("x"), rec.on)
			require.NoError(t, err)
			assert.Equal(t, "done", res.Answer)
			assert.Equal(t, agent.StatusOK, rec.results()["1.0"].Status, "the whole call runs")
			cut := rec.results()["1.1"]
			assert.Equal(t, agent.StatusInvalid, cut.Status)
			assert.Contains(t, cut.Sent, "cut off at the output limit")
			assert.Contains(t, cut.Sent, "shorter arguments")
			assert.NotContains(t, cut.Sent, "Correct the arguments")
			assert.Equal(t, []agent.WarningKind{agent.WarnTruncatedAnswer}, rec.warnings())
			assert.Contains(t, res.Warnings[0].Message, "in the middle of a tool call")
			assert.Contains(t, res.Warnings[0].Message, "raise the output limit")
			assert.Len(t, llm.Requests(), 2)
			requireResumable(t, res.Messages)
		})
	}
	t.Run("invalid arguments without the limit are the model's", func(t *testing.T) {
		_, model := startLLM(t, llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "echo", Arguments: `{"text":`}}}, llmtest.Turn{Text: "done"})
		var rec recorder
		_, err := (&agent.Agent{Model: model, Funcs: []*agent.Func{echoFunc(t)}, Policy: allowAll()}).RunStream(context.Background(), user("x"), rec.on)
		require.NoError(t, err)
		assert.Contains(t, rec.results()["1.0"].Sent, "Correct the arguments")
		assert.Empty(t, rec.warnings())
	})
}

func TestRunRawCallCutAtOutputLimit(t *testing.T) {
	// A whole answer cut inside a call: llama-server cannot parse it and
	// leaves its start in the text.
	raw := "<tool_call>\n{\"name\": \"echo\", \"arguments\": {\"text\": \"a long te"
	llm, model := startLLM(t,
		llmtest.Turn{Text: raw, Finish: "length"},
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "echo", Arguments: `{"text":"short"}`}}},
		llmtest.Turn{Text: "done"})
	var rec recorder
	res, err := (&agent.Agent{Model: model, Funcs: []*agent.Func{echoFunc(t)}, Policy: allowAll()}).RunStream(context.Background(), user("x"), rec.on)
	require.NoError(t, err)
	assert.Equal(t, "done", res.Answer)
	assert.Equal(t, []agent.Role{agent.RoleUser, agent.RoleAssistant, agent.RoleUser, agent.RoleAssistant, agent.RoleTool, agent.RoleAssistant}, roles(res.Messages))
	assert.Equal(t, raw, res.Messages[1].Content)
	assert.Contains(t, res.Messages[2].Content, "cut off at the output limit")
	assert.Equal(t, res.Messages[2].Content, llm.Requests()[1].Messages[3].Content, "the model reads it")
	assert.Equal(t, []agent.WarningKind{agent.WarnTruncatedAnswer}, rec.warnings())
	assert.Contains(t, res.Warnings[0].Message, "in the middle of a tool call")

	t.Run("streamed: the call's start is withheld", func(t *testing.T) {
		_, model := startLLM(t, llmtest.Turn{Finish: "length"}, llmtest.Turn{Text: "done"})
		res, err := (&agent.Agent{Model: model, Funcs: []*agent.Func{echoFunc(t)}}).Run(context.Background(), user("x"))
		require.NoError(t, err)
		assert.Equal(t, "done", res.Answer)
		assert.Contains(t, res.Messages[2].Content, "cut off at the output limit")
		assert.Contains(t, res.Warnings[0].Message, "in the middle of a tool call")
	})
	t.Run("without tools it is an answer", func(t *testing.T) {
		_, model := startLLM(t, llmtest.Turn{Text: raw, Finish: "length"})
		res, err := (&agent.Agent{Model: model}).Run(context.Background(), user("x"))
		require.NoError(t, err)
		assert.Equal(t, raw, res.Answer)
		require.Len(t, res.Warnings, 1)
		assert.Contains(t, res.Warnings[0].Message, "stopped at its output limit")
	})
}

func TestRunRawArgumentsAndIDs(t *testing.T) {
	// llama-server sends the model's argument text as it wrote it, and
	// call ids of random letters and digits.
	args := "{\n  \"text\" :\t\"hi\"\n}\n"
	llm, model := startLLM(t,
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "mS1CvPwKQ3zsN0x9aYqUe7LtVbHdRf2J", Name: "echo", Arguments: args}}},
		llmtest.Turn{Text: "done"})
	var rec recorder
	res, err := (&agent.Agent{Model: model, Funcs: []*agent.Func{echoFunc(t)}, Policy: allowAll()}).RunStream(context.Background(), user("x"), rec.on)
	require.NoError(t, err)
	assert.Equal(t, agent.StatusOK, rec.results()["1.0"].Status)
	assert.Contains(t, res.Messages[2].Content, "echo: hi")
	assert.Equal(t, "mS1CvPwKQ3zsN0x9aYqUe7LtVbHdRf2J", res.Messages[2].ToolCallID)
	assert.Equal(t, args, res.Messages[1].ToolCalls[0].Arguments, "kept as the model wrote them")
	sent := llm.Requests()[1].Messages
	assert.Equal(t, "mS1CvPwKQ3zsN0x9aYqUe7LtVbHdRf2J", sent[2].ToolCalls[0].ID)
	assert.Equal(t, "mS1CvPwKQ3zsN0x9aYqUe7LtVbHdRf2J", sent[3].ToolCallID)
}

func TestRunSchemaTypeAliases(t *testing.T) {
	// One tool whose schema says "float": llama-server rejects every
	// request that carries it as written.
	_, srv := startMCP(t, "calc", mcpTool(`{"name":"scale","inputSchema":{"type":"object","properties":{"by":{"type":"float"},"n":{"type":"int"}},"required":["by"]}}`,
		func(_ context.Context, args map[string]any) (string, bool) { return "scaled", false }))
	ts := discover(t, srv)
	llm, model := startLLM(t,
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "calc_scale", Arguments: `{"by":"two"}`}}},
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "c2", Name: "calc_scale", Arguments: `{"by":2.5,"n":3}`}}},
		llmtest.Turn{Text: "done"})
	var rec recorder
	_, err := (&agent.Agent{Model: model, Tools: ts, Policy: allowAll()}).RunStream(context.Background(), user("x"), rec.on)
	require.NoError(t, err)
	for _, r := range llm.Requests() {
		assert.JSONEq(t, `{"type":"object","properties":{"by":{"type":"number"},"n":{"type":"integer"}},"required":["by"]}`, string(r.Tools[0].Parameters))
	}
	assert.Equal(t, agent.StatusInvalid, rec.results()["1.0"].Status, "validated as a number")
	assert.Equal(t, agent.StatusOK, rec.results()["2.0"].Status)
	assert.Equal(t, []agent.WarningKind{agent.WarnSchema}, rec.warnings(), "warned once")
	w := rec.events[0].(*agent.Warning)
	assert.Contains(t, w.Message, `"float" → "number", "int" → "integer"`)
}

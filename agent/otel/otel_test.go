package otel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/openai"
	"git.rickub.com/bots-garden/mini-me/agent/openai/openaitest"
	"git.rickub.com/bots-garden/mini-me/agent/otel"
	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
	"git.rickub.com/bots-garden/mini-me/permission"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// weatherTool answers for any city, and fails (isError) for Atlantis.
func weatherTool() mcptest.Tool {
	return mcptest.Tool{
		Def: json.RawMessage(`{"name":"get_weather","inputSchema":{"type":"object","properties":{"city":{"type":"string"}}}}`),
		Call: func(_ context.Context, raw json.RawMessage, _ func(string, any)) (any, error) {
			var args struct{ City string }
			_ = json.Unmarshal(raw, &args)
			return map[string]any{"content": []any{map[string]any{"type": "text", "text": "sunny in " + args.City}},
				"isError": args.City == "Atlantis"}, nil
		},
	}
}

func attrMap(kvs []attribute.KeyValue) map[string]any {
	m := map[string]any{}
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.AsInterface()
	}
	return m
}

// One agent run with two tool calls: the span tree, the attributes, the
// trace context the server got, and the duration metric.
func TestAgentRun(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	hooks, err := otel.New(otel.Config{TracerProvider: tp, MeterProvider: mp})
	require.NoError(t, err)

	srv := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{weatherTool()}}
	url := srv.Start()
	t.Cleanup(srv.Close)
	ts, err := toolset.Discover(hooks.Context(context.Background()), []config.Server{{Name: "w", URL: url}}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ts.Close() })

	llm := &openaitest.Server{Turns: []openaitest.Turn{
		{ToolCalls: []openaitest.ToolCall{
			{ID: "c1", Name: "w_get_weather", Arguments: `{"city":"Paris"}`},
			{ID: "c2", Name: "w_get_weather", Arguments: `{"city":"Atlantis"}`},
		}, Usage: &openaitest.Usage{PromptTokens: 40, CompletionTokens: 9}},
		{Text: "Sunny in Paris; Atlantis is not found.", Usage: &openaitest.Usage{PromptTokens: 80, CompletionTokens: 7}},
	}}
	base := llm.Start()
	t.Cleanup(llm.Close)
	a := &agent.Agent{Model: &openai.Model{BaseURL: base, Model: "test-model"}, Tools: ts,
		Policy: permission.NewPolicy(permission.AllowAll{})}
	_, err = a.Run(hooks.Context(context.Background()), []agent.Message{agent.UserMessage("weather?")})
	require.NoError(t, err)

	byName := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range spans.Ended() {
		byName[s.Name()] = append(byName[s.Name()], s)
	}
	require.Len(t, byName["invoke_agent"], 1)
	require.Len(t, byName["chat test-model"], 2)
	require.Len(t, byName["execute_tool w_get_weather"], 2)
	require.Len(t, byName["tools/call get_weather"], 2)
	require.Len(t, byName["discover w"], 1)

	// Discovery: its own trace, its requests beneath.
	disc := byName["discover w"][0]
	assert.Equal(t, "ready", attrMap(disc.Attributes())["minime.discover.stage"])
	require.Len(t, byName["tools/list"], 1)
	assert.Equal(t, disc.SpanContext().SpanID(), byName["tools/list"][0].Parent().SpanID())

	// The run: invoke_agent is the root; chat and execute_tool beneath it;
	// each MCP call beneath its execute_tool.
	run := byName["invoke_agent"][0]
	assert.False(t, run.Parent().IsValid())
	assert.Equal(t, trace.SpanKindInternal, run.SpanKind())
	runAttrs := attrMap(run.Attributes())
	assert.Equal(t, "invoke_agent", runAttrs["gen_ai.operation.name"])
	assert.Equal(t, "test-model", runAttrs["gen_ai.request.model"])
	assert.Equal(t, int64(120), runAttrs["gen_ai.usage.input_tokens"])
	var approvals int
	for _, e := range run.Events() {
		if e.Name == "gen_ai.tool.approval" {
			approvals++
			assert.Equal(t, "allow once", attrMap(e.Attributes)["minime.approval"])
		}
	}
	assert.Equal(t, 2, approvals)

	for i, chat := range byName["chat test-model"] {
		assert.Equal(t, run.SpanContext().SpanID(), chat.Parent().SpanID())
		assert.Equal(t, trace.SpanKindClient, chat.SpanKind())
		at := attrMap(chat.Attributes())
		assert.Equal(t, "chat", at["gen_ai.operation.name"])
		assert.Equal(t, "test-model", at["gen_ai.request.model"])
		assert.Equal(t, "openai", at["gen_ai.provider.name"])
		assert.Equal(t, "127.0.0.1", at["server.address"])
		assert.Equal(t, []int64{40, 80}[i], at["gen_ai.usage.input_tokens"])
		assert.Equal(t, []int64{9, 7}[i], at["gen_ai.usage.output_tokens"])
		assert.Equal(t, [][]string{{"tool_calls"}, {"stop"}}[i], at["gen_ai.response.finish_reasons"])
	}

	exec := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, e := range byName["execute_tool w_get_weather"] {
		assert.Equal(t, run.SpanContext().SpanID(), e.Parent().SpanID())
		exec[e.SpanContext().SpanID()] = e
	}
	ids, parents := sentToolCalls(t, srv)
	require.Len(t, parents, 2)
	for _, call := range byName["tools/call get_weather"] {
		e, ok := exec[call.Parent().SpanID()]
		require.True(t, ok, "a tools/call span is the child of an execute_tool span")
		assert.Equal(t, run.SpanContext().TraceID(), call.SpanContext().TraceID())
		assert.Equal(t, trace.SpanKindClient, call.SpanKind())
		at, et := attrMap(call.Attributes()), attrMap(e.Attributes())
		assert.Equal(t, "tools/call", at["mcp.method.name"])
		assert.Equal(t, "execute_tool", at["gen_ai.operation.name"])
		assert.Equal(t, "get_weather", at["gen_ai.tool.name"])
		assert.Equal(t, mcp.Version20260728, at["mcp.protocol.version"])
		assert.Equal(t, "tcp", at["network.transport"])
		assert.Equal(t, "127.0.0.1", at["server.address"])
		assert.NotContains(t, at, "mcp.session.id", "no session in the stateless era")
		assert.Equal(t, "w_get_weather", et["gen_ai.tool.name"])
		assert.Equal(t, "extension", et["gen_ai.tool.type"])
		// The server got this span's trace context, under the JSON-RPC
		// id the span names.
		want := fmt.Sprintf("00-%s-%s-01", call.SpanContext().TraceID(), call.SpanContext().SpanID())
		assert.Equal(t, want, parents[at["jsonrpc.request.id"].(string)])
		if et["gen_ai.tool.call.id"] == "c2" {
			assert.Equal(t, "tool_error", at["error.type"])
			assert.Equal(t, codes.Error, call.Status().Code)
			assert.Equal(t, "tool-error", et["error.type"])
			assert.Equal(t, codes.Error, e.Status().Code)
		} else {
			assert.NotContains(t, at, "error.type")
			assert.Equal(t, codes.Unset, call.Status().Code)
		}
	}
	assert.Len(t, ids, 2)

	// The MCP duration histogram: seconds, the two calls by their error
	// type, no per-request attribute.
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	hist := findHistogram(t, rm, "mcp.client.operation.duration")
	var calls uint64
	for _, dp := range hist.DataPoints {
		m := attrMap(dp.Attributes.ToSlice())
		assert.NotContains(t, m, "jsonrpc.request.id")
		if m["mcp.method.name"] == "tools/call" {
			calls += dp.Count
			assert.Positive(t, dp.Sum)
		}
	}
	assert.Equal(t, uint64(2), calls)
	assert.NotEmpty(t, findHistogram(t, rm, "gen_ai.client.operation.duration").DataPoints)
}

// sentToolCalls returns the JSON-RPC ids of the tools/call requests the
// server got, and their traceparent by id.
func sentToolCalls(t *testing.T, s *mcptest.Server) (ids []string, parents map[string]string) {
	parents = map[string]string{}
	for _, r := range s.Requests() {
		if r.Method != "tools/call" {
			continue
		}
		var msg struct {
			ID     json.Number `json:"id"`
			Params struct {
				Meta struct {
					Traceparent string `json:"traceparent"`
				} `json:"_meta"`
			} `json:"params"`
		}
		require.NoError(t, json.Unmarshal(r.Body, &msg))
		ids = append(ids, msg.ID.String())
		parents[msg.ID.String()] = msg.Params.Meta.Traceparent
	}
	return ids, parents
}

func findHistogram(t *testing.T, rm metricdata.ResourceMetrics, name string) metricdata.Histogram[float64] {
	t.Helper()
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				assert.Equal(t, "s", m.Unit)
				h, ok := m.Data.(metricdata.Histogram[float64])
				require.True(t, ok, "%s is a float64 histogram", name)
				return h
			}
		}
	}
	t.Fatalf("no metric %s", name)
	return metricdata.Histogram[float64]{}
}

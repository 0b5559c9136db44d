// Tracing shows an agent run traced with OpenTelemetry, the spans printed
// to stdout as JSON, on a fresh machine:
//
//	cd examples/tracing && go run .
//
// It wires the adapter of the nested module agent/otel to the SDK's stdout
// exporter, starts the demo's two MCP servers on 127.0.0.1 (their
// discovery is traced too), and puts one question to a model. Each span is
// printed as it ends: "discover {server}" with the server's requests
// beneath (server/discover or initialize, tools/list), then invoke_agent,
// its chat {model} spans and its execute_tool {tool} spans, each with the
// MCP tools/call request beneath, whose traceparent the server received
// in params._meta. Last comes a summary of the mcp.client.operation.duration
// histogram, on stderr.
//
// Stdout holds the spans alone, so that it can be piped to jq
// (go run . | jq -r .Name); the answer, the summary and any diagnostic go
// to stderr.
//
// The model is found as in examples/quickstart (agent/modelenv: set
// MINIME_MODEL_URL and MINIME_MODEL, OPENAI_API_KEY, OLLAMA_HOST...).
// Without one, a stand-in model (standIn, below) plays the model's part:
// it calls text_count once, then answers with what the tool said, so that
// every kind of span still appears, its chat spans named "chat stand-in"
// as a real model's are "chat {model}" (it is an agent.DescribedModel).
// Every call is allowed: the demo's servers hold nothing of value.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"

	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/modelenv"
	"git.rickub.com/bots-garden/mini-me/agent/otel"
	"git.rickub.com/bots-garden/mini-me/examples/demo"
	"git.rickub.com/bots-garden/mini-me/permission"
)

const question = `How many words are there in "The quick brown fox jumps over the lazy dog"?`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout, os.Stderr, os.Getenv); err != nil {
		fmt.Fprintln(os.Stderr, "tracing:", err)
		os.Exit(1)
	}
}

// run writes the spans to stdout, and the rest to stderr.
func run(ctx context.Context, stdout, stderr io.Writer, getenv func(string) string) error {
	// Spans go to stdout as each ends; metrics stay in a reader that is
	// read once, at the end.
	exporter, err := stdouttrace.New(stdouttrace.WithWriter(stdout), stdouttrace.WithPrettyPrint())
	if err != nil {
		return err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter))
	defer func() { _ = tp.Shutdown(context.WithoutCancel(ctx)) }()
	metrics := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(metrics))
	defer func() { _ = mp.Shutdown(context.WithoutCancel(ctx)) }()

	// One Hooks serves every run: its Context carries the agent's hooks
	// and the MCP client's.
	hooks, err := otel.New(otel.Config{TracerProvider: tp, MeterProvider: mp})
	if err != nil {
		return err
	}
	ctx = hooks.Context(ctx)

	servers, err := demo.Discover(ctx)
	if err != nil {
		return err
	}
	defer servers.Close()

	var model agent.Model
	if m, err := modelenv.Find(ctx, getenv); err == nil {
		model = m
	} else {
		fmt.Fprintf(stderr, "No model (%v): a stand-in plays its part.\n\n", err)
		model = &standIn{}
	}
	a := &agent.Agent{Model: model, Tools: servers.Tools, Policy: agent.PolicyFromConfig(servers.Config, permission.AllowAll{})}
	res, err := a.Run(ctx, []agent.Message{agent.UserMessage(question)})
	if err != nil {
		return fmt.Errorf("the run stopped (%s): %w", res.Stop, err)
	}
	fmt.Fprintf(stderr, "\nanswer: %s\n", res.Answer)
	return summary(ctx, stderr, metrics)
}

// summary prints the count and total time of the MCP requests, by method,
// from the mcp.client.operation.duration histogram.
func summary(ctx context.Context, w io.Writer, r *sdkmetric.ManualReader) error {
	var rm metricdata.ResourceMetrics
	if err := r.Collect(ctx, &rm); err != nil {
		return err
	}
	type total struct {
		n   uint64
		sum float64
	}
	by := map[string]*total{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			h, ok := m.Data.(metricdata.Histogram[float64])
			if m.Name != "mcp.client.operation.duration" || !ok {
				continue
			}
			for _, dp := range h.DataPoints {
				method, _ := dp.Attributes.Value("mcp.method.name")
				t := by[method.AsString()]
				if t == nil {
					t = &total{}
					by[method.AsString()] = t
				}
				t.n += dp.Count
				t.sum += dp.Sum
			}
		}
	}
	methods := make([]string, 0, len(by))
	for m := range by {
		methods = append(methods, m)
	}
	sort.Strings(methods)
	fmt.Fprintln(w, "mcp.client.operation.duration:")
	for _, m := range methods {
		fmt.Fprintf(w, "  %-20s %d requests, %.1f ms in all\n", m, by[m].n, by[m].sum*1000)
	}
	return nil
}

// standIn is the model when there is none: it calls text_count on the
// question's sentence, then answers with the tool's output.
type standIn struct{}

// ModelInfo names the stand-in in the trace (agent.DescribedModel).
func (standIn) ModelInfo() agent.ModelInfo {
	return agent.ModelInfo{Name: "stand-in", Provider: "mini-me"}
}

func (standIn) Chat(_ context.Context, req *agent.ChatRequest, _ func(agent.Delta)) (*agent.Reply, error) {
	last := req.Messages[len(req.Messages)-1]
	if last.Role == agent.RoleTool {
		return &agent.Reply{Message: agent.Message{Role: agent.RoleAssistant, Parts: agent.Parts("The tool says: " + last.Text())},
			Finish: agent.FinishStop}, nil
	}
	args, _ := json.Marshal(map[string]string{"text": "The quick brown fox jumps over the lazy dog"})
	return &agent.Reply{Message: agent.Message{Role: agent.RoleAssistant,
		Parts: agent.Parts("", agent.ToolCall{ID: "call_1", Name: "text_count", Arguments: string(args)})}, Finish: agent.FinishToolCalls}, nil
}

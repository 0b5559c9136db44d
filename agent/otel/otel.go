// Package otel maps mini-me's trace hooks (agent.Trace, mcp.ClientTrace and
// toolset.Trace) to OpenTelemetry spans and metrics. It is a module of its own,
// so that the SDK never depends on OpenTelemetry.
//
// One run of an agent gives this tree of spans, named and attributed after
// the OpenTelemetry semantic conventions for generative AI and for MCP:
//
//	invoke_agent                      (internal)
//	├── chat {model}                  (client)  one per model call
//	└── execute_tool {tool}           (internal) one per tool call that runs
//	    └── tools/call {tool}         (client)  the MCP request
//
// and, for a Toolset discovered with the same context, a "discover
// {server}" span per server with its requests beneath. The policy's answer
// for each call is an event, gen_ai.tool.approval, on the invoke_agent
// span. Every MCP request carries its span's W3C trace context in
// params._meta (traceparent, tracestate), so that a server that reads it
// joins the trace.
//
// Metrics: mcp.client.operation.duration and
// gen_ai.client.operation.duration, histograms in seconds.
package otel

import (
	"context"
	"fmt"
	"log/slog"

	gotel "go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

// scope names this instrumentation to the providers.
const scope = "git.rickub.com/bots-garden/mini-me/agent/otel"

// Config says where spans and metrics go. The zero value uses the global
// providers (otel.GetTracerProvider, otel.GetMeterProvider) and the W3C
// trace context propagator.
type Config struct {
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	// Propagator writes the trace context sent to MCP servers; only its
	// traceparent and tracestate keys are sent.
	Propagator propagation.TextMapPropagator
}

// Hooks turns the trace hooks into spans and metrics. It is safe for
// concurrent use, and one Hooks serves any number of runs.
type Hooks struct {
	tracer      trace.Tracer
	prop        propagation.TextMapPropagator
	mcpDuration metric.Float64Histogram
	aiDuration  metric.Float64Histogram
	agent       *agent.Trace
	mcp         *mcp.ClientTrace
	discover    *toolset.Trace
}

// durationBuckets are the bucket bounds, in seconds, the semantic
// conventions advise for both duration histograms.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// New makes the Hooks for c.
func New(c Config) (*Hooks, error) {
	tp, mp, prop := c.TracerProvider, c.MeterProvider, c.Propagator
	if tp == nil {
		tp = gotel.GetTracerProvider()
	}
	if mp == nil {
		mp = gotel.GetMeterProvider()
	}
	if prop == nil {
		prop = propagation.TraceContext{}
	}
	meter := mp.Meter(scope)
	h := &Hooks{tracer: tp.Tracer(scope), prop: prop}
	var err error
	h.mcpDuration, err = meter.Float64Histogram("mcp.client.operation.duration", metric.WithUnit("s"),
		metric.WithDescription("The duration of the MCP request as observed on the sender, from the time it was sent until the response was received."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	if err != nil {
		return nil, fmt.Errorf("otel: %w", err)
	}
	h.aiDuration, err = meter.Float64Histogram("gen_ai.client.operation.duration", metric.WithUnit("s"),
		metric.WithDescription("GenAI operation duration."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	if err != nil {
		return nil, fmt.Errorf("otel: %w", err)
	}
	h.agent = h.agentTrace()
	h.mcp = h.mcpTrace()
	h.discover = h.discoverTrace()
	return h, nil
}

// Context returns ctx carrying h's agent.Trace, mcp.ClientTrace and
// toolset.Trace: give it to toolset.Discover, Agent.Run and the Client
// calls to trace.
func (h *Hooks) Context(ctx context.Context) context.Context {
	return toolset.WithTrace(mcp.WithTrace(agent.WithTrace(ctx, h.agent), h.mcp), h.discover)
}

// AgentTrace returns the agent hooks alone.
func (h *Hooks) AgentTrace() *agent.Trace { return h.agent }

// ClientTrace returns the MCP hooks alone.
func (h *Hooks) ClientTrace() *mcp.ClientTrace { return h.mcp }

// DiscoverTrace returns the discovery hooks alone.
func (h *Hooks) DiscoverTrace() *toolset.Trace { return h.discover }

func (h *Hooks) agentTrace() *agent.Trace {
	return &agent.Trace{
		RunStart: func(ctx context.Context, run *agent.RunInfo) context.Context {
			return h.start(ctx, "invoke_agent", trace.SpanKindInternal, run.Attributes())
		},
		RunDone: func(ctx context.Context, _ *agent.RunInfo, res *agent.Result, err error) {
			span := trace.SpanFromContext(ctx)
			span.SetAttributes(attrs(res.Usage.Attributes())...)
			span.SetAttributes(attribute.String("minime.stop", string(res.Stop)))
			if err != nil {
				fail(span, string(res.Stop), err)
			}
			span.End()
		},
		ModelStart: func(ctx context.Context, call *agent.ModelCall) context.Context {
			return h.start(ctx, call.SpanName(), trace.SpanKindClient, call.Attributes())
		},
		ModelDone: func(ctx context.Context, call *agent.ModelCall, res *agent.ModelResult) {
			end := attrs(res.Attributes())
			msg := ""
			if res.Err != nil {
				msg = res.Err.Error()
			}
			finish(ctx, end, msg)
			h.aiDuration.Record(ctx, res.Duration.Seconds(), metric.WithAttributes(append(attrs(call.Attributes()), errorOnly(end)...)...))
		},
		ToolDecided: func(ctx context.Context, call *agent.ToolCallInfo) {
			a := []attribute.KeyValue{attribute.String("gen_ai.tool.name", call.Call.Name),
				attribute.String("gen_ai.tool.call.id", call.Call.ID), attribute.String("minime.approval", call.Decision.Verdict.String())}
			if call.DecisionErr != nil {
				a = append(a, attribute.String("error.type", "approval_error"))
			}
			trace.SpanFromContext(ctx).AddEvent("gen_ai.tool.approval", trace.WithAttributes(a...))
		},
		ToolStart: func(ctx context.Context, call *agent.ToolCallInfo) context.Context {
			return h.start(ctx, call.SpanName(), trace.SpanKindInternal, call.Attributes())
		},
		ToolDone: func(ctx context.Context, _ *agent.ToolCallInfo, res *agent.ToolFinished) {
			span := trace.SpanFromContext(ctx)
			if kind := agent.ToolErrorType(res); kind != "" {
				fail(span, kind, res.Err)
			}
			span.End()
		},
	}
}

func (h *Hooks) mcpTrace() *mcp.ClientTrace {
	return &mcp.ClientTrace{
		RequestStart: func(ctx context.Context, req *mcp.RequestInfo) context.Context {
			return h.start(ctx, req.SpanName(), trace.SpanKindClient, req.Attributes())
		},
		RequestDone: func(ctx context.Context, req *mcp.RequestInfo, res *mcp.RequestResult) {
			end := attrs(res.Attributes())
			msg := res.ErrorType
			if res.Err != nil {
				msg = res.Err.Error()
			}
			finish(ctx, end, msg)
			h.mcpDuration.Record(ctx, res.Duration.Seconds(), metric.WithAttributes(append(metricAttrs(req.Attributes()), end...)...))
		},
		TraceContext: func(ctx context.Context) (string, string) {
			carrier := propagation.MapCarrier{}
			h.prop.Inject(ctx, carrier)
			return carrier.Get("traceparent"), carrier.Get("tracestate")
		},
	}
}

func (h *Hooks) discoverTrace() *toolset.Trace {
	return &toolset.Trace{
		DiscoverStart: func(ctx context.Context, server string) context.Context {
			ctx, _ = h.tracer.Start(ctx, "discover "+server, trace.WithSpanKind(trace.SpanKindInternal),
				trace.WithAttributes(attribute.String("minime.server", server)))
			return ctx
		},
		DiscoverDone: func(ctx context.Context, _ string, p *toolset.DiscoverProgress) {
			span := trace.SpanFromContext(ctx)
			span.SetAttributes(attribute.String("minime.discover.stage", string(p.Stage)), attribute.Int("minime.tools", p.Tools))
			if p.ProtocolVersion != "" {
				span.SetAttributes(attribute.String("mcp.protocol.version", p.ProtocolVersion))
			}
			if p.Err != nil {
				fail(span, "skipped", p.Err)
			}
			span.End()
		},
	}
}

// start starts a span of kind beneath ctx's, with a.
func (h *Hooks) start(ctx context.Context, name string, kind trace.SpanKind, a []slog.Attr) context.Context {
	ctx, _ = h.tracer.Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(attrs(a)...))
	return ctx
}

// finish sets end on ctx's span, marks it failed with msg when msg is not
// "", and ends it.
func finish(ctx context.Context, end []attribute.KeyValue, msg string) {
	span := trace.SpanFromContext(ctx)
	span.SetAttributes(end...)
	if msg != "" {
		span.SetStatus(codes.Error, msg)
	}
	span.End()
}

// fail marks span as failed: error.type (when kind is not ""), the status
// and the error's text.
func fail(span trace.Span, kind string, err error) {
	if kind != "" {
		span.SetAttributes(attribute.String("error.type", kind))
	}
	msg := kind
	if err != nil {
		msg = err.Error()
	}
	span.SetStatus(codes.Error, msg)
}

// attrs converts the core's attributes: strings, ints and string lists.
func attrs(in []slog.Attr) []attribute.KeyValue {
	out := make([]attribute.KeyValue, 0, len(in))
	for _, a := range in {
		switch a.Value.Kind() {
		case slog.KindString:
			out = append(out, attribute.String(a.Key, a.Value.String()))
		case slog.KindInt64:
			out = append(out, attribute.Int64(a.Key, a.Value.Int64()))
		default:
			if list, ok := a.Value.Any().([]string); ok {
				out = append(out, attribute.StringSlice(a.Key, list))
			} else {
				out = append(out, attribute.String(a.Key, a.Value.String()))
			}
		}
	}
	return out
}

// highCardinality are the request attributes left out of the metrics.
var highCardinality = map[attribute.Key]bool{"jsonrpc.request.id": true, "mcp.session.id": true, "mcp.resource.uri": true}

// metricAttrs are the request's attributes fit for a metric.
func metricAttrs(in []slog.Attr) []attribute.KeyValue {
	all := attrs(in)
	out := all[:0]
	for _, a := range all {
		if !highCardinality[a.Key] {
			out = append(out, a)
		}
	}
	return out
}

// errorOnly keeps error.type from a model call's end attributes: token
// counts are no metric dimension.
func errorOnly(in []attribute.KeyValue) []attribute.KeyValue {
	for _, a := range in {
		if a.Key == "error.type" {
			return []attribute.KeyValue{a}
		}
	}
	return nil
}

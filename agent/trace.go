package agent

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"git.rickub.com/bots-garden/mini-me/permission"
)

// Trace is a set of hooks that watch an agent run, in the manner of
// net/http/httptrace and of [mcp.ClientTrace], which watches the MCP
// requests beneath: attach one with [WithTrace] to the context given to
// [Agent.Run], [Agent.RunStream] or [RunTyped]. The package never depends
// on a tracing system; the nested module agent/otel maps both traces to
// OpenTelemetry spans (invoke_agent, chat, execute_tool, and the MCP
// client spans beneath) and metrics.
//
// Every field may be nil. Hooks run synchronously, on the goroutine of the
// run (tool calls run in parallel may call ToolStart and ToolDone at the
// same time), while the run waits: they must be fast and must not block.
// What they are given is read-only and must not be kept once the matching
// Done hook returns.
//
// A Start hook returns the context the step carries from then on (the
// model and the tool get it) and that the matching Done hook gets;
// returning nil keeps the context unchanged. Done is called once for
// every Start, whatever the outcome.
//
// # Tracing
//
// A [Trace] attached with [WithTrace] to the context given to Run is
// called at the start and end of the run, of each model call and of each
// tool call, and with each approval; an [mcp.ClientTrace] on the same
// context sees the MCP requests beneath. The nested module agent/otel
// turns both into OpenTelemetry spans and metrics.
type Trace struct {
	// RunStart and RunDone frame the whole run.
	RunStart func(ctx context.Context, run *RunInfo) context.Context
	RunDone  func(ctx context.Context, run *RunInfo, res *Result, err error)
	// ModelStart and ModelDone frame each call of Model.Chat: one per
	// turn, and a second one in a turn whose request was too long for the
	// model's context.
	ModelStart func(ctx context.Context, call *ModelCall) context.Context
	ModelDone  func(ctx context.Context, call *ModelCall, res *ModelResult)
	// ToolDecided is told the permission policy's answer for each valid
	// call the model made: call.Decision and call.DecisionErr.
	ToolDecided func(ctx context.Context, call *ToolCallInfo)
	// ToolStart and ToolDone frame each tool call that runs, which the
	// policy allowed; res is the ToolFinished event of the call.
	ToolStart func(ctx context.Context, call *ToolCallInfo) context.Context
	ToolDone  func(ctx context.Context, call *ToolCallInfo, res *ToolFinished)
}

type traceKey struct{}

// WithTrace returns a context carrying t, for a run to report to.
func WithTrace(ctx context.Context, t *Trace) context.Context {
	return context.WithValue(ctx, traceKey{}, t)
}

// ContextTrace returns the trace ctx carries, or nil.
func ContextTrace(ctx context.Context) *Trace {
	t, _ := ctx.Value(traceKey{}).(*Trace)
	return t
}

// RunInfo describes a run, for the trace hooks.
type RunInfo struct {
	// Model describes the Agent's model.
	Model ModelInfo
	// Messages is how many messages the run was given.
	Messages int
}

// Attributes returns the run's attributes, named after the OpenTelemetry
// semantic conventions for generative AI: gen_ai.operation.name
// (invoke_agent), gen_ai.request.model and gen_ai.provider.name.
func (r *RunInfo) Attributes() []slog.Attr {
	return r.Model.attributes("invoke_agent", false)
}

// ModelCall describes one call of Model.Chat.
type ModelCall struct {
	// Turn is the turn's number, counting from 1.
	Turn int
	// Model describes the model.
	Model ModelInfo
	// Messages and Tools count what the request holds.
	Messages, Tools int
}

// SpanName is "chat" and the model's name, as the semantic conventions
// name a chat span.
func (m *ModelCall) SpanName() string {
	if m.Model.Name == "" {
		return "chat"
	}
	return "chat " + m.Model.Name
}

// Attributes returns gen_ai.operation.name (chat), gen_ai.provider.name,
// gen_ai.request.model, server.address and server.port.
func (m *ModelCall) Attributes() []slog.Attr {
	return m.Model.attributes("chat", true)
}

// ModelResult is how a model call ended: a Reply, or an error.
type ModelResult struct {
	Reply    *Reply
	Err      error
	Duration time.Duration
}

// Attributes returns the reply's usage (see Usage.Attributes),
// gen_ai.response.finish_reasons (a []string) and, when the reply names
// the model that answered (Reply.Model), gen_ai.response.model for a
// reply; error.type for an error: "context_exceeded", the StatusCode of a
// [*ModelError], "timeout", "canceled" or "_OTHER".
func (m *ModelResult) Attributes() []slog.Attr {
	if m.Err != nil {
		return []slog.Attr{slog.String("error.type", modelErrorType(m.Err))}
	}
	if m.Reply == nil {
		return nil
	}
	a := append(m.Reply.Usage.Attributes(),
		slog.Any("gen_ai.response.finish_reasons", []string{string(m.Reply.Finish)}))
	if m.Reply.Model != "" {
		a = append(a, slog.String("gen_ai.response.model", m.Reply.Model))
	}
	return a
}

// Attributes returns gen_ai.usage.input_tokens and output_tokens, and,
// when not zero, gen_ai.usage.cache_read.input_tokens,
// cache_creation.input_tokens and reasoning.output_tokens, as the
// OpenTelemetry GenAI conventions name them.
func (u Usage) Attributes() []slog.Attr {
	attrs := make([]slog.Attr, 2, 6)
	attrs[0] = slog.Int("gen_ai.usage.input_tokens", u.PromptTokens)
	attrs[1] = slog.Int("gen_ai.usage.output_tokens", u.CompletionTokens)
	for _, a := range []struct {
		key string
		n   int
	}{
		{"gen_ai.usage.cache_read.input_tokens", u.CacheReadTokens},
		{"gen_ai.usage.cache_creation.input_tokens", u.CacheWriteTokens},
		{"gen_ai.usage.reasoning.output_tokens", u.ReasoningTokens},
	} {
		if a.n != 0 {
			attrs = append(attrs, slog.Int(a.key, a.n))
		}
	}
	return attrs
}

func modelErrorType(err error) string {
	var me *ModelError
	switch {
	case errors.Is(err, ErrContextExceeded):
		return "context_exceeded"
	case errors.As(err, &me) && me.StatusCode > 0:
		return strconv.Itoa(me.StatusCode)
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return "_OTHER"
}

// ToolCallInfo describes one tool call the model made.
type ToolCallInfo struct {
	// Turn and Index place the call: its turn, counting from 1, and its
	// position in the turn, from 0.
	Turn, Index int
	// Call is the call as the model sent it: ID, Name, Arguments.
	Call ToolCall
	// Server and Tool are the MCP server and its name for the tool; ""
	// for a Func and the agent's own tools.
	Server, Tool string
	// Decision is the permission policy's answer, DecisionErr the error
	// that kept it from answering (the call is then not run).
	Decision    permission.Decision
	DecisionErr error
}

// SpanName is "execute_tool" and the tool's name.
func (c *ToolCallInfo) SpanName() string { return "execute_tool " + c.Call.Name }

// Attributes returns gen_ai.operation.name (execute_tool),
// gen_ai.tool.name (the name the model called), gen_ai.tool.call.id,
// gen_ai.tool.type (extension for an MCP tool, function otherwise), and
// minime.approval, the policy's verdict ("allow once", "deny"...).
func (c *ToolCallInfo) Attributes() []slog.Attr {
	kind := "function"
	if c.Server != "" && c.Server != FuncServer && c.Server != BuiltinServer {
		kind = "extension"
	}
	return []slog.Attr{
		slog.String("gen_ai.operation.name", "execute_tool"),
		slog.String("gen_ai.tool.name", c.Call.Name),
		slog.String("gen_ai.tool.call.id", c.Call.ID),
		slog.String("gen_ai.tool.type", kind),
		slog.String("minime.approval", c.Decision.Verdict.String()),
	}
}

// ToolErrorType is error.type for a tool call that did not end well: its
// status ("tool-error", "failed", "canceled"...), "" for StatusOK.
func ToolErrorType(res *ToolFinished) string {
	if res.Status == StatusOK {
		return ""
	}
	return string(res.Status)
}

// ModelInfo is what the agent knows of its model: the model name, the
// provider and the server, as a [DescribedModel] says of itself; empty
// for another Model.
type ModelInfo struct {
	Name, Provider string
	Address        string
	Port           int
}

func (m *ModelInfo) attributes(op string, server bool) []slog.Attr {
	a := []slog.Attr{slog.String("gen_ai.operation.name", op)}
	if m.Provider != "" {
		a = append(a, slog.String("gen_ai.provider.name", m.Provider))
	}
	if m.Name != "" {
		a = append(a, slog.String("gen_ai.request.model", m.Name))
	}
	if server && m.Address != "" {
		a = append(a, slog.String("server.address", m.Address))
		if m.Port > 0 {
			a = append(a, slog.Int("server.port", m.Port))
		}
	}
	return a
}

// DescribedModel is a Model that says what it is, for the trace hooks: a
// chat span is named "chat" and ModelInfo.Name, and its attributes come
// from the ModelInfo. The openai driver describes itself from its fields.
type DescribedModel interface {
	Model
	// ModelInfo describes the model; it is called at each model call and
	// must be cheap.
	ModelInfo() ModelInfo
}

func modelInfo(m Model) ModelInfo {
	if d, ok := m.(DescribedModel); ok {
		return d.ModelInfo()
	}
	return ModelInfo{}
}

// traceRun reports the start of r to the trace of ctx, if any, and returns
// the context the run goes on with and the func that reports its end.
func (r *run) traceRun(ctx context.Context, given int) (context.Context, func(error)) {
	t := ContextTrace(ctx)
	if t == nil {
		return ctx, func(error) {}
	}
	r.trace = t
	info := &RunInfo{Model: modelInfo(r.a.Model), Messages: given}
	if t.RunStart != nil {
		ctx = keep(ctx, t.RunStart(ctx, info))
	}
	return ctx, func(err error) {
		if t.RunDone != nil {
			t.RunDone(ctx, info, &r.result, err)
		}
	}
}

// chatModel calls the model, reporting the call to the run's trace.
func (r *run) chatModel(ctx context.Context, req *ChatRequest, onDelta func(Delta)) (*Reply, error) {
	t := r.trace
	if t == nil || t.ModelStart == nil && t.ModelDone == nil {
		return r.a.Model.Chat(ctx, req, onDelta)
	}
	call := &ModelCall{Turn: r.turn, Model: modelInfo(r.a.Model), Messages: len(req.Messages), Tools: len(req.Tools)}
	if t.ModelStart != nil {
		ctx = keep(ctx, t.ModelStart(ctx, call))
	}
	start := time.Now()
	reply, err := r.a.Model.Chat(ctx, req, onDelta)
	if t.ModelDone != nil {
		t.ModelDone(ctx, call, &ModelResult{Reply: reply, Err: err, Duration: time.Since(start)})
	}
	return reply, err
}

// answeredBy names the model that produced reply.
func (r *run) answeredBy(reply *Reply) string {
	if reply.Model != "" {
		return reply.Model
	}
	if d, ok := r.a.Model.(DescribedModel); ok {
		return d.ModelInfo().Name
	}
	return ""
}

// toolInfo describes c, for the trace hooks.
func toolInfo(c *call) *ToolCallInfo {
	info := &ToolCallInfo{Turn: c.turn, Index: c.index, Call: c.sent}
	if c.tool != nil && c.tool.fn == nil {
		info.Server, info.Tool = c.tool.server, c.tool.original
	}
	return info
}

// traceDecided reports the policy's answer for c.
func (r *run) traceDecided(ctx context.Context, c *call, d permission.Decision, err error) {
	if r.trace == nil {
		return
	}
	c.trace = toolInfo(c)
	c.trace.Decision, c.trace.DecisionErr = d, err
	if r.trace.ToolDecided != nil {
		r.trace.ToolDecided(ctx, c.trace)
	}
}

// traceTool reports the start of c's execution and returns the context
// the call runs with and the func that reports its end.
func (r *run) traceTool(ctx context.Context, c *call) (context.Context, func()) {
	t := r.trace
	if t == nil {
		return ctx, func() {}
	}
	if c.trace == nil {
		c.trace = toolInfo(c)
	}
	if t.ToolStart != nil {
		ctx = keep(ctx, t.ToolStart(ctx, c.trace))
	}
	return ctx, func() {
		if t.ToolDone != nil {
			t.ToolDone(ctx, c.trace, &c.result)
		}
	}
}

// keep returns next, or ctx when a hook returned nil.
func keep(ctx, next context.Context) context.Context {
	if next == nil {
		return ctx
	}
	return next
}

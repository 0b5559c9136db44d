package temporal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

// This file holds the agent's workflow-safe parts: a context.Context that
// carries the workflow's, and the Model, ToolSource and Runtime whose
// calls are activities and workflow APIs.

// wfKey is the context key of the workflow.Context.
type wfKey struct{}

// runContext is the context.Context the agent runs with: its Err is the
// workflow context's (context.Canceled once that is cancelled), its
// Done nil (the agent polls Err; the activities see cancellation through
// Temporal), and it carries the workflow context for the agent's parts.
func runContext(w workflow.Context) context.Context { return wfContext{w: w} }

type wfContext struct{ w workflow.Context }

func (wfContext) Deadline() (time.Time, bool) { return time.Time{}, false }
func (wfContext) Done() <-chan struct{}       { return nil }
func (c wfContext) Err() error {
	if c.w.Err() != nil {
		return context.Canceled
	}
	return nil
}
func (c wfContext) Value(key any) any {
	if key == (wfKey{}) {
		return c.w
	}
	return nil
}

// workflowOf returns the workflow context ctx carries.
func workflowOf(ctx context.Context) workflow.Context {
	return ctx.Value(wfKey{}).(workflow.Context)
}

// runtime is the agent.Runtime of a run: coroutines, the workflow's
// clock, IDs derived from the run's.
type runtime struct{ d *driver }

func (rt *runtime) Parallel(ctx context.Context, limit int, fns []func(context.Context)) {
	w := workflowOf(ctx)
	slots := workflow.NewSemaphore(w, int64(limit))
	wg := workflow.NewWaitGroup(w)
	for _, fn := range fns {
		wg.Add(1)
		workflow.Go(w, func(g workflow.Context) {
			defer wg.Done()
			if slots.Acquire(g, 1) == nil { // else cancelled: fn sees it
				defer slots.Release(1)
			}
			fn(context.WithValue(ctx, wfKey{}, g))
		})
	}
	wg.Wait(w)
}

func (rt *runtime) Now() time.Time { return workflow.Now(rt.d.run) }

// NewID derives the n-th ID of the run from its run ID, which Temporal
// drew at random: the same on every replay, unique to the run.
func (rt *runtime) NewID() string {
	rt.d.ids++
	sum := sha256.Sum256(fmt.Appendf(nil, "%s/%d", workflow.GetInfo(rt.d.run).WorkflowExecution.RunID, rt.d.ids))
	return hex.EncodeToString(sum[:16])
}

// model is the agent.Model of a run: each call the Chat activity.
type model struct{ d *driver }

// Capabilities reports what the worker's Catalog said of its Model as
// Local; the replies come whole.
func (m *model) Capabilities() agent.Capabilities {
	return agent.Capabilities{Local: m.d.localModel}
}

// Chat calls the Chat activity; the reply comes whole (no deltas).
func (m *model) Chat(ctx context.Context, req *agent.ChatRequest, _ func(agent.Delta)) (*agent.Reply, error) {
	w := workflowOf(ctx)
	t := m.d.timeouts
	opts := workflow.ActivityOptions{StartToCloseTimeout: t.Model, HeartbeatTimeout: t.Heartbeat,
		RetryPolicy: retryPolicy(t.ModelAttempts), WaitForCancellation: true}
	var reply agent.Reply
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(w, opts), chatActivity, req).Get(w, &reply)
	if err != nil {
		return nil, modelError(err)
	}
	return &reply, nil
}

// modelError turns the Chat activity's error back into the model's: the
// *agent.ModelError of the same kind when the model's error was one.
func modelError(err error) error {
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.Type() == modelErrorType {
		var e modelFailure
		if app.Details(&e) == nil && modelKinds[e.Kind].kind != nil {
			return &agent.ModelError{Kind: modelKinds[e.Kind].kind, StatusCode: e.StatusCode, RetryAfter: e.RetryAfter,
				PromptTokens: e.PromptTokens, ContextSize: e.ContextSize, Err: errors.New(e.Message)}
		}
	}
	return fmt.Errorf("agent/temporal: model call: %w", err)
}

// tools is the agent.ToolSource of a run: the catalogue the Catalog
// activity read, each call the CallTool activity.
type tools struct{ d *driver }

func (ts *tools) Tools() []toolset.Tool { return ts.d.tools }

// Call runs the CallTool activity. A call interrupted by the loss of its
// worker, and not retried, stops the run: it may have run.
func (ts *tools) Call(ctx context.Context, name string, args any) (*toolset.ToolResult, error) {
	raw, _ := args.(json.RawMessage) // the agent passes its checked arguments
	var st *toolset.Tool
	for i := range ts.d.tools {
		if ts.d.tools[i].Name == name {
			st = &ts.d.tools[i]
		}
	}
	if st == nil {
		return nil, fmt.Errorf("agent/temporal: no tool %q in the catalogue", name)
	}
	w := workflowOf(ctx)
	t := ts.d.timeouts
	a := st.Tool.Annotations
	idempotent := ts.d.retry[name] || a != nil && (isTrue(a.ReadOnlyHint) || isTrue(a.IdempotentHint))
	attempts := int32(1)
	if idempotent {
		attempts = t.ToolAttempts
	}
	opts := workflow.ActivityOptions{StartToCloseTimeout: t.Tool, HeartbeatTimeout: t.Heartbeat,
		RetryPolicy: retryPolicy(attempts), WaitForCancellation: true}
	var res mcp.CallToolResult
	call := ToolCall{Name: name, Server: st.Server, Arguments: raw}
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(w, opts), toolActivity, call).Get(w, &res)
	var timeout *temporal.TimeoutError
	var app *temporal.ApplicationError
	switch {
	case err == nil:
		return &toolset.ToolResult{Name: name, Server: st.Server, Result: &res}, nil
	case errors.As(err, &timeout) && !idempotent:
		ts.d.mayHaveRun = append(ts.d.mayHaveRun, agent.ToolCall{Name: name, Arguments: string(raw)})
		ts.d.stop()
		return nil, fmt.Errorf("agent/temporal: the call may have run: its worker was lost: %w", err)
	case errors.As(err, &app):
		return nil, errors.New(app.Message()) // the tool source's error, as in a run in one process
	}
	return nil, fmt.Errorf("agent/temporal: tool call: %w", err)
}

// retryPolicy retries an activity up to attempts times, after 1s, 2s, 4s
// ... at most a minute apart (or as the error asks: NextRetryDelay).
func retryPolicy(attempts int32) *temporal.RetryPolicy {
	return &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute,
		MaximumAttempts: attempts}
}

func isTrue(b *bool) bool { return b != nil && *b }

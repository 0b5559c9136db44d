package temporal

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

// Names of the activities.
const (
	catalogActivity = "minime.agent.Catalog"
	chatActivity    = "minime.agent.Chat"
	toolActivity    = "minime.agent.CallTool"
)

// modelErrorType is the type of the ApplicationError of a model call
// that failed with an *agent.ModelError.
const modelErrorType = "minime.ModelError"

// toolErrorType is the type of the ApplicationError of a tool source that
// returned an error: the model is told, as in a run in one process.
const toolErrorType = "minime.ToolError"

// Activities are the worker's side of durable runs: what does I/O. One
// Activities serves every run of the worker, concurrently: its ToolSource
// (an *toolset.Toolset) holds the worker's MCP connections, shared by all the
// runs, and its Model, Funcs and Blobs must be safe for concurrent use.
//
// # Local-only servers and the history
//
// A run's history, on the Temporal server, holds its whole conversation:
// the input, every model reply, every tool's arguments and output, the
// approvals and the result. The output of a local-only server (egress:
// local) must stay on the machines the host trusts, so:
//
//   - Whether the model is local is the worker's fact, not the
//     starter's: the Catalog activity reports whether the worker's Model
//     is on its machine (agent.Capabilities.Local), and only then does the run
//     offer local-only tools to the model. The Chat activity of a worker
//     whose model is hosted withholds local-only content whatever the
//     workflow sent, so a run moved to such a worker leaks nothing.
//   - The tools of local-only servers are offered only when
//     Activities.SealedHistory says the history may hold their output:
//     the clients of every worker and every starter seal the payloads
//     with a [Codec] (AES-256-GCM, one key they share), or the Temporal
//     server and its store are on this machine. Sealed, the server holds
//     only ciphertext; its web UI then shows sealed payloads.
//   - What the host puts in Input is stored as it is: a conversation
//     holding local-only content belongs in a sealed run only.
type Activities struct {
	// Model answers the model calls; required.
	Model agent.Model
	// Tools offers the MCP tools; nil means none.
	Tools agent.ToolSource
	// Funcs are local Go functions offered as tools, under the server
	// agent.FuncServer. Every worker of a task queue must offer the same
	// tools.
	Funcs []*agent.Func
	// MaxToolOutput bounds, in bytes, the output of a tool call that goes
	// into the workflow's history; zero or less means
	// agent.DefaultMaxToolOutput. A longer output is cut, keeping its head
	// and its tail; the model never sees more than the run's
	// Config.MaxToolOutput anyway.
	MaxToolOutput int
	// Blobs, when set, stores each output longer than MaxToolOutput, whole,
	// before it is cut; the cut output names the reference it returns.
	Blobs BlobStore
	// SealedHistory says the histories of the runs may hold the output of
	// local-only servers (egress: local): the Temporal clients of the
	// workers and of the starters seal what they write (Codec), or the
	// Temporal server and its store are on this machine. False, the
	// default, leaves the tools of local-only servers out of the
	// catalogue, since their output, and what a model writes after reading
	// it, would be stored in clear on the Temporal server.
	SealedHistory bool
}

// BlobStore stores tool outputs too large for a workflow's history.
type BlobStore interface {
	// Put stores data, the output of the call of tool in the workflow
	// workflowID, and returns a reference to it that the host can resolve
	// later (a URL, an object key). It must honour ctx.
	Put(ctx context.Context, workflowID, tool string, data []byte) (ref string, err error)
}

// ToolCall is the input of the CallTool activity.
type ToolCall struct {
	// Name is the tool's name as the model knows it; Server its server
	// (agent.FuncServer for a Func).
	Name   string `json:"name"`
	Server string `json:"server"`
	// Arguments are the checked arguments.
	Arguments json.RawMessage `json:"arguments"`
}

// modelFailure is an *agent.ModelError as an ApplicationError carries it:
// its Kind by name (see modelKinds), its figures, and its text.
type modelFailure struct {
	Kind                      string
	StatusCode                int
	RetryAfter                time.Duration
	PromptTokens, ContextSize int
	Message                   string
}

// modelKinds names the kinds of agent.ModelError across the activity
// boundary, and says which the activity's retry policy may send again.
var modelKinds = map[string]struct {
	kind  error
	retry bool
}{
	"context_exceeded": {agent.ErrContextExceeded, false},
	"rate_limited":     {agent.ErrRateLimited, true},
	"overloaded":       {agent.ErrOverloaded, true},
	"refused":          {agent.ErrRefused, false},
	"unreachable":      {agent.ErrUnreachable, true},
	"bad_request":      {agent.ErrBadRequest, false},
	"auth":             {agent.ErrAuth, false},
	"server":           {agent.ErrServer, true},
}

// kindName is the name modelKinds gives kind; "" for none.
func kindName(kind error) string {
	for name, k := range modelKinds {
		if k.kind == kind {
			return name
		}
	}
	return ""
}

// Register registers the workflow Run (see RegisterWorkflow) and the
// activities with w.
func (a *Activities) Register(w worker.Registry) {
	RegisterWorkflow(w)
	w.RegisterActivityWithOptions(a.Catalog, activity.RegisterOptions{Name: catalogActivity})
	w.RegisterActivityWithOptions(a.Chat, activity.RegisterOptions{Name: chatActivity})
	w.RegisterActivityWithOptions(a.CallTool, activity.RegisterOptions{Name: toolActivity})
}

// Catalog is the activity that lists the tools, the Funcs then the
// ToolSource's, and says whether the worker's Model is local (see
// Catalogue). MCP tasks are the worker's business: a tool that may run
// as a task is listed as one the workflow calls like any other. The tools
// of local-only servers are left out unless SealedHistory is set.
func (a *Activities) Catalog(ctx context.Context) (*Catalogue, error) {
	return a.catalogue(ctx), nil
}

// funcTool is the catalogue's entry of a Func.
func funcTool(f *agent.Func) toolset.Tool {
	return toolset.Tool{Name: f.Name(), Server: agent.FuncServer,
		Tool: mcp.Tool{Name: f.Name(), Description: f.Description(), InputSchema: f.InputSchema()}}
}

// Chat is the activity of a model call. A failure the model's contract
// says may pass (agent.ErrRateLimited, ErrOverloaded, ErrUnreachable,
// ErrServer) is retried, after its RetryAfter when it has one; another
// agent.ModelError is not, and reaches the workflow as the same kind.
// When the worker's Model is not on its machine, local-only content is
// withheld from it whatever the workflow asked (see Catalogue.LocalModel).
func (a *Activities) Chat(ctx context.Context, req *agent.ChatRequest) (*agent.Reply, error) {
	defer heartbeat(ctx)()
	if !a.localModel() {
		var withheld int
		if req, withheld = a.forHostedModel(req); withheld > 0 {
			activity.GetLogger(ctx).Warn("agent/temporal: messages holding local-only content are withheld from the model, which is not on this worker's machine",
				"messages", withheld)
		}
	}
	reply, err := a.Model.Chat(ctx, req, nil)
	if err == nil {
		return reply, nil
	}
	if me := decidingError(err); me != nil {
		name := kindName(me.Kind)
		details := modelFailure{Kind: name, StatusCode: me.StatusCode, RetryAfter: me.RetryAfter,
			PromptTokens: me.PromptTokens, ContextSize: me.ContextSize, Message: err.Error()}
		return nil, temporal.NewApplicationErrorWithOptions(err.Error(), modelErrorType, temporal.ApplicationErrorOptions{
			NonRetryable: !modelKinds[name].retry, NextRetryDelay: me.RetryAfter, Details: []any{details}})
	}
	return nil, err // unclassified: retried
}

// decidingError returns the classified ModelError of err that decides how
// the call ended: of several (a Fallback's, whose every model failed), the
// first whose kind is not retried (a request too long for the context
// must reach the loop as such, with its figures), else the first; nil
// when err holds none.
func decidingError(err error) *agent.ModelError {
	var first *agent.ModelError
	queue := []error{err} // breadth first: a wrapper before what it wraps
	for len(queue) > 0 {
		e := queue[0]
		queue = queue[1:]
		if me, ok := e.(*agent.ModelError); ok && kindName(me.Kind) != "" {
			if !modelKinds[kindName(me.Kind)].retry {
				return me
			}
			if first == nil {
				first = me
			}
		}
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			if next := u.Unwrap(); next != nil {
				queue = append(queue, next)
			}
		case interface{ Unwrap() []error }:
			queue = append(queue, u.Unwrap()...)
		}
	}
	return first
}

// CallTool is the activity of a tool call. The tool's own failure (an
// error result, or the tool source's error) is its outcome, not the
// activity's: it is not retried, and the model reads about it.
func (a *Activities) CallTool(ctx context.Context, c ToolCall) (*mcp.CallToolResult, error) {
	defer heartbeat(ctx)()
	var res *mcp.CallToolResult
	if c.Server == agent.FuncServer {
		for _, f := range a.Funcs {
			if f.Name() == c.Name {
				res = f.Call(ctx, c.Arguments)
			}
		}
		if res == nil {
			return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("no func %q on this worker", c.Name), toolErrorType, nil)
		}
	} else {
		if a.Tools == nil {
			return nil, temporal.NewNonRetryableApplicationError("no tool source on this worker", toolErrorType, nil)
		}
		tr, err := a.Tools.Call(ctx, c.Name, c.Arguments)
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case err != nil:
			return nil, temporal.NewNonRetryableApplicationError(err.Error(), toolErrorType, nil)
		case tr == nil || tr.Result == nil:
			return nil, temporal.NewNonRetryableApplicationError("the tool source returned no result", toolErrorType, nil)
		}
		res = tr.Result
	}
	return a.bound(ctx, c, res)
}

// bound cuts an output longer than MaxToolOutput, keeping head and tail,
// after storing it whole in Blobs.
func (a *Activities) bound(ctx context.Context, c ToolCall, res *mcp.CallToolResult) (*mcp.CallToolResult, error) {
	limit := a.MaxToolOutput
	if limit <= 0 {
		limit = agent.DefaultMaxToolOutput
	}
	raw, err := json.Marshal(res)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError("encoding the tool's result: "+err.Error(), toolErrorType, nil)
	}
	if len(raw) <= limit {
		return res, nil
	}
	text := res.Text()
	note := fmt.Sprintf("\n[... %d bytes cut ...]\n", len(text))
	if a.Blobs != nil {
		ref, err := a.Blobs.Put(ctx, activity.GetInfo(ctx).WorkflowExecution.ID, c.Name, []byte(text))
		if err != nil {
			return nil, fmt.Errorf("agent/temporal: storing a tool output: %w", err) // retried
		}
		note = fmt.Sprintf("\n[... %d bytes cut; the whole output is stored as %s ...]\n", len(text), ref)
	}
	half := max((limit-len(note))/2, 0)
	cut := text
	if len(text) > 2*half {
		cut = validUTF8(text[:half]) + note + validUTF8(text[len(text)-half:])
	}
	return &mcp.CallToolResult{Content: []mcp.Content{{Type: "text", Text: cut}}, IsError: res.IsError}, nil
}

// heartbeat heartbeats the activity of ctx, three times per heartbeat
// timeout, until the returned func is called: a worker that dies stops
// heartbeating, which is how Temporal learns the activity is lost, and a
// heartbeat is how a cancellation reaches the activity's ctx.
func heartbeat(ctx context.Context) (stop func()) {
	every := activity.GetInfo(ctx).HeartbeatTimeout / 3
	if every <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	return func() {
		close(done)
		<-ended
	}
}

// validUTF8 drops the bytes of a rune cut at either end of s.
func validUTF8(s string) string {
	return string([]rune(s)) // invalid bytes become U+FFFD, never a broken sequence
}

// RegisterWorkflow registers the workflow Run with r as WorkflowName: for
// a replayer (worker.NewWorkflowReplayer), which runs no activity.
func RegisterWorkflow(r worker.WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(Run, workflow.RegisterOptions{Name: WorkflowName})
}

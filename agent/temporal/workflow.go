package temporal

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"go.temporal.io/sdk/workflow"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// Names of the workflow, its query and its update, as Register registers
// them and a client names them.
const (
	// WorkflowName is the name of the workflow Run.
	WorkflowName = "minime.agent.Run"
	// ProgressQuery returns a run's Progress.
	ProgressQuery = "progress"
	// DecideUpdate gives the decisions about the calls waiting for
	// approval: a map[string]permission.Decision keyed by
	// agent.PendingCall.ID, one for each call in Progress.Pending. An
	// update that does not fit the calls waiting is rejected.
	DecideUpdate = "decide"
)

// StopMayHaveRun is Output.Stop for a run stopped because a call that is
// not idempotent was interrupted by the loss of its worker: the call may
// have run, and the host decides what follows (Output.MayHaveRun).
const StopMayHaveRun agent.StopReason = "may-have-run"

// Input starts a run: the conversation and the configuration of the
// agent. Both are stored in the workflow's history: no credential.
type Input struct {
	Messages []agent.Message `json:"messages"`
	Config   Config          `json:"config"`
}

// Config is what shapes a durable run's decisions: the agent.Agent fields
// of the same names (see there; zero values take the same defaults), the
// permission modes of the workflow's policy, and the activities' retries
// and timeouts. The worker's Activities bring what does I/O: the model,
// the tools, the Funcs.
type Config struct {
	SystemPrompt  string               `json:"system_prompt,omitempty"`
	MaxTurns      int                  `json:"max_turns,omitempty"`
	ToolChoice    agent.ToolChoice     `json:"tool_choice,omitempty"`
	FinalAnswer   bool                 `json:"final_answer,omitempty"`
	ToolSearch    agent.ToolSearchMode `json:"tool_search,omitempty"`
	PinnedTools   []string             `json:"pinned_tools,omitempty"`
	MaxParallel   int                  `json:"max_parallel,omitempty"`
	MaxToolOutput int                  `json:"max_tool_output,omitempty"`
	ContextBudget int                  `json:"context_budget,omitempty"`
	// Mode is the permission mode of every server, ServerModes that of
	// one server (agent.FuncServer for the Funcs), as permission.WithMode
	// and WithServerMode. The workflow's policy defers, rather than asks,
	// every call its modes leave open: the run waits for DecideUpdate.
	Mode        permission.Mode            `json:"mode,omitempty"`
	ServerModes map[string]permission.Mode `json:"server_modes,omitempty"`
	// Retry names tools, as the model knows them, whose interrupted calls
	// are retried although they do not say they are idempotent: the host
	// knows they are.
	Retry []string `json:"retry,omitempty"`
	// Timeouts bound the activities.
	Timeouts Timeouts `json:"timeouts,omitzero"`
}

// Timeouts bound the activities of a run. Zero fields take the Default*
// values.
type Timeouts struct {
	// Model bounds one attempt of a model call, Tool one tool call.
	Model time.Duration `json:"model,omitempty"`
	Tool  time.Duration `json:"tool,omitempty"`
	// Heartbeat is how long a worker may stay silent during an activity
	// before the activity counts as interrupted (its worker lost): the
	// activities heartbeat three times as often.
	Heartbeat time.Duration `json:"heartbeat,omitempty"`
	// ModelAttempts bounds the attempts of a model call, ToolAttempts
	// those of an idempotent tool call.
	ModelAttempts int32 `json:"model_attempts,omitempty"`
	ToolAttempts  int32 `json:"tool_attempts,omitempty"`
}

// Defaults of Timeouts.
const (
	DefaultModelTimeout     = 10 * time.Minute
	DefaultToolTimeout      = 30 * time.Minute
	DefaultHeartbeatTimeout = 30 * time.Second
	DefaultModelAttempts    = 5
	DefaultToolAttempts     = 5
)

func (t Timeouts) withDefaults() Timeouts {
	if t.Model <= 0 {
		t.Model = DefaultModelTimeout
	}
	if t.Tool <= 0 {
		t.Tool = DefaultToolTimeout
	}
	if t.Heartbeat <= 0 {
		t.Heartbeat = DefaultHeartbeatTimeout
	}
	if t.ModelAttempts <= 0 {
		t.ModelAttempts = DefaultModelAttempts
	}
	if t.ToolAttempts <= 0 {
		t.ToolAttempts = DefaultToolAttempts
	}
	return t
}

// Output is the outcome of a run.
type Output struct {
	// Result is the run's agent.Result: the conversation, the answer, why
	// it stopped (or StopMayHaveRun), the turns, usage and warnings.
	// Pending is always nil: a durable run waits for its approvals.
	Result agent.Result `json:"result"`
	// MayHaveRun are the calls interrupted by the loss of their worker
	// that were not retried, when Result.Stop is StopMayHaveRun.
	MayHaveRun []agent.ToolCall `json:"may_have_run,omitempty"`
	// Error is the run's error, "" when the model answered.
	Error string `json:"error,omitempty"`
}

// Run is the workflow of a durable agent run (registered as WorkflowName
// by Activities.Register). It runs in.Messages as agent.Agent.RunStream
// would with the worker's model and tools, pauses on approvals until
// DecideUpdate gives them, and returns the Output. A cancelled workflow
// returns its Output with Stop agent.StopCanceled.
//
// # What a host may do around it
//
// A host's own workflow code that starts Run as a child workflow must
// follow Temporal's rules as Run does: no I/O, no goroutine (workflow.Go),
// no clock but workflow.Now, no map iteration whose order decides
// anything. Config is part of the workflow's input, hence of its history:
// it holds no credential. A change to this package or to the agent
// package that changes a run's decisions must be checked against recorded
// histories (worker.NewWorkflowReplayer), as this package's tests do.
func Run(ctx workflow.Context, in Input) (*Output, error) {
	d := newDriver(ctx, in.Config)
	if err := d.handlers(ctx); err != nil {
		return nil, err
	}
	if err := d.refresh(ctx); err != nil {
		return nil, err
	}
	a := d.agent()
	rctx := runContext(d.run)
	res, err := a.RunStream(rctx, in.Messages, d.progress.record)
	for res.Stop == agent.StopPendingApproval && len(d.mayHaveRun) == 0 {
		st := res.Pending
		decisions, werr := d.await(ctx, st)
		if werr != nil { // cancelled while waiting
			res = agent.Result{Messages: st.Messages, Stop: agent.StopCanceled, Turns: res.Turns, Usage: res.Usage, Warnings: res.Warnings}
			err = fmt.Errorf("agent/temporal: run cancelled while waiting for approvals: %w", werr)
			break
		}
		if err := d.refresh(ctx); err != nil {
			return nil, err
		}
		res, err = a.ResumeStream(rctx, st, decisions, d.progress.record)
	}
	out := &Output{Result: res, MayHaveRun: d.mayHaveRun}
	out.Result.Pending = nil
	if len(d.mayHaveRun) > 0 {
		out.Result.Stop = StopMayHaveRun
		err = fmt.Errorf("agent/temporal: %d tool calls may have run: their worker was lost, and they are not idempotent", len(d.mayHaveRun))
	}
	if err != nil {
		out.Error = err.Error()
	}
	d.progress.finish(out.Result.Stop)
	return out, nil
}

// driver is the workflow side of one run: the state the agent's
// workflow-safe Model, ToolSource and Runtime share.
type driver struct {
	cfg      Config
	timeouts Timeouts
	// run is the context of the agent's run: cancelled with the workflow,
	// or by the driver when a call may have run.
	run        workflow.Context
	stop       workflow.CancelFunc
	tools      []toolset.Tool
	localModel bool // the worker's Model is on its machine (Catalogue)
	retry      map[string]bool
	mayHaveRun []agent.ToolCall
	progress   *progress
	ids        int
	decisions  map[string]permission.Decision
}

func newDriver(ctx workflow.Context, cfg Config) *driver {
	d := &driver{cfg: cfg, timeouts: cfg.Timeouts.withDefaults(), retry: map[string]bool{}, progress: &progress{}}
	d.run, d.stop = workflow.WithCancel(ctx)
	for _, name := range cfg.Retry {
		d.retry[name] = true
	}
	return d
}

// handlers sets the query and the update handlers.
func (d *driver) handlers(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, ProgressQuery, func() (Progress, error) { return d.progress.snapshot(), nil }); err != nil {
		return err
	}
	return workflow.SetUpdateHandlerWithOptions(ctx, DecideUpdate,
		func(_ workflow.Context, decisions map[string]permission.Decision) error {
			d.decisions = decisions
			return nil
		},
		workflow.UpdateHandlerOptions{Validator: func(_ workflow.Context, decisions map[string]permission.Decision) error {
			return d.progress.check(decisions)
		}})
}

// await waits for the decisions about st's pending calls.
func (d *driver) await(ctx workflow.Context, st *agent.State) (map[string]permission.Decision, error) {
	d.decisions = nil
	d.progress.wait(st.Pending)
	err := workflow.Await(ctx, func() bool { return d.decisions != nil })
	d.progress.wait(nil)
	return d.decisions, err
}

// refresh reads the worker's catalogue of tools, and whether its model is
// local.
func (d *driver) refresh(ctx workflow.Context) error {
	opts := workflow.ActivityOptions{StartToCloseTimeout: d.timeouts.Model, RetryPolicy: retryPolicy(d.timeouts.ModelAttempts)}
	var cat Catalogue
	if err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), catalogActivity).Get(ctx, &cat); err != nil {
		return fmt.Errorf("agent/temporal: reading the catalogue of tools: %w", err)
	}
	d.tools, d.localModel = cat.Tools, cat.LocalModel
	return nil
}

// agent builds the workflow-safe Agent of the run.
func (d *driver) agent() *agent.Agent {
	opts := []permission.Option{permission.WithMode(d.cfg.Mode)}
	servers := make([]string, 0, len(d.cfg.ServerModes))
	for s := range d.cfg.ServerModes {
		servers = append(servers, s)
	}
	sort.Strings(servers) // a map's order decides nothing
	for _, s := range servers {
		opts = append(opts, permission.WithServerMode(s, d.cfg.ServerModes[s]))
	}
	c := d.cfg
	return &agent.Agent{
		Model:         &model{d: d},
		Tools:         &tools{d: d},
		Policy:        permission.NewPolicy(deferAll, opts...),
		Runtime:       &runtime{d: d},
		SystemPrompt:  c.SystemPrompt,
		MaxTurns:      c.MaxTurns,
		ToolChoice:    c.ToolChoice,
		FinalAnswer:   c.FinalAnswer,
		ToolSearch:    c.ToolSearch,
		PinnedTools:   c.PinnedTools,
		MaxParallel:   c.MaxParallel,
		MaxToolOutput: c.MaxToolOutput,
		ContextBudget: c.ContextBudget,
	}
}

// deferAll is the workflow's Approver: it cannot ask anyone, so it defers.
var deferAll = permission.ApproverFunc(func(_ context.Context, _ permission.Request) (permission.Decision, error) {
	return permission.Decision{}, permission.ErrDeferred
})

// Progress is what ProgressQuery returns: the events of the run so far
// and the calls waiting for approval.
type Progress struct {
	// Events are the run's events, oldest first, at most MaxEvents; Dropped
	// counts the older ones left out.
	Events  []EventRecord `json:"events"`
	Dropped int           `json:"dropped,omitempty"`
	// Pending are the calls waiting for DecideUpdate; empty when none.
	Pending []agent.PendingCall `json:"pending,omitempty"`
	// Stop is set once the run has ended.
	Stop agent.StopReason `json:"stop,omitempty"`
}

// MaxEvents bounds the events Progress keeps.
const MaxEvents = 1000

// EventRecord is an agent.Event as Progress reports it.
type EventRecord struct {
	// Kind is the event's type: "tool-proposed", "approval-requested",
	// "approval-decided", "tool-started", "tool-result", "turn-finished",
	// "warning".
	Kind  string `json:"kind"`
	Turn  int    `json:"turn"`
	Index int    `json:"index"`
	// Tool is the tool's name as the model knows it; Status a tool
	// result's; Text the warning's message or the decision's verdict.
	Tool   string           `json:"tool,omitempty"`
	Status agent.CallStatus `json:"status,omitempty"`
	Text   string           `json:"text,omitempty"`
}

// progress keeps a run's Progress in the workflow's memory (a query reads
// it; it is not in the history).
type progress struct {
	p Progress
}

func (p *progress) record(ev agent.Event) {
	var r EventRecord
	switch e := ev.(type) {
	case *agent.ToolCallProposed:
		r = EventRecord{Kind: "tool-proposed", Turn: e.Turn, Index: e.Index, Tool: e.Call.Name}
	case *agent.ApprovalRequested:
		r = EventRecord{Kind: "approval-requested", Turn: e.Turn, Index: e.Index, Tool: e.Request.PrefixedName}
	case *agent.ApprovalDecided:
		r = EventRecord{Kind: "approval-decided", Turn: e.Turn, Index: e.Index, Text: e.Decision.Verdict.String()}
	case *agent.ToolStarted:
		r = EventRecord{Kind: "tool-started", Turn: e.Turn, Index: e.Index, Tool: e.Call.Name}
	case *agent.ToolFinished:
		r = EventRecord{Kind: "tool-result", Turn: e.Turn, Index: e.Index, Tool: e.Call.Name, Status: e.Status}
	case *agent.TurnFinished:
		r = EventRecord{Kind: "turn-finished", Turn: e.Turn}
	case *agent.Warning:
		r = EventRecord{Kind: "warning", Turn: e.Turn, Text: e.Message}
	default:
		return
	}
	if len(p.p.Events) == MaxEvents {
		p.p.Events = p.p.Events[1:]
		p.p.Dropped++
	}
	p.p.Events = append(p.p.Events, r)
}

func (p *progress) wait(pending []agent.PendingCall) { p.p.Pending = pending }

func (p *progress) finish(stop agent.StopReason) { p.p.Stop = stop }

func (p *progress) snapshot() Progress {
	s := p.p
	s.Events = append([]EventRecord(nil), s.Events...)
	return s
}

// check accepts decisions only for exactly the calls waiting.
func (p *progress) check(decisions map[string]permission.Decision) error {
	if len(p.p.Pending) == 0 {
		return errors.New("agent/temporal: no call is waiting for approval")
	}
	for _, c := range p.p.Pending {
		if _, ok := decisions[c.ID]; !ok {
			return fmt.Errorf("agent/temporal: no decision for pending call %q", c.ID)
		}
	}
	if len(decisions) != len(p.p.Pending) {
		return fmt.Errorf("agent/temporal: %d decisions for %d pending calls", len(decisions), len(p.p.Pending))
	}
	return nil
}

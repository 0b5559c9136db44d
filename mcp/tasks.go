package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// TasksExtension is the identifier of the 2026-07-28 tasks extension
// (SEP-2663), declared in the client capabilities of each request when
// Options.Tasks is set.
const TasksExtension = "io.modelcontextprotocol/tasks"

// TaskPolicy says when a Client calls tools as MCP tasks (Options.Tasks).
type TaskPolicy int

// Task policies.
const (
	// TasksWhenRequired, the zero value, calls a 2025-11-25 tool as a
	// task when it requires one (execution.taskSupport "required"), so
	// that no tool is left out, and declares the tasks extension to
	// 2026-07-28 servers, which then decide per call.
	TasksWhenRequired TaskPolicy = iota
	// TasksWhenAllowed is TasksWhenRequired, and also calls a 2025-11-25
	// tool as a task when it allows one ("optional").
	TasksWhenAllowed
	// TasksOff never uses tasks: a 2025-11-25 tool that requires a task
	// cannot be called (a Toolset leaves it out, with a warning), and a
	// 2026-07-28 server is not told the client handles tasks.
	TasksOff
)

// TaskUse says whether a call of a tool runs as a task (toolset.Tool.Task).
type TaskUse string

// Task uses.
const (
	// TaskNever: the call is a plain tools/call.
	TaskNever TaskUse = ""
	// TaskAlways: the client asks for a task (2025-11-25).
	TaskAlways TaskUse = "always"
	// TaskMaybe: the server decides, per call, whether the call becomes
	// a task (2026-07-28 with the tasks extension).
	TaskMaybe TaskUse = "maybe"
)

// Task statuses, as TaskStatus.Status reports them.
const (
	TaskWorking       = "working"
	TaskInputRequired = "input_required"
	TaskCompleted     = "completed"
	TaskFailed        = "failed"
	TaskCancelled     = "cancelled"
)

// Limits of the task poll loop.
const (
	// DefaultTaskTimeout bounds a task-backed call whose context has no
	// deadline (Options.TaskTimeout).
	DefaultTaskTimeout = 30 * time.Minute
	// DefaultTaskPollInterval is the wait between polls when the server
	// suggests none.
	DefaultTaskPollInterval = time.Second
	// MinTaskPollInterval and MaxTaskPollInterval clamp the server's
	// suggestion: a hint of 0 is no busy loop, a hint of an hour no
	// deaf client.
	MinTaskPollInterval = 50 * time.Millisecond
	MaxTaskPollInterval = 30 * time.Second
	// maxTaskChanges bounds the status changes (status or message) of
	// one task (MaxInputRequests the input requests it makes).
	maxTaskChanges = 10000
	// taskRPCTimeout bounds one tasks/get, tasks/update or tasks/cancel;
	// taskResultWait one blocking legacy tasks/result, after which
	// polling resumes; taskCancelTimeout the tasks/cancel sent when the
	// caller's context ended.
	taskRPCTimeout    = 30 * time.Second
	taskResultWait    = 10 * time.Minute
	taskCancelTimeout = 5 * time.Second
	// taskRetries is how many tasks/get in a row may fail for reasons
	// other than a JSON-RPC error before the call gives up.
	taskRetries = 3
)

// Errors of task-backed calls; a failed or cancelled task and a lost one
// are errors, while a completed task whose result has IsError set is a
// tool error, returned as a result.
var (
	// ErrTaskFailed: the task ended failed; the error wraps the server's
	// *RPCError when it sent one.
	ErrTaskFailed = errors.New("mcp: task failed")
	// ErrTaskCancelled: the server cancelled the task.
	ErrTaskCancelled = errors.New("mcp: task cancelled")
	// ErrTaskLost: the server does not know the task (expired, purged or
	// never created).
	ErrTaskLost = errors.New("mcp: task unknown to the server")
	// ErrTaskExpired: the task outlived its ttl without finishing.
	ErrTaskExpired = errors.New("mcp: task expired")
	// ErrTaskTimeout: the task outlived Options.TaskTimeout.
	ErrTaskTimeout = errors.New("mcp: task took too long")
	// ErrTaskMisbehaved: the server broke the task rules: a status after
	// a terminal one, another task's id, too many status changes or
	// input requests, an input key reused for another request.
	ErrTaskMisbehaved = errors.New("mcp: server broke the task rules")
)

// TaskStatus is one step of a task-backed call, for the host: the task
// was created, or its status or message changed.
type TaskStatus struct {
	// Server names the server in a Toolset (empty from a lone Client).
	Server string
	// Tool is the tool's name on its server (empty after AwaitTask).
	Tool string
	// TaskID is the server's id of the task: with the server, all that
	// AwaitTask needs to pick the task up again.
	TaskID string
	// Status is one of the Task* statuses.
	Status string
	// Message is the server's status message, untrusted text.
	Message string
	// Polls counts the tasks/get sent so far for this call.
	Polls int
}

type taskObserverKey struct{}

// WithTaskObserver returns a context whose task-backed calls report each
// TaskStatus to fn. fn runs on a goroutine of its own, one status at a
// time, in order: one that blocks delays only later statuses, never the
// call. A host that falls behind sees the first statuses queued and the
// newest kept in place of the others (at most 16 wait). The call does not
// wait for fn: a status may reach it after the call returned.
func WithTaskObserver(ctx context.Context, fn func(TaskStatus)) context.Context {
	return context.WithValue(ctx, taskObserverKey{}, fn)
}

// ContextTaskObserver returns the task observer of ctx, or nil: a host
// that wraps it (to add what it knows of the call, such as the server's
// name in TaskStatus.Server) passes the wrapper to WithTaskObserver.
func ContextTaskObserver(ctx context.Context) func(TaskStatus) {
	fn, _ := ctx.Value(taskObserverKey{}).(func(TaskStatus))
	return fn
}

// taskQueueLen bounds the statuses waiting for an observer.
const taskQueueLen = 16

// taskReporter delivers one call's statuses to its observer.
type taskReporter struct {
	fn      func(TaskStatus)
	mu      sync.Mutex
	pending []TaskStatus
	running bool
	closed  bool
	wake    chan struct{}
}

func newTaskReporter(ctx context.Context) *taskReporter {
	fn := ContextTaskObserver(ctx)
	if fn == nil {
		return nil
	}
	return &taskReporter{fn: fn, wake: make(chan struct{}, 1)}
}

// report queues s; it never blocks.
func (r *taskReporter) report(s TaskStatus) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	if len(r.pending) == taskQueueLen {
		r.pending[len(r.pending)-1] = s // the newest replaces the last
	} else {
		r.pending = append(r.pending, s)
	}
	if !r.running {
		r.running = true
		go r.run()
	}
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// close lets the delivery goroutine end once it has delivered the rest.
func (r *taskReporter) close() {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *taskReporter) run() {
	for range r.wake {
		for {
			r.mu.Lock()
			if len(r.pending) == 0 {
				closed := r.closed
				if closed {
					r.running = false
				}
				r.mu.Unlock()
				if closed {
					return
				}
				break
			}
			s := r.pending[0]
			r.pending = r.pending[1:]
			r.mu.Unlock()
			r.fn(s)
		}
	}
}

// taskHead is a task as tools/call creates it and tasks/get reports it;
// ttl and pollInterval are the 2025-11-25 names, ttlMs and pollIntervalMs
// the 2026-07-28 ones.
type taskHead struct {
	TaskID         string `json:"taskId"`
	Status         string `json:"status"`
	StatusMessage  string `json:"statusMessage,omitempty"`
	TTL            *int64 `json:"ttl,omitempty"`
	TTLMs          *int64 `json:"ttlMs,omitempty"`
	PollInterval   *int64 `json:"pollInterval,omitempty"`
	PollIntervalMs *int64 `json:"pollIntervalMs,omitempty"`
}

// taskWire is a tasks/get result; the 2026-07-28 one inlines the outcome.
type taskWire struct {
	complete
	taskHead
	Result        json.RawMessage         `json:"result"`
	Error         *wireError              `json:"error"`
	InputRequests map[string]inputRequest `json:"inputRequests"`
}

type wireError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// taskParams are the params of tasks/get, tasks/result and tasks/cancel.
type taskParams struct {
	metaParams
	TaskID string `json:"taskId"`
}

// taskUpdateParams are the params of tasks/update (2026-07-28).
type taskUpdateParams struct {
	metaParams
	TaskID         string                     `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
}

// taskCreate is the task param of a 2025-11-25 tools/call.
type taskCreate struct{}

func terminal(status string) bool {
	return status == TaskCompleted || status == TaskFailed || status == TaskCancelled
}

func knownStatus(status string) bool {
	return terminal(status) || status == TaskWorking || status == TaskInputRequired
}

// TaskUse says whether a call of t, a tool of this server as ListTools
// returned it, runs as a task, given Options.Tasks and what the server
// declared.
func (c *Client) TaskUse(t Tool) TaskUse {
	if c.opts.Tasks == TasksOff {
		return TaskNever
	}
	if c.era() == EraModern {
		if c.serverTasks().extension {
			return TaskMaybe
		}
		return TaskNever
	}
	if !c.serverTasks().legacy.toolCalls() || t.Execution == nil {
		return TaskNever
	}
	switch t.Execution.TaskSupport {
	case "required":
		return TaskAlways
	case "optional":
		if c.opts.Tasks == TasksWhenAllowed {
			return TaskAlways
		}
	}
	return TaskNever
}

// legacyTaskCaps is a 2025-11-25 server's tasks capability.
type legacyTaskCaps struct {
	Cancel   json.RawMessage `json:"cancel"`
	Requests struct {
		Tools struct {
			Call json.RawMessage `json:"call"`
		} `json:"tools"`
	} `json:"requests"`
}

// serverTasks is what the server declared of tasks: the 2026-07-28
// extension, the 2025-11-25 capability.
type serverTasks struct {
	extension bool
	legacy    legacyTaskCaps
}

// serverTasks decodes the server's capabilities once per negotiation.
func (c *Client) serverTasks() *serverTasks {
	p := c.state()
	p.tasksOnce.Do(func() {
		var ext map[string]json.RawMessage
		if json.Unmarshal(p.capabilities.Extensions, &ext) == nil {
			raw := bytes.TrimSpace(ext[TasksExtension])
			p.tasks.extension = len(raw) > 0 && raw[0] == '{' // declared with an object
		}
		_ = json.Unmarshal(p.capabilities.Tasks, &p.tasks.legacy) // none reads as none
	})
	return &p.tasks
}

func (t legacyTaskCaps) toolCalls() bool { return len(t.Requests.Tools.Call) > 0 }

// taskCall is one task-backed call being followed.
type taskCall struct {
	c        *Client
	tool, id string
	rep      *taskReporter
	last     taskHead
	polls    int
	changes  int
	interval time.Duration
	seen     time.Time // when the task was first seen
	expires  time.Time // zero: no ttl
	// asked holds the input requests seen, by key (2026-07-28), as JSON.
	asked  map[string]string
	inputs int
}

// AwaitTask follows a task the server already runs, such as one a
// TaskStatus named before the host restarted: it polls until the task
// ends and returns its result, as CallTool would have. When ctx ends
// first, the task is cancelled. The task's input requests go to the
// handlers, as during CallTool.
func (c *Client) AwaitTask(ctx context.Context, taskID string) (*CallToolResult, error) {
	if taskID == "" {
		return nil, fmt.Errorf("mcp: await task: empty task id")
	}
	ctx, cancel := c.taskContext(ctx)
	defer cancel()
	t := &taskCall{c: c, id: taskID, rep: newTaskReporter(ctx)}
	defer t.rep.close()
	return t.follow(ctx, nil)
}

// CancelTask asks the server to cancel a task. A 2025-11-25 server that
// did not declare tasks/cancel is not asked, and nil is returned.
func (c *Client) CancelTask(ctx context.Context, taskID string) error {
	if c.era() != EraModern && len(c.serverTasks().legacy.Cancel) == 0 {
		return nil
	}
	p := &taskParams{TaskID: taskID}
	var ack json.RawMessage
	return c.call(ctx, c.request("tasks/cancel", taskID, p), &ack)
}

// taskContext bounds a task-backed call by Options.TaskTimeout when ctx
// has no deadline.
func (c *Client) taskContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, c.opts.TaskTimeout, ErrTaskTimeout)
}

// follow polls the task until it ends; seed is the task tools/call
// created, nil when resuming.
func (t *taskCall) follow(ctx context.Context, seed *taskHead) (res *CallToolResult, err error) {
	defer func() {
		if err == nil || errors.Is(err, ErrTaskLost) || errors.Is(err, ErrClosed) {
			return // forgotten, or left for AwaitTask after a restart
		}
		timedOut := errors.Is(context.Cause(ctx), ErrTaskTimeout)
		if terminal(t.last.Status) {
			// Ended, and not a failure: the limit cut the fetch of its
			// result short.
			if timedOut && errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, ErrTaskFailed) {
				err = fmt.Errorf("%w after %v (the task had ended; its result did not come): %w", ErrTaskTimeout, t.c.opts.TaskTimeout, err)
			}
			return
		}
		// The caller gave up, the limit passed, or the call failed: the
		// task is cancelled on a context of its own, since ctx may be done.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), taskCancelTimeout)
		defer cancel()
		if cerr := t.c.CancelTask(cctx, t.id); cerr != nil {
			t.c.log.Warn("mcp: cancelling a task failed", "error", cerr)
		}
		if timedOut {
			err = fmt.Errorf("%w after %v (task cancelled): %w", ErrTaskTimeout, t.c.opts.TaskTimeout, ctx.Err())
		}
	}()
	t.interval = DefaultTaskPollInterval
	var snap *taskWire
	fromGet := false // snap came from tasks/get, not tools/call
	if seed != nil {
		if err := t.observe(seed); err != nil {
			return nil, err
		}
		snap = &taskWire{taskHead: *seed}
	}
	failures := 0
	for {
		if snap != nil {
			res, done, err := t.step(ctx, snap, fromGet)
			if done || err != nil {
				return res, err
			}
			if !t.expires.IsZero() && time.Now().After(t.expires) {
				return nil, fmt.Errorf("%w: task still %s after its ttl", ErrTaskExpired, t.last.Status)
			}
			if err := t.pause(ctx, t.wait()); err != nil {
				return nil, err
			}
		}
		next, err := t.get(ctx)
		if err != nil {
			var rpc *RPCError
			switch {
			case ctx.Err() != nil:
				return nil, ctx.Err()
			case errors.As(err, &rpc) && rpc.Code == CodeInvalidParams:
				return nil, fmt.Errorf("%w: %w", ErrTaskLost, err)
			case rpc != nil || errors.Is(err, ErrProtocol) || errors.Is(err, ErrClosed) || errors.Is(err, ErrAuth):
				return nil, err
			}
			if failures++; failures > taskRetries {
				return nil, fmt.Errorf("mcp: tasks/get failed %d times: %w", failures, err)
			}
			snap = nil
			if err := t.pause(ctx, time.Duration(failures)*t.wait()); err != nil {
				return nil, err
			}
			continue
		}
		failures = 0
		if err := t.observe(&next.taskHead); err != nil {
			return nil, err
		}
		snap, fromGet = next, true
	}
}

// pause waits d between two polls, or until ctx ends or the client is
// closed (ErrClosed), whichever is first.
func (t *taskCall) pause(ctx context.Context, d time.Duration) error {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	defer context.AfterFunc(t.c.life, stop)()
	err := sleep(ctx, d)
	if err != nil && t.c.life.Err() != nil {
		return ErrClosed
	}
	return err
}

// wait is the pause before the next poll, never past the ttl by much.
func (t *taskCall) wait() time.Duration {
	d := t.interval
	if !t.expires.IsZero() {
		if left := time.Until(t.expires); left < d {
			d = max(left, MinTaskPollInterval)
		}
	}
	return d
}

// get polls the task once.
func (t *taskCall) get(ctx context.Context) (*taskWire, error) {
	ctx, cancel := context.WithTimeout(ctx, taskRPCTimeout)
	defer cancel()
	t.polls++
	var w taskWire
	r := t.c.request("tasks/get", t.id, &taskParams{TaskID: t.id})
	r.replay = true // a read
	if err := t.c.call(ctx, r, &w); err != nil {
		return nil, err
	}
	if err := w.check("tasks/get"); err != nil {
		return nil, err
	}
	return &w, nil
}

// observe checks a snapshot against the last one, takes its hints and
// reports a change to the host.
func (t *taskCall) observe(h *taskHead) error {
	switch {
	case h.TaskID != t.id:
		return fmt.Errorf("%w: tasks/get answered with another task", ErrTaskMisbehaved)
	case !knownStatus(h.Status):
		return fmt.Errorf("%w: unknown task status %q", ErrProtocol, clip(h.Status, 40))
	case terminal(t.last.Status) && h.Status != t.last.Status:
		return fmt.Errorf("%w: task went from %s back to %s", ErrTaskMisbehaved, t.last.Status, clip(h.Status, 40))
	}
	modern := t.c.era() == EraModern
	ttl, poll := h.TTL, h.PollInterval
	if modern {
		ttl, poll = h.TTLMs, h.PollIntervalMs
	}
	if poll != nil {
		t.interval = min(max(time.Duration(*poll)*time.Millisecond, MinTaskPollInterval), MaxTaskPollInterval)
	}
	// The newest ttl counts, with one poll of slack, from when this call
	// first saw the task: on the client's clock, since the server's
	// createdAt may be off by more than the ttl. None (null) means no
	// limit.
	if t.seen.IsZero() {
		t.seen = time.Now()
	}
	t.expires = time.Time{}
	if ttl != nil && *ttl > 0 {
		t.expires = t.seen.Add(time.Duration(min(*ttl, maxTTL.Milliseconds()))*time.Millisecond + t.interval)
	}
	if h.Status == t.last.Status && h.StatusMessage == t.last.StatusMessage {
		return nil
	}
	if t.changes++; t.changes > maxTaskChanges {
		return fmt.Errorf("%w: task changed status more than %d times", ErrTaskMisbehaved, maxTaskChanges)
	}
	t.last = *h
	t.rep.report(TaskStatus{Tool: t.tool, TaskID: t.id, Status: h.Status, Message: h.StatusMessage, Polls: t.polls})
	return nil
}

// step acts on a snapshot: it returns the outcome of a task that ended,
// answers input requests, and says whether the call is done. A 2026-07-28
// task created already ended carries no outcome (fromGet false): the next
// tasks/get brings it.
func (t *taskCall) step(ctx context.Context, w *taskWire, fromGet bool) (*CallToolResult, bool, error) {
	modern := t.c.era() == EraModern
	switch w.Status {
	case TaskWorking:
		return nil, false, nil
	case TaskInputRequired:
		if modern {
			return nil, false, t.answer(ctx, w.InputRequests)
		}
		// The queued requests come on the tasks/result stream, served by
		// the usual handlers; its end is the task's end, or polling resumes.
		res, err := t.result(ctx, true)
		if err == nil {
			return res, true, nil
		}
		if ctx.Err() != nil {
			return nil, true, ctx.Err()
		}
		t.c.log.Debug("mcp: tasks/result during input_required ended; polling", "error", err)
		if t.inputs++; t.inputs > MaxInputRequests {
			return nil, true, fmt.Errorf("%w: task asked for input more than %d times", ErrTaskMisbehaved, MaxInputRequests)
		}
		return nil, false, nil
	case TaskCompleted:
		if !modern {
			res, err := t.result(ctx, false)
			return res, true, err
		}
		if len(w.Result) == 0 {
			if fromGet {
				return nil, true, fmt.Errorf("%w: task completed without a result", ErrProtocol)
			}
			return nil, false, nil // created completed: the result comes with tasks/get
		}
		var res callToolWire
		if err := json.Unmarshal(w.Result, &res); err != nil {
			return nil, true, fmt.Errorf("%w: the task's result: %w", ErrProtocol, err)
		}
		return &res.CallToolResult, true, nil
	case TaskFailed:
		if !modern {
			// tasks/result gives the real outcome: the error, or an
			// isError result, which stays a tool error. The error is
			// wrapped whatever it is: the server's, or why the outcome
			// could not be fetched.
			res, err := t.result(ctx, false)
			if err == nil {
				return res, true, nil
			}
			return nil, true, fmt.Errorf("%w: %s: %w", ErrTaskFailed, clip(w.StatusMessage, 300), err)
		}
		if w.Error == nil {
			if fromGet {
				return nil, true, fmt.Errorf("%w: %s", ErrTaskFailed, clip(w.StatusMessage, 300))
			}
			return nil, false, nil
		}
		rpc := &RPCError{Method: "tools/call", Code: w.Error.Code, Message: w.Error.Message, Data: w.Error.Data}
		return nil, true, fmt.Errorf("%w: %w", ErrTaskFailed, rpc)
	default: // cancelled
		return nil, true, fmt.Errorf("%w: %s", ErrTaskCancelled, clip(w.StatusMessage, 300))
	}
}

// result fetches a 2025-11-25 task's outcome with tasks/result, which
// blocks until the task ends; waiting bounds it by taskResultWait instead
// of the per-request limit.
func (t *taskCall) result(ctx context.Context, waiting bool) (*CallToolResult, error) {
	limit := taskRPCTimeout
	if waiting {
		limit = taskResultWait
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var res CallToolResult
	if err := t.c.call(ctx, t.c.request("tasks/result", t.id, &taskParams{TaskID: t.id}), &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// answer serves a 2026-07-28 task's outstanding input requests through
// the host's handlers and sends the answers with tasks/update. A key seen
// before with the same request is not asked again; with another request
// it is a broken rule. An elicitation the host has no handler for is
// answered cancel.
func (t *taskCall) answer(ctx context.Context, reqs map[string]inputRequest) error {
	if t.asked == nil {
		t.asked = map[string]string{}
	}
	// The bound is checked before any handler runs: a round of 500
	// requests costs the host nothing.
	fresh := 0
	for key, req := range reqs {
		if prev, ok := t.asked[key]; !ok {
			fresh++
		} else if prev != inputKey(req) {
			return fmt.Errorf("%w: task reused input key %q for another request", ErrTaskMisbehaved, clip(key, 64))
		}
	}
	if t.inputs += fresh; t.inputs > MaxInputRequests {
		return fmt.Errorf("%w: task asked for input more than %d times", ErrTaskMisbehaved, MaxInputRequests)
	}
	responses := map[string]json.RawMessage{}
	for key, req := range reqs {
		if _, ok := t.asked[key]; ok {
			continue
		}
		res, err := t.c.input(ctx, req.Method, req.Params)
		if errors.Is(err, ErrInputRequired) && req.Method == "elicitation/create" {
			res, err = &ElicitResult{Action: "cancel"}, nil
		}
		if err != nil {
			return fmt.Errorf("mcp: task input %q (%s): %w", clip(key, 64), clip(req.Method, 40), err)
		}
		b, err := json.Marshal(res)
		if err != nil {
			return fmt.Errorf("mcp: task input %q: %w", clip(key, 64), err)
		}
		responses[key] = b
	}
	if len(responses) == 0 {
		return nil
	}
	uctx, cancel := context.WithTimeout(ctx, taskRPCTimeout)
	defer cancel()
	var ack complete
	if err := t.c.call(uctx, t.c.request("tasks/update", t.id, &taskUpdateParams{TaskID: t.id, InputResponses: responses}), &ack); err != nil {
		return fmt.Errorf("mcp: tasks/update: %w", err)
	}
	for key, req := range reqs {
		if _, ok := responses[key]; ok {
			t.asked[key] = inputKey(req)
		}
	}
	return ack.check("tasks/update")
}

// inputKey identifies an input request, to tell a key asked again for the
// same request from a key reused for another.
func inputKey(req inputRequest) string {
	return req.Method + " " + string(bytes.TrimSpace(req.Params))
}

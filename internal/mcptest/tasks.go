package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"git.rickub.com/bots-garden/mini-me/internal/jsonrpc"
)

// tasksExtension is the 2026-07-28 tasks extension (SEP-2663).
const tasksExtension = "io.modelcontextprotocol/tasks"

// Tasks runs tools as tasks: the 2025-11-25 experimental tasks (a
// tools/call with a task param, tasks/get, blocking tasks/result on which
// input requests travel, tasks/cancel) and the 2026-07-28 extension
// (resultType "task", tasks/get with the outcome inlined, input_required
// answered by tasks/update, tasks/cancel). A tool runs as a task when it
// has a Task func and the call asks for one (legacy) or declares the
// extension (modern).
type Tasks struct {
	// PollInterval is the suggested poll interval; 0 gives none.
	PollInterval time.Duration
	// TTL is the task's lifetime; 0 gives null (unlimited).
	TTL time.Duration
	// Rewrite, when set, may change each tasks/get result before it is
	// sent; poll counts the polls of that task, from 1.
	Rewrite func(poll int, task map[string]any)
	// RewriteCreated, when set, may change the task a tools/call returns.
	RewriteCreated func(task map[string]any)

	mu      sync.Mutex
	runs    map[string]*TaskRun
	pending map[string]chan json.RawMessage // legacy server requests, by id
	nextReq int
	polls   int
	cancels int
	updates int
	wg      sync.WaitGroup
	life    context.Context
	end     context.CancelFunc
}

// TaskRun is one task, as its Task func sees it.
type TaskRun struct {
	// ID is the task's id.
	ID string

	t       *Tasks
	modern  bool
	created time.Time
	cancel  context.CancelFunc
	polls   int
	// Guarded by t.mu.
	status, message string
	result          any
	err             *jsonrpc.Error
	inputs          map[string]inputReq // modern, outstanding
	nextKey         int
	queue           chan legacyReq // legacy, for tasks/result
	done            chan struct{}
}

type inputReq struct {
	Method string `json:"method"`
	Params any    `json:"params"`
	ch     chan json.RawMessage
}

type legacyReq struct {
	method string
	params any
	ch     chan json.RawMessage
}

// Polls, Cancels and Updates count the tasks/get, tasks/cancel and
// tasks/update requests served.
func (t *Tasks) Polls() int   { t.mu.Lock(); defer t.mu.Unlock(); return t.polls }
func (t *Tasks) Cancels() int { t.mu.Lock(); defer t.mu.Unlock(); return t.cancels }
func (t *Tasks) Updates() int { t.mu.Lock(); defer t.mu.Unlock(); return t.updates }

// Forget drops every task, as a server that purged them or restarted.
func (t *Tasks) Forget() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for id := range t.runs {
		delete(t.runs, id)
	}
}

// Status reports the task's status and message, for a test to check.
func (t *Tasks) Status(id string) (status, message string, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r, ok := t.runs[id]
	if !ok {
		return "", "", false
	}
	return r.status, r.message, true
}

// Working sets the task's status message, as a task does between steps.
func (r *TaskRun) Working(message string) {
	r.t.mu.Lock()
	defer r.t.mu.Unlock()
	if r.status == "working" || r.status == "input_required" {
		r.status, r.message = "working", message
	}
}

// Input asks the client for input (elicitation/create, roots/list) and
// waits for the answer: on the tasks/result stream (legacy) or through
// input_required and tasks/update (modern).
func (r *TaskRun) Input(ctx context.Context, method string, params any) (json.RawMessage, error) {
	ch := make(chan json.RawMessage, 1)
	r.t.mu.Lock()
	r.status, r.message = "input_required", "waiting for "+method
	key := fmt.Sprintf("in%d", r.nextKey)
	r.nextKey++
	if r.modern {
		r.inputs[key] = inputReq{Method: method, Params: params, ch: ch}
	}
	r.t.mu.Unlock()
	if !r.modern {
		select {
		case r.queue <- legacyReq{method: method, params: params, ch: ch}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	select {
	case res := <-ch:
		r.t.mu.Lock()
		delete(r.inputs, key)
		if r.status == "input_required" && len(r.inputs) == 0 {
			r.status, r.message = "working", "input received"
		}
		r.t.mu.Unlock()
		return res, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (t *Tasks) start() {
	t.runs, t.pending = map[string]*TaskRun{}, map[string]chan json.RawMessage{}
	t.life, t.end = context.WithCancel(context.Background())
}

func (t *Tasks) stop() {
	t.end()
	t.wg.Wait()
}

// capabilities declares tasks for the era.
func (t *Tasks) capabilities(caps map[string]any, modern bool) {
	if !modern {
		caps["tasks"] = map[string]any{"list": struct{}{}, "cancel": struct{}{}, "requests": map[string]any{"tools": map[string]any{"call": struct{}{}}}}
		return
	}
	ext, _ := caps["extensions"].(map[string]any)
	if ext == nil {
		ext = map[string]any{}
	}
	ext[tasksExtension] = struct{}{}
	caps["extensions"] = ext
}

// wants reports whether a tools/call asks for a task: a task param
// (legacy) or the extension in the request's capabilities (modern).
func wantsTask(params json.RawMessage, modern bool) bool {
	var p struct {
		Task *json.RawMessage `json:"task"`
		Meta struct {
			Caps struct {
				Extensions map[string]json.RawMessage `json:"extensions"`
			} `json:"io.modelcontextprotocol/clientCapabilities"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(params, &p)
	if modern {
		_, ok := p.Meta.Caps.Extensions[tasksExtension]
		return ok
	}
	return p.Task != nil
}

// create starts a task running fn and returns its CreateTaskResult.
func (t *Tasks) create(modern bool, args json.RawMessage, fn func(context.Context, json.RawMessage, *TaskRun) (any, error)) any {
	ctx, cancel := context.WithCancel(t.life)
	r := &TaskRun{ID: newSessionID(), t: t, modern: modern, created: time.Now().UTC(), cancel: cancel,
		status: "working", message: "started", inputs: map[string]inputReq{}, queue: make(chan legacyReq), done: make(chan struct{})}
	t.mu.Lock()
	t.runs[r.ID] = r
	snap := r.snapshot(false)
	t.mu.Unlock()
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		defer cancel()
		res, err := fn(ctx, args, r)
		t.mu.Lock()
		defer t.mu.Unlock()
		if r.status == "cancelled" {
			return
		}
		if err != nil {
			r.status, r.message, r.err = "failed", err.Error(), &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		} else {
			r.status, r.message, r.result = "completed", "done", res
		}
		close(r.done)
	}()
	if t.RewriteCreated != nil {
		t.RewriteCreated(snap)
	}
	if modern {
		snap["resultType"] = "task"
		return snap
	}
	return map[string]any{"task": snap}
}

// snapshot is the task as tasks/get shows it. t.mu is held.
func (r *TaskRun) snapshot(outcome bool) map[string]any {
	m := map[string]any{"taskId": r.ID, "status": r.status, "statusMessage": r.message,
		"createdAt": r.created.Format(time.RFC3339Nano), "lastUpdatedAt": time.Now().UTC().Format(time.RFC3339Nano)}
	ttl, poll := "ttl", "pollInterval"
	if r.modern {
		ttl, poll = "ttlMs", "pollIntervalMs"
	}
	m[ttl] = nil
	if r.t.TTL > 0 {
		m[ttl] = r.t.TTL.Milliseconds()
	}
	if r.t.PollInterval > 0 {
		m[poll] = r.t.PollInterval.Milliseconds()
	}
	if !r.modern || !outcome {
		return m
	}
	m["resultType"] = "complete"
	switch r.status {
	case "completed":
		m["result"] = r.result
	case "failed":
		m["error"] = r.err
	case "input_required":
		m["inputRequests"] = r.inputs
	}
	return m
}

// handle answers the tasks methods; ok is false for any other method.
func (t *Tasks) handle(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message, modern bool) bool {
	var p struct {
		TaskID         string                     `json:"taskId"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
	}
	switch msg.Method {
	case "tasks/get", "tasks/cancel", "tasks/update", "tasks/result":
	default:
		return false
	}
	_ = json.Unmarshal(msg.Params, &p)
	reply := func(res any, rerr *jsonrpc.Error) { (&jsonOut{w: w}).reply(msg.ID, res, rerr) }
	t.mu.Lock()
	run := t.runs[p.TaskID]
	if run == nil {
		t.mu.Unlock()
		reply(nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Failed to retrieve task: Task not found"})
		return true
	}
	switch msg.Method {
	case "tasks/get":
		t.polls++
		run.polls++
		snap := run.snapshot(true)
		if t.Rewrite != nil {
			t.Rewrite(run.polls, snap)
		}
		t.mu.Unlock()
		reply(snap, nil)
	case "tasks/cancel":
		t.cancels++
		if run.status == "completed" || run.status == "failed" || run.status == "cancelled" {
			t.mu.Unlock()
			reply(nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Cannot cancel task in terminal status: " + run.status})
			return true
		}
		run.status, run.message = "cancelled", "Client cancelled task execution."
		close(run.done)
		snap := run.snapshot(false)
		t.mu.Unlock()
		run.cancel()
		if modern {
			reply(map[string]any{"resultType": "complete"}, nil)
		} else {
			reply(snap, nil)
		}
	case "tasks/update":
		t.updates++
		for key, res := range p.InputResponses {
			if in, ok := run.inputs[key]; ok {
				in.ch <- res
				delete(run.inputs, key)
			}
		}
		t.mu.Unlock()
		reply(map[string]any{"resultType": "complete"}, nil)
	default: // tasks/result, legacy: blocks, carrying the queued requests
		t.mu.Unlock()
		t.result(w, r, msg, run)
	}
	return true
}

// result serves a blocking tasks/result on an SSE stream.
func (t *Tasks) result(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message, run *TaskRun) {
	out := newSSE(w)
	for {
		select {
		case q := <-run.queue:
			t.mu.Lock()
			t.nextReq++
			id := fmt.Sprintf(`"srv-%d"`, t.nextReq)
			t.pending[id] = q.ch
			t.mu.Unlock()
			out.event(jsonrpc.Request{JSONRPC: jsonrpc.Version, ID: jsonrpc.ID(id), Method: q.method, Params: q.params})
		case <-run.done:
			t.mu.Lock()
			res, rerr := run.result, run.err
			if run.status == "cancelled" {
				rerr = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Task " + run.ID + " has no result stored"}
			}
			t.mu.Unlock()
			out.reply(msg.ID, res, rerr)
			return
		case <-r.Context().Done():
			return
		case <-t.life.Done():
			return
		}
	}
}

// respond delivers a client's response to a legacy server request.
func (t *Tasks) respond(msg *jsonrpc.Message) {
	t.mu.Lock()
	ch := t.pending[string(msg.ID)]
	delete(t.pending, string(msg.ID))
	t.mu.Unlock()
	if ch == nil {
		return
	}
	var raw json.RawMessage
	if p, ok := msg.Result.(*json.RawMessage); ok && p != nil {
		raw = *p
	}
	ch <- raw // capacity 1, one answer
}

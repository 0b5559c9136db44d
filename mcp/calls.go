package mcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// ListTools lists every tool of the server, following every page. On a
// modern server, a tool whose x-mcp-header annotations are invalid is left
// out and reported to Options.OnInvalidTool (and the log): the spec forbids
// calling it.
func (c *Client) ListTools(ctx context.Context) ([]Tool, error) {
	c.toolLists.Add(1)
	var life pageLife
	tools, err := listAll(ctx, c, "tools/list", func(p *toolsPage) ([]Tool, *string) {
		life.page(p.TTLMs)
		return p.Tools, p.NextCursor
	})
	if err != nil {
		return nil, err
	}
	fresh := life.until()
	headers := make(map[string][]headerParam)
	hints := make(map[string]*ToolAnnotations, len(tools))
	tasking := map[string]TaskUse{}
	kept := tools[:0]
	for _, t := range tools {
		if c.era() == EraModern && c.httpHeaders() {
			hp, err := toolHeaders(t.InputSchema)
			if err != nil {
				c.log.Warn("mcp: tool dropped: invalid x-mcp-header", "tool", t.Name, "reason", err)
				if c.opts.OnInvalidTool != nil {
					c.opts.OnInvalidTool(t.Name, err)
				}
				continue
			}
			if len(hp) > 0 {
				headers[t.Name] = hp
			}
		}
		hints[t.Name] = t.Annotations
		if u := c.TaskUse(t); u != TaskNever {
			tasking[t.Name] = u
		}
		kept = append(kept, t)
	}
	c.mu.Lock()
	c.headers, c.hints, c.tasking, c.toolsFresh = headers, hints, tasking, fresh
	c.mu.Unlock()
	return kept, nil
}

// httpHeaders reports a transport that mirrors arguments into headers:
// x-mcp-header rules bind Streamable HTTP only (stdio may ignore them).
func (c *Client) httpHeaders() bool {
	_, ok := c.conn.(*httpConn)
	return ok
}

// ToolsFreshUntil says until when the last ListTools result may be used
// without listing again: the 2026-07-28 ttlMs of its pages (the smallest,
// counted from when each arrived). The zero time means the server gave no
// lifetime, so only a list_changed notification says the list changed.
func (c *Client) ToolsFreshUntil() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.toolsFresh
}

// maxTTL caps a server's ttlMs.
const maxTTL = 24 * time.Hour

// pageLife is the lifetime of a listing: the smallest ttlMs of its pages,
// counted from when each arrived; none if a page gave none.
type pageLife struct {
	fresh time.Time
	stale bool
}

func (l *pageLife) page(ttlMs *int64) {
	if ttlMs == nil || *ttlMs <= 0 {
		l.stale = true
	} else if until := time.Now().Add(time.Duration(min(*ttlMs, maxTTL.Milliseconds())) * time.Millisecond); l.fresh.IsZero() || until.Before(l.fresh) {
		l.fresh = until
	}
}

// until is when the listing expires; zero for no lifetime.
func (l *pageLife) until() time.Time {
	if l.stale {
		return time.Time{}
	}
	return l.fresh
}

type toolsPage struct {
	complete
	Tools      []Tool  `json:"tools"`
	NextCursor *string `json:"nextCursor"`
	TTLMs      *int64  `json:"ttlMs"`
}

// CallTool calls a tool. args is anything that marshals to a JSON object
// (a json.RawMessage is sent as is); nil sends no arguments. A tool that
// fails reports it in the result (IsError); a Go error means the call
// itself failed.
//
// # Tasks
//
// A tool that needs minutes runs as an MCP task unless the host sets
// [Options.Tasks] to [TasksOff]: in the 2025-11-25 era the client asks for
// one when the tool's execution.taskSupport requires it (or allows it,
// with [TasksWhenAllowed]); in the 2026-07-28 era it declares the
// [TasksExtension] on every request and the server decides. [Client.CallTool]
// then polls tasks/get until the task ends and returns its result as any
// call's; input the task asks for goes to [Options.Elicit],
// [Options.Sample] and [Options.Roots], as for a plain call.
// toolset.Tool.Task says how a tool of a Toolset runs, [WithTaskObserver]
// reports each step of a call, and [Client.AwaitTask] (or
// toolset.Toolset.AwaitTask) follows a task created before a restart, from
// its id.
//
// A task-backed call is bounded, and each bound is an error that works
// with errors.Is:
//
//   - the caller's context, or [Options.TaskTimeout] ([DefaultTaskTimeout],
//     30 min) when it has no deadline ([ErrTaskTimeout]); either way the
//     task is cancelled with tasks/cancel on a fresh context of 5 s, as it
//     is when the call fails for any reason but the task's own end, its
//     loss, or Close (after Close the task runs on, for AwaitTask);
//   - the task's ttl: a task still running one poll after its ttl, counted
//     on the client's clock from when the call first saw the task (the
//     server's createdAt is not trusted to match it), is given up
//     ([ErrTaskExpired]);
//   - a task the server no longer knows (-32602 on tasks/get) is
//     [ErrTaskLost]; a failed task [ErrTaskFailed], wrapping the server's
//     [*RPCError] when there is one; a task the server cancelled
//     [ErrTaskCancelled]. A completed task whose result has IsError is a
//     tool error, returned as a result;
//   - a server that reports a status after a terminal one, another task's
//     id, an input key reused for another request, more than
//     [MaxInputRequests] (64) input requests or more than 10,000 status
//     changes for one task breaks the
//     rules ([ErrTaskMisbehaved]);
//   - polls follow the server's interval, clamped to [MinTaskPollInterval]
//     (50 ms) and [MaxTaskPollInterval] (30 s), [DefaultTaskPollInterval]
//     (1 s) when it gives none; each tasks/get, tasks/update and
//     tasks/cancel is bounded by 30 s, a blocking 2025-11-25 tasks/result
//     by 10 min (polling then resumes), and three transport failures of
//     tasks/get in a row end the call. Task status notifications are not
//     listened to: polling alone drives the call, so no server can make
//     the client poll faster. A task observer that falls behind gets the
//     first 16 steps queued and the newest in place of the rest; it never
//     holds up the call. A task's id may be a bearer token for its result,
//     so the observer alone gets it: the errors and logs of a call do not
//     quote it.
func (c *Client) CallTool(ctx context.Context, name string, args any) (*CallToolResult, error) {
	raw, err := marshalArgs(args)
	if err != nil {
		return nil, fmt.Errorf("mcp: tools/call %s: %w", name, err)
	}
	if (c.opts.TrustToolHints || c.opts.Tasks != TasksOff && c.serverTasks().legacy.toolCalls()) && c.toolLists.Load() == 0 {
		// The hints to trust, and which tools run as tasks, come with the
		// tool list: fetch it once, so that neither depends on the host
		// listing first.
		if _, err := c.ListTools(ctx); err != nil {
			return nil, fmt.Errorf("mcp: tools/call %s: listing the tools for their hints: %w", name, err)
		}
	}
	p := &callToolParams{Name: name, Arguments: raw}
	r := c.request("tools/call", name, p)
	c.mu.Lock()
	hp, hints, tasking := c.headers[name], c.hints[name], c.tasking[name]
	c.mu.Unlock()
	if tasking == TaskAlways && c.era() != EraModern {
		p.Task = &taskCreate{}
	}
	if len(hp) > 0 && c.era() == EraModern {
		if r.headers, err = paramHeaders(hp, raw); err != nil {
			return nil, fmt.Errorf("mcp: tools/call %s: %w", name, err)
		}
	}
	r.replay = c.opts.TrustToolHints && hints.Idempotent()
	// A call that may become a task keeps the call timeout (see
	// Options.CallTimeout); a 2026-07-28 server that declared tasks may
	// make any call one, listed or not.
	r.callTimeout = tasking != TaskNever || c.TaskUse(Tool{}) == TaskMaybe
	defer c.withProgress(r, p)()
	res, err := callWithInput[callToolWire](ctx, c, r, p)
	if rpcCode(err) == CodeHeaderMismatch && c.era() == EraModern {
		// The tool's x-mcp-header annotations may have changed: list the
		// tools again and retry once with headers built from the new ones.
		tools, lerr := c.ListTools(ctx)
		if lerr != nil || !slices.ContainsFunc(tools, func(t Tool) bool { return t.Name == name }) {
			return nil, err // gone, or now invalid: not called again
		}
		c.mu.Lock()
		hp = c.headers[name]
		c.mu.Unlock()
		if r.headers, err = paramHeaders(hp, raw); err != nil {
			return nil, fmt.Errorf("mcp: tools/call %s: %w", name, err)
		}
		res, err = callWithInput[callToolWire](ctx, c, r, p)
	}
	if err != nil {
		return nil, err
	}
	if seed := res.created(c.era()); seed != nil {
		return c.followTask(ctx, name, seed)
	}
	return &res.CallToolResult, nil
}

// followTask follows the task a tools/call created until it ends.
func (c *Client) followTask(ctx context.Context, name string, seed *taskHead) (*CallToolResult, error) {
	ctx, cancel := c.taskContext(ctx)
	defer cancel()
	t := &taskCall{c: c, tool: name, id: seed.TaskID, rep: newTaskReporter(ctx)}
	defer t.rep.close()
	if t.id == "" {
		return nil, fmt.Errorf("%w: tools/call %s: task without a taskId", ErrProtocol, name)
	}
	return t.follow(ctx, seed)
}

type callToolParams struct {
	metaParams
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Task asks a 2025-11-25 server to run the call as a task.
	Task *taskCreate `json:"task,omitempty"`
	inputAnswers
}

// inputAnswers are the fields a request carries when it is retried with
// the input a server asked for (MRTR).
type inputAnswers struct {
	InputResponses map[string]json.RawMessage `json:"inputResponses,omitempty"`
	RequestState   json.RawMessage            `json:"requestState,omitempty"`
}

func (a *inputAnswers) setInput(r map[string]json.RawMessage, state json.RawMessage) {
	a.InputResponses, a.RequestState = r, state
}

// callToolWire is a tools/call result: a CallToolResult, a request for
// input, or a task: flat with resultType "task" (2026-07-28), or under
// "task" (2025-11-25).
type callToolWire struct {
	CallToolResult
	inputRound
	taskHead
	Task *taskHead `json:"task"`
}

// created returns the task the call created, or nil for a final result.
func (w *callToolWire) created(era Era) *taskHead {
	if era == EraModern {
		if w.ResultType == "task" {
			return &w.taskHead
		}
		return nil
	}
	return w.Task
}

// marshalArgs encodes tool arguments and checks they form an object.
func marshalArgs(args any) (json.RawMessage, error) {
	if args == nil {
		return nil, nil
	}
	var raw json.RawMessage
	given := true // the host's JSON, not json.Marshal's
	switch a := args.(type) {
	case json.RawMessage:
		raw = a
	case []byte:
		raw = a
	case map[string]any:
		return marshalMap(a, appendAny)
	case map[string]string:
		return marshalMap(a, func(b []byte, v string) ([]byte, error) { return appendString(b, v), nil })
	default:
		given = false
		b, err := json.Marshal(args)
		if err != nil {
			return nil, fmt.Errorf("arguments: %w", err)
		}
		raw = b
	}
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	// Invalid JSON is refused when the request is encoded.
	if t := bytes.TrimLeft(raw, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return nil, fmt.Errorf("arguments must be a JSON object")
	}
	if given {
		// The host's JSON: checked and compacted here, once, since the
		// request encoder sends it as is (and stdio needs it on one line).
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return nil, fmt.Errorf("arguments: %w", err)
		}
		raw = b.Bytes()
	}
	return raw, nil
}

// marshalMap encodes a host's map of arguments as json.Marshal does (keys
// sorted byte-wise, strings escaped alike) without its reflection, in one
// buffer: arguments are most often a map of a few strings. value appends
// one value. A nil map is no arguments.
func marshalMap[V any](m map[string]V, value func([]byte, V) ([]byte, error)) (json.RawMessage, error) {
	if m == nil {
		return nil, nil
	}
	var small [16]string
	keys := small[:0]
	size := 2
	for k := range m {
		keys = append(keys, k)
		size += len(k) + 28 // quotes, colon, comma and a short value
	}
	slices.Sort(keys)
	b := make([]byte, 1, size)
	b[0] = '{'
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(appendString(b, k), ':')
		var err error
		if b, err = value(b, m[k]); err != nil {
			return nil, fmt.Errorf("arguments: %w", err)
		}
	}
	return append(b, '}'), nil
}

// appendAny appends v as json.Marshal encodes it: a string by hand, any
// other value by json.Marshal.
func appendAny(b []byte, v any) ([]byte, error) {
	if s, ok := v.(string); ok {
		return appendString(b, s), nil
	}
	p, err := json.Marshal(v)
	return append(b, p...), err
}

// ListPrompts lists every prompt of the server.
func (c *Client) ListPrompts(ctx context.Context) ([]Prompt, error) {
	return listFresh(ctx, c, "prompts/list", &c.promptsFresh, func(p *promptsPage) ([]Prompt, *string, *int64) {
		return p.Prompts, p.NextCursor, p.TTLMs
	})
}

// PromptsFreshUntil says until when the last ListPrompts result may be
// used without listing again, as ToolsFreshUntil does for tools.
func (c *Client) PromptsFreshUntil() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.promptsFresh
}

// listFresh follows every page of a listing (listAll) and, when it
// succeeds, records in *fresh (under c.mu) until when it is fresh: the
// smallest ttlMs of its pages.
func listFresh[P any, T any](ctx context.Context, c *Client, method string, fresh *time.Time, items func(*P) ([]T, *string, *int64)) ([]T, error) {
	var life pageLife
	all, err := listAll(ctx, c, method, func(p *P) ([]T, *string) {
		list, next, ttl := items(p)
		life.page(ttl)
		return list, next
	})
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	*fresh = life.until()
	c.mu.Unlock()
	return all, nil
}

type promptsPage struct {
	complete
	Prompts    []Prompt `json:"prompts"`
	NextCursor *string  `json:"nextCursor"`
	TTLMs      *int64   `json:"ttlMs"`
}

// GetPrompt renders a prompt with its arguments.
func (c *Client) GetPrompt(ctx context.Context, name string, args map[string]string) (*GetPromptResult, error) {
	p := &getPromptParams{Name: name, Arguments: args}
	r := c.request("prompts/get", name, p)
	r.replay = true
	defer c.withProgress(r, p)()
	res, err := callWithInput[getPromptWire](ctx, c, r, p)
	if err != nil {
		return nil, err
	}
	return &res.GetPromptResult, nil
}

type getPromptParams struct {
	metaParams
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments,omitempty"`
	inputAnswers
}

type getPromptWire struct {
	GetPromptResult
	inputRound
}

// ListResources lists every resource of the server.
func (c *Client) ListResources(ctx context.Context) ([]Resource, error) {
	return listFresh(ctx, c, "resources/list", &c.resourcesFresh, func(p *resourcesPage) ([]Resource, *string, *int64) {
		return p.Resources, p.NextCursor, p.TTLMs
	})
}

// ResourcesFreshUntil says until when the last ListResources result may
// be used without listing again, as ToolsFreshUntil does for tools.
func (c *Client) ResourcesFreshUntil() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.resourcesFresh
}

type resourcesPage struct {
	complete
	Resources  []Resource `json:"resources"`
	NextCursor *string    `json:"nextCursor"`
	TTLMs      *int64     `json:"ttlMs"`
}

// ReadResource reads a resource. Not found is an *RPCError with
// CodeInvalidParams (modern) or CodeResourceNotFound (legacy).
func (c *Client) ReadResource(ctx context.Context, uri string) (*ReadResourceResult, error) {
	p := &readResourceParams{URI: uri}
	r := c.request("resources/read", uri, p)
	r.replay = true
	defer c.withProgress(r, p)()
	res, err := callWithInput[readResourceWire](ctx, c, r, p)
	if err != nil {
		return nil, err
	}
	return &res.ReadResourceResult, nil
}

type readResourceParams struct {
	metaParams
	URI string `json:"uri"`
	inputAnswers
}

type readResourceWire struct {
	ReadResourceResult
	inputRound
}

// cursorParams are the params of a paginated listing.
type cursorParams struct {
	metaParams
	Cursor *string `json:"cursor,omitempty"`
}

// listAll follows every page of a listing. Cursors are opaque; an empty
// string is a cursor too. A cursor seen twice ends with an error. A
// listing that passes Options.MaxListItems is cut there (cut), and no
// further page is asked for; so is one whose pages pass
// Options.MaxListBytes, after the page that passed it.
func listAll[P any, T any](ctx context.Context, c *Client, method string, items func(*P) ([]T, *string)) ([]T, error) {
	return listPages(ctx, c, method, func(cursor *string) paramsWithMeta { return &cursorParams{Cursor: cursor} }, items)
}

// listPages is listAll with the params of each page made by params.
func listPages[P any, T any](ctx context.Context, c *Client, method string, params func(cursor *string) paramsWithMeta, items func(*P) ([]T, *string)) ([]T, error) {
	var all []T
	var size int64 // the bytes of the pages' responses
	// The cursors seen, by their digest: a cursor may be as large as a
	// message, and a listing sees up to maxPages of them.
	seen := map[[sha256.Size]byte]bool{}
	var cursor *string
	for range maxPages {
		r := c.request(method, "", params(cursor))
		r.replay = true
		var page P
		if err := c.call(ctx, r, &page); err != nil {
			return nil, err
		}
		if err := any(&page).(interface{ check(string) error }).check(method); err != nil {
			return nil, err
		}
		list, next := items(&page)
		if limit := c.opts.MaxListItems; len(all)+len(list) > limit {
			all = append(all, list[:limit-len(all)]...)
			c.cut(method, limit, "the server lists more items than the bound", limit)
			return all, nil
		}
		all = append(all, list...)
		if next == nil {
			return all, nil
		}
		if size += int64(r.size); size > c.opts.MaxListBytes {
			c.cut(method, len(all), "the server's pages are larger than the bound", c.opts.MaxListBytes)
			return all, nil
		}
		key := sha256.Sum256([]byte(*next))
		if seen[key] {
			return nil, fmt.Errorf("%w: %s: server repeated cursor %q", ErrProtocol, method, clip(*next, 40))
		}
		seen[key] = true
		cursor = next
	}
	return nil, fmt.Errorf("%w: %s: more than %d pages", ErrProtocol, method, maxPages)
}

// cut reports a listing cut at kept items, for why, over limit.
func (c *Client) cut(method string, kept int, why string, limit any) {
	c.log.Warn("mcp: listing cut: "+why, "method", method, "limit", limit, "kept", kept)
	if c.opts.OnListCut != nil {
		c.opts.OnListCut(method, kept)
	}
}

// complete is the resultType of a result that can only be final: absent
// (legacy) or "complete"; anything else is invalid there.
type complete struct {
	ResultType string `json:"resultType"`
}

func (c *complete) check(method string) error {
	if c.ResultType != "" && c.ResultType != "complete" {
		return fmt.Errorf("%w: %s: resultType %q is not valid here", ErrProtocol, method, clip(c.ResultType, 40))
	}
	return nil
}

// inputRound is the part of a result that asks for more input (MRTR).
type inputRound struct {
	ResultType    string                  `json:"resultType"`
	InputRequests map[string]inputRequest `json:"inputRequests"`
	RequestState  json.RawMessage         `json:"requestState"`
}

func (r *inputRound) round() *inputRound { return r }

type inputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// inputParams are the params of a request that may be retried with input.
type inputParams interface {
	setInput(responses map[string]json.RawMessage, state json.RawMessage)
}

// callWithInput sends r and, while the server answers input_required,
// fulfils the input requests and retries with a new id, the same params,
// the responses and the request state echoed byte for byte.
func callWithInput[T any, PT interface {
	*T
	round() *inputRound
}](ctx context.Context, c *Client, r *outgoing, p inputParams) (*T, error) {
	for i := 0; ; i++ {
		res := PT(new(T))
		if err := c.call(ctx, r, res); err != nil {
			return nil, err
		}
		in := res.round()
		switch in.ResultType {
		case "", "complete":
			return res, nil
		case "task":
			if r.method == "tools/call" && c.era() == EraModern {
				return res, nil // a task: the caller follows it
			}
			return nil, fmt.Errorf("%w: %s: resultType \"task\" is valid only for tools/call", ErrProtocol, r.method)
		case "input_required":
		default:
			return nil, fmt.Errorf("%w: %s: unknown resultType %q", ErrProtocol, r.method, clip(in.ResultType, 40))
		}
		if c.era() != EraModern {
			return nil, fmt.Errorf("%w: %s: input_required from a legacy server", ErrProtocol, r.method)
		}
		if len(in.InputRequests) == 0 && len(in.RequestState) == 0 {
			return nil, fmt.Errorf("%w: %s: input_required without inputRequests or requestState", ErrProtocol, r.method)
		}
		if i+1 >= maxInputRounds {
			return nil, fmt.Errorf("mcp: %s: server still asks for input after %d rounds", r.method, maxInputRounds)
		}
		if n := len(in.InputRequests); n > MaxInputRequests {
			return nil, fmt.Errorf("%w: %s: %d input requests in one round, more than %d", ErrProtocol, r.method, n, MaxInputRequests)
		}
		var responses map[string]json.RawMessage
		if len(in.InputRequests) > 0 {
			responses = make(map[string]json.RawMessage, len(in.InputRequests))
			for key, req := range in.InputRequests {
				res, err := c.input(ctx, req.Method, req.Params)
				if err != nil {
					return nil, fmt.Errorf("mcp: %s: input %q (%s): %w", r.method, key, req.Method, err)
				}
				b, err := json.Marshal(res)
				if err != nil {
					return nil, fmt.Errorf("mcp: %s: input %q: %w", r.method, key, err)
				}
				responses[key] = b
			}
		} else if err := sleep(ctx, time.Duration(i+1)*100*time.Millisecond); err != nil {
			return nil, err // load shedding: retry later
		}
		p.setInput(responses, in.RequestState)
	}
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

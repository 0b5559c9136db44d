package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// call is one tool call of a turn on its way to a tool message.
type call struct {
	turn, index int
	sent        ToolCall // as the model sent it
	stored      ToolCall // as the conversation holds it
	tool        *tool    // nil for an unknown tool
	args        json.RawMessage
	key         string // for repeat detection; "" when the call is invalid
	done        bool   // msg is final

	msg    Message
	kept   *keptOutput   // the output, when the tool ran
	result ToolFinished  // the event
	skill  *skillCall    // for SkillTool
	all    *catalog      // searched, for ToolSearchTool
	trace  *ToolCallInfo // for the run's Trace, when there is one
	watch  callWatch     // for an MCP tool, while it runs
}

// runCalls takes the calls of reply, the model's reply of this turn,
// through validation, repeat detection, approval and execution, and
// appends reply's message, then the calls' tool messages in the model's
// order; cut says the last call was cut at the output limit (see
// cutCall). It reports whether the model repeated a call it had been told
// not to repeat, which ends the run.
func (r *run) runCalls(ctx context.Context, cat *catalog, reply *Reply, cut bool) (repeated bool) {
	n := reply.Message.callCount()
	calls := make([]*call, 0, n)
	for k := range reply.Message.Parts {
		if reply.Message.Parts[k].Kind != PartToolCall {
			continue
		}
		i, s := len(calls), reply.Message.Parts[k].Call()
		c := &call{turn: r.turn, index: i, sent: s, stored: storedCall(s), tool: cat.byName[s.Name], all: cat.all}
		calls = append(calls, c)
		ev := &ToolCallProposed{Turn: r.turn, Index: i, Call: s}
		if c.tool != nil {
			ev.Server, ev.Tool = c.tool.server, c.tool.original
		}
		r.ev.emit(ev)
		switch {
		case c.tool == nil:
			r.refuse(c, StatusUnknown, unknownTool(s.Name, cat))
		case cut && i == n-1:
			r.refuse(c, StatusInvalid, fmt.Sprintf(
				"Error: the call to %q was not run: your reply was cut off at the output limit (finish reason length) while you were writing its arguments, so they are incomplete. Call the tool again with shorter arguments.", s.Name))
		default:
			r.checkCall(c)
		}
	}
	r.add(storedMessage(&reply.Message, func(i int, _ ToolCall) ToolCall { return calls[i].stored }))

	repeated = r.findRepeats(calls)
	var allowed []*call
	for _, c := range calls {
		switch {
		case c.done:
		case repeated:
			r.refuse(c, StatusCanceled, fmt.Sprintf("The call to %q was not run: the run stopped because a call was repeated.", c.sent.Name))
		case ctx.Err() != nil:
			r.refuse(c, StatusCanceled, fmt.Sprintf("The call to %q was not run: the run was cancelled.", c.sent.Name))
		case r.approve(ctx, c):
			allowed = append(allowed, c)
		}
	}
	r.execute(ctx, allowed)
	r.recordTurn(calls)

	for _, c := range calls {
		r.window.keep(len(r.msgs), c.kept)
		r.add(c.msg)
	}
	return repeated
}

// checkCall checks the arguments of c against its tool's schema,
// repairing what can be repaired (see toolSchema.checkArgs), and resolves
// a call of SkillTool. Repaired arguments become those the conversation
// holds. A problem refuses c, its tool message saying what to correct,
// and checkCall returns false.
func (r *run) checkCall(c *call) bool {
	clean, key, repairs, problem := c.tool.schema.checkArgs(c.sent.Arguments)
	if problem != "" {
		r.refuse(c, StatusInvalid, fmt.Sprintf(
			"Error: the call to %q was not run: %s. Correct the arguments and call the tool again.", c.sent.Name, problem))
		return false
	}
	c.args, c.key, c.result.Repairs = clean, c.sent.Name+"\x00"+key, repairs
	if len(repairs) > 0 {
		c.stored.Arguments = string(clean)
	}
	if c.tool.skill {
		if problem := r.checkSkill(c); problem != "" {
			r.refuse(c, StatusInvalid, problem)
			return false
		}
	}
	return true
}

// findRepeats refuses the calls that repeat, with the same arguments, a
// call of the previous turn that returned a result, or a call of this
// turn; and, when this turn's calls close a cycle (see repeats.cycle),
// all of them. A call that failed, timed out, was cancelled or refused is
// no repeat: it may be retried. findRepeats reports whether the model had
// already been told of such a repeat: the run stops.
func (r *run) findRepeats(calls []*call) (again bool) {
	var keys []string
	for _, c := range calls {
		if c.done {
			keys = nil // an invalid or unknown call: the turn differs
			break
		}
		keys = append(keys, c.key)
	}
	if k, told := r.repeats.cycle(keys); k > 0 {
		for _, c := range calls {
			r.refuse(c, StatusRepeated, fmt.Sprintf(
				"The call to %q was not run: you are going round in a loop, your last %d turns make the same calls with the same arguments as the %d before them, whose results you already have. Do not make these calls again: use those results, change the arguments, or answer the user.", c.sent.Name, k, k))
		}
		return told
	}
	this := map[string]bool{}
	for _, c := range calls {
		if c.done {
			continue
		}
		if repeat, told := r.repeats.repeated(c.key, this); repeat {
			again = again || told
			r.refuse(c, StatusRepeated, fmt.Sprintf(
				"The call to %q was not run: it repeats an earlier call with the same arguments, whose result you already have. Do not make this call again: use that result, change the arguments, or answer the user.", c.sent.Name))
		}
	}
	return again
}

// recordTurn keeps, for repeat detection, the calls of this turn that
// returned a result, or were refused as repeats of one: the model has
// their result.
func (r *run) recordTurn(calls []*call) {
	var keys []string
	for _, c := range calls {
		switch c.result.Status {
		case StatusOK, StatusToolError, StatusRepeated:
			keys = append(keys, c.key)
		}
	}
	r.repeats.record(keys)
}

// approve asks the policy about c; a refusal becomes c's tool message.
func (r *run) approve(ctx context.Context, c *call) bool {
	req := c.tool.request(c.args)
	if c.skill != nil {
		req = c.skill.request(c.args)
	}
	if req.Changed && r.a.changes.acknowledged(&req) {
		req.Changed = false
	}
	r.ev.emit(&ApprovalRequested{Turn: c.turn, Index: c.index, Request: req})
	d := permission.Decision{Verdict: permission.Deny, Reason: "no permission policy is configured"}
	var err error
	if r.a.Policy != nil {
		d, err = r.a.Policy.Check(ctx, req)
	}
	r.ev.emit(&ApprovalDecided{Turn: c.turn, Index: c.index, Decision: d, Err: err})
	r.traceDecided(ctx, c, d, err)
	switch {
	case d.Allowed() && err == nil:
		if req.Changed {
			r.a.changes.acknowledge(&req)
		}
		return true
	case errors.Is(err, permission.ErrDeferred) && ctx.Err() == nil:
		r.hold(c, req, err)
	case ctx.Err() != nil:
		r.refuse(c, StatusCanceled, fmt.Sprintf("The call to %q was not run: the run was cancelled.", c.sent.Name))
	default:
		r.refuse(c, StatusDenied, d.DenialMessage(c.sent.Name))
	}
	return false
}

// execute runs the allowed calls, at most MaxParallel at once.
func (r *run) execute(ctx context.Context, calls []*call) {
	if len(calls) == 0 {
		return
	}
	limit := r.a.MaxParallel
	if limit <= 0 {
		limit = DefaultMaxParallel
	}
	fns := make([]func(context.Context), len(calls))
	for i, c := range calls {
		fns[i] = func(ctx context.Context) { r.callTool(ctx, c) }
	}
	r.runtime().Parallel(ctx, limit, fns)
}

// callTool runs one call and makes its result the call's tool message.
func (r *run) callTool(ctx context.Context, c *call) {
	if ctx.Err() != nil {
		r.refuse(c, StatusCanceled, fmt.Sprintf("The call to %q was not run: the run was cancelled.", c.sent.Name))
		return
	}
	r.ev.emit(&ToolStarted{Turn: c.turn, Index: c.index, Call: c.sent})
	if c.tool != nil && c.tool.view != "" {
		r.ev.emit(&ToolView{Turn: c.turn, Index: c.index, Call: c.sent, Server: c.tool.server, Tool: c.tool.original, ResourceURI: c.tool.view})
	}
	cctx, limit := ctx, r.a.ToolTimeout
	var w *callWatch
	if c.tool != nil && c.tool.fn == nil && !c.tool.search {
		w = &c.watch
		w.r, w.c = r, c
		cctx = context.WithValue(cctx, callWatchKey{}, w)
	}
	if w != nil && c.tool.task != mcp.TaskNever {
		limit = r.a.TaskTimeout
		if limit <= 0 {
			limit = mcp.DefaultTaskTimeout
		}
		cctx = mcp.WithTaskObserver(cctx, func(s mcp.TaskStatus) { w.emit(&ToolStatus{Task: s}) })
	}
	if limit > 0 {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(cctx, limit)
		defer cancel()
	}
	tctx, traced := r.traceTool(cctx, c)
	defer traced()
	rt := r.runtime()
	start := rt.Now()
	res, err := r.invoke(tctx, c)
	w.end()
	c.result.Duration = rt.Now().Sub(start)
	// A context that ended is blamed only for a call that failed: one
	// whose result came back ran, whenever the context ended, and keeps
	// its result.
	failed := err != nil || res.IsError
	switch {
	case ctx.Err() != nil && failed:
		c.result.Err = ctx.Err()
		r.refuse(c, StatusCanceled, fmt.Sprintf("The call to %q was interrupted: the run was cancelled.", c.sent.Name))
	case cctx.Err() != nil && failed:
		c.result.Err = cctx.Err()
		r.refuse(c, StatusFailed, fmt.Sprintf("Error: the call to %q took longer than %v and was cancelled.", c.sent.Name, limit))
	case err != nil:
		c.result.Err = err
		r.answer(c, StatusFailed, nil, clip(err.Error(), 1000))
	case res.IsError:
		r.answer(c, StatusToolError, res, (&toolset.ToolResult{Result: res}).Text())
	default:
		r.answer(c, StatusOK, res, (&toolset.ToolResult{Result: res}).Text())
	}
}

// callWatch makes what happens during one MCP tool call events of the
// run, with the call's turn, index and call: the steps of its task
// (ToolStatus) and the elicitations of its server (ElicitationRequested,
// ElicitationAnswered, sent by an Elicitor that finds the watch in the
// context of the request). Once end is called the call has ended, and an
// event still on its way is dropped, so that none follows the
// ToolFinished. A nil watch drops everything.
type callWatch struct {
	r     *run
	c     *call
	mu    sync.Mutex
	ended bool
}

// callWatchKey is the context key of a call's watch.
type callWatchKey struct{}

// emit sends ev, one of the events a watch makes, unless the call ended.
func (w *callWatch) emit(ev Event) {
	if w == nil {
		return
	}
	turn, index, call := w.c.turn, w.c.index, w.c.sent
	switch ev := ev.(type) {
	case *ToolStatus:
		ev.Turn, ev.Index, ev.Call = turn, index, call
	case *ElicitationRequested:
		ev.Turn, ev.Index, ev.Call = turn, index, call
	case *ElicitationAnswered:
		ev.Turn, ev.Index, ev.Call = turn, index, call
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.ended {
		w.r.ev.emit(ev)
	}
}

// elicitationRequested reports the request q, pending under id when the
// host answers later.
func (w *callWatch) elicitationRequested(q permission.Elicitation, id string) {
	if w == nil {
		return
	}
	ev := &ElicitationRequested{ID: id, Elicitation: q}
	if q.Mode == "url" {
		ev.Elicitation.URL = escapeURL(q.URL)
		ev.Site, ev.SiteWarning = permission.URLSite(q.URL)
	}
	w.emit(ev)
}

// end drops the events that come after it.
func (w *callWatch) end() {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.ended = true
	w.mu.Unlock()
}

// escapeURL percent-encodes the bytes of raw that are not printable
// ASCII: the same URL for a browser, which cannot reorder or hide what
// the user reads.
func escapeURL(raw string) string {
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; c <= ' ' || c >= 0x7f {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(raw[i])
	}
	return b.String()
}

// invoke calls c's tool: a Func or an MCP tool.
func (r *run) invoke(ctx context.Context, c *call) (*mcp.CallToolResult, error) {
	if c.skill != nil {
		return r.loadSkill(ctx, c.turn, c.index, c.skill)
	}
	if c.tool.search {
		return &mcp.CallToolResult{Content: []mcp.Content{{Type: "text", Text: r.searchTools(c.all, c.args)}}}, nil
	}
	if f := c.tool.fn; f != nil {
		res, p := f.run(ctx, c.args)
		if p != nil && r.a.Logger != nil {
			r.a.Logger.LogAttrs(ctx, slog.LevelError, "agent: func panicked",
				slog.String("func", f.name), slog.Any("panic", p))
		}
		return res, nil
	}
	res, err := r.a.Tools.Call(ctx, c.tool.name, c.args)
	switch {
	case err != nil:
		return nil, err
	case res == nil || res.Result == nil:
		return nil, errors.New("agent: the tool source returned no result")
	}
	return res.Result, nil
}

// answer makes what a tool produced (its output, or the error that kept
// it from running) c's tool message: wrapped in delimiters naming the
// server and the tool, and cut to MaxToolOutput.
func (r *run) answer(c *call, status CallStatus, res *mcp.CallToolResult, output string) {
	limit := r.a.MaxToolOutput
	if limit <= 0 {
		limit = DefaultMaxToolOutput
	}
	server, name := c.tool.server, c.tool.original
	if c.skill != nil {
		server, name = c.skill.skill.Server, "skill:"+c.skill.skill.Name
	}
	open, close := framing(server, name, status != StatusOK)
	if status == StatusFailed {
		open = fmt.Sprintf("Error: the call to %q failed:\n", c.sent.Name) + open
	}
	c.kept = &keptOutput{open: open, close: close, text: wholeText(neutralise(output)).shorten(limit)}
	c.result.Result = res
	result := ToolResultPart(c.kept.content())
	if res != nil && len(res.StructuredContent) <= limit {
		result.Structured = res.StructuredContent
	}
	msg := Message{Role: RoleTool, ToolCallID: c.sent.ID, Name: c.sent.Name, Server: server, Parts: []Part{result}}
	if r.egress[server] == config.EgressLocal { // a skill's server too (skillWithheld)
		msg.Egress = config.EgressLocal // the label travels with the output
	}
	r.finish(c, status, output, msg)
}

// refuse makes the agent's explanation c's tool message: the call did not
// run, or did not finish.
func (r *run) refuse(c *call, status CallStatus, text string) {
	r.finish(c, status, text, Message{Role: RoleTool, ToolCallID: c.sent.ID, Name: c.sent.Name, Parts: []Part{ToolResultPart(text)}})
}

func (r *run) finish(c *call, status CallStatus, output string, msg Message) {
	c.done = true
	c.msg = msg
	ev := &c.result
	ev.Turn, ev.Index, ev.Call, ev.Status = c.turn, c.index, c.sent, status
	ev.Output, ev.Sent = output, msg.Text()
	if c.kept != nil {
		ev.Cut = c.kept.text.cut()
	}
	r.ev.emit(ev)
}

// unknownTool tells the model which tools exist.
func unknownTool(name string, cat *catalog) string {
	if cat.all != nil && cat.all.byName[name] != nil {
		return fmt.Sprintf("Error: the tool %q is not loaded yet: call %s to find and load it, then call it.", name, ToolSearchTool)
	}
	names := make([]string, 0, len(cat.tools))
	for _, t := range cat.tools {
		names = append(names, t.name)
	}
	sort.Strings(names)
	const most = 50
	list := strings.Join(names[:min(len(names), most)], ", ")
	if len(names) > most {
		list += fmt.Sprintf(", and %d more", len(names)-most)
	}
	if list == "" {
		return fmt.Sprintf("Error: there is no tool named %q, and no tools are available now: answer without tools.", clip(name, 100))
	}
	return fmt.Sprintf("Error: there is no tool named %q. The available tools are: %s.", clip(name, 100), list)
}

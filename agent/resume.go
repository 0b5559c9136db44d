package agent

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// StateVersion is the version of the [State] this package writes; Resume
// takes it and version 1, whose messages are in the form before parts
// (see Message.UnmarshalJSON), and refuses any other.
const StateVersion = 2

// State is a run stopped to wait for approvals (StopPendingApproval): the
// conversation so far, the calls waiting for a decision, and what the run
// had used of its limits. It is plain data that encodes to JSON and back
// without loss, so that a host can store it, show the calls to a person,
// and resume the run with the decisions later, in another process if need
// be ([Agent.Resume]).
//
// What it holds: the conversation (the messages given to the run and every
// message since, tool outputs included, as the model saw them), each
// pending call with the permission request its Approver was asked
// (server, tool, the tool's title, description, input schema and hints,
// the arguments), the turns and tokens used, the context budget, the tools
// and skills the run had loaded and what repeat detection had seen. It
// holds no credential: no API key, token, header or environment variable,
// nothing of the Agent's configuration. It holds what the user and the
// tools said, so store it as you store the conversation.
//
// A State read back is untrusted input. Resume checks that it is
// consistent (version, conversation, pending calls that match the calls
// of its last assistant message) and that each approved call still names
// the tool its request names, and refuses it otherwise with a
// *ResumeError; but it cannot tell a State rewritten consistently by
// someone who can write where it is stored (who could, say, present a
// call that already ran as pending). Keep it where only the host writes,
// or sign it.
//
// # Approvals that wait
//
// A host whose user cannot answer now (a web page, a chat bot) has its
// Approver return permission.ErrDeferred. The other calls of the turn are
// settled as usual, and the approved ones run; then the run stops with
// StopPendingApproval and [ErrPendingApproval], and Result.Pending holds
// a [State]: the conversation, the calls waiting (each with its ID and
// the request the Approver was asked) and the limits used. It is plain
// JSON with no credential in it. Later, in the same process or another,
// [Agent.Resume] takes it back with one decision per pending call: the
// approved calls run, once, the denied ones are told so, and the run goes
// on. Resume checks the State, which is untrusted input, before anything
// runs (see [ResumeError]); resuming a State twice is the host's to
// prevent (State.ID).
type State struct {
	// Version is StateVersion.
	Version int `json:"version"`
	// ID identifies this pause: random, unique to it. A host resumes
	// each State at most once and can use ID to make sure of it.
	ID string `json:"id"`
	// Messages is the conversation, as Result.Messages: it ends with the
	// assistant message that made the pending calls, then the tool
	// messages of that message's calls, those of the pending calls saying
	// that they wait for approval. Calls of that message that were not
	// pending have their outcome there already: a call that ran is not run
	// again.
	Messages []Message `json:"messages"`
	// Pending are the calls waiting for a decision, in the model's order.
	Pending []PendingCall `json:"pending"`
	// Turn is how many turns the run had had (counted against
	// Agent.MaxTurns), ModelCalls how many times it called the model
	// (Result.Turns), Usage the tokens it used.
	Turn       int   `json:"turn"`
	ModelCalls int   `json:"model_calls"`
	Usage      Usage `json:"usage"`
	// ContextBudget is the run's context budget, in estimated tokens
	// (lower than the Agent's once a model server found a request too
	// long); a resumed run keeps the lower of it and the Agent's.
	ContextBudget int `json:"context_budget,omitempty"`
	// LoadedTools are the tools ToolSearchTool had loaded, LoadedSkills
	// the skills loaded, SkillBytes the bytes of skill files loaded.
	LoadedTools  []string `json:"loaded_tools,omitempty"`
	LoadedSkills []string `json:"loaded_skills,omitempty"`
	SkillBytes   int64    `json:"skill_bytes,omitempty"`
	// Repeats is what repeat detection had seen.
	Repeats Repeats `json:"repeats"`
}

// Repeats is what a run's repeat detection has seen, kept in a [State] so
// that a resumed run stops a repeated call as the run would have. Each key
// is a call's tool name and its arguments in canonical form.
type Repeats struct {
	// Previous are the calls of the last turn that returned a result; Told
	// the calls the model was told not to repeat; History, for each turn,
	// the sorted keys of its calls that returned a result; ToldCycle says
	// the model was told it goes round in a loop.
	Previous  []string `json:"previous,omitempty"`
	Told      []string `json:"told,omitempty"`
	History   []string `json:"history,omitempty"`
	ToldCycle bool     `json:"told_cycle,omitempty"`
}

// PendingCall is a call waiting for a decision.
type PendingCall struct {
	// ID identifies the call for Resume's decisions: random, unique to
	// the State (the model's own call IDs need not be).
	ID string `json:"id"`
	// Turn and Index locate the call: its turn, counting from 1, and its
	// position in it, as in the events.
	Turn  int `json:"turn"`
	Index int `json:"index"`
	// Call is the call as the conversation holds it: the model's call ID,
	// the tool's name as the model knows it, and the arguments as the
	// model sent them (or as repaired; see ToolFinished.Repairs).
	Call ToolCall `json:"call"`
	// Request is what the permission policy was asked, and its Approver
	// shown: server, tool, the tool's definition and the arguments. It
	// comes from the model and an MCP server: untrusted text for a UI
	// (see permission.Request).
	Request permission.Request `json:"request"`
}

// ResumeError says why [Agent.Resume] refused a State or its decisions.
// Nothing ran and nothing was sent to the model: once the problem is
// fixed (a missing decision given, say) the same State can be resumed; a
// State that does not fit the Agent cannot.
type ResumeError struct {
	// Kind says what is wrong.
	Kind ResumeErrorKind
	// Call is the ID of the pending call or decision concerned; "" when
	// the problem is the State as a whole.
	Call string
	// Detail says more, without the conversation's content.
	Detail string
}

// Error returns "agent: cannot resume: ", the kind, the call and the
// detail.
func (e *ResumeError) Error() string {
	msg := "agent: cannot resume: " + string(e.Kind)
	if e.Call != "" {
		msg += fmt.Sprintf(" (call %q)", clip(e.Call, 100))
	}
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// ResumeErrorKind is the kind of a [ResumeError].
type ResumeErrorKind string

// Kinds of ResumeError.
const (
	// ResumeInvalidState: the State is not one Resume can continue: an
	// unknown version, a conversation the agent would refuse, pending
	// calls that are not those of its last message.
	ResumeInvalidState ResumeErrorKind = "invalid state"
	// ResumeMissingDecision: a pending call has no decision.
	ResumeMissingDecision ResumeErrorKind = "missing decision"
	// ResumeUnknownDecision: a decision is for no pending call.
	ResumeUnknownDecision ResumeErrorKind = "unknown decision"
	// ResumeToolMismatch: an approved call names a tool the Agent does
	// not offer, or one that is not the tool its request names.
	ResumeToolMismatch ResumeErrorKind = "tool mismatch"
)

// answerer is the optional upgrade of an [Agent.Policy] that takes the late
// answer to a deferred approval; *permission.Policy has it.
type answerer interface {
	Answer(req permission.Request, d permission.Decision) permission.Decision
}

// Resume carries on the run st was saved from, with decisions, keyed by
// PendingCall.ID, for its pending calls. It is [Agent.ResumeStream]
// without events.
func (a *Agent) Resume(ctx context.Context, st *State, decisions map[string]permission.Decision) (Result, error) {
	return a.ResumeStream(ctx, st, decisions, nil)
}

// ResumeStream carries on the run st was saved from (Result.Pending of a
// run that stopped with StopPendingApproval), as [Agent.RunStream] would
// have had the Approver answered: each approved call runs, once; each
// denied one gets the usual denial as its tool message; then the model is
// called again with the outcomes, and the run goes on, with the turns and
// tokens st had used counted against the limits. The Agent need not be
// the one that paused, nor live in the same process, but it must offer
// the same tools.
//
// decisions must hold exactly one Decision for each pending call, keyed
// by its ID: a missing or an unknown key is refused with a *ResumeError,
// as is a State that is not consistent, or an approved call whose tool the
// Agent does not offer as the request named it; then nothing runs. An
// approved call whose tool's definition changed since it was asked about,
// or whose arguments its schema now refuses, is not run, and the model is
// told why. Each decision is passed to the Policy's Answer method, when it
// has one (*permission.Policy does), so that an "always" answer holds for
// the rest of the session and the audit sees every decision; Answer may
// turn an approval into a denial, never a denial into an approval.
//
// Resuming the same State twice runs its approved calls twice: the host
// resumes each State once (State.ID identifies it). The run may stop
// again for approvals, with a new State. A done ctx ends Resume before
// any call runs, with Stop StopCanceled and Result.Pending st, which can
// be resumed later. A ctx done once the approved calls started ends it as
// it ends a run: Stop StopCanceled, Result.Pending nil, and
// Result.Messages with every call's outcome (a call cut short says so),
// from which a new run can carry on; st must not be resumed again. Events and errors are those of RunStream; the events
// of the pending calls, which carry their turn, start at ApprovalDecided.
func (a *Agent) ResumeStream(ctx context.Context, st *State, decisions map[string]permission.Decision, onEvent func(Event)) (Result, error) {
	if err := checkState(st, decisions); err != nil {
		res := Result{Stop: StopError}
		if st != nil {
			res.Messages = slices.Clone(st.Messages)
		}
		return res, err
	}
	r := newRun(a, st.Messages, st, onEvent)
	ctx, traced := r.traceRun(ctx, len(st.Messages))
	err := r.resume(ctx, st, decisions)
	r.result.Messages = r.msgs
	traced(err)
	return r.result, err
}

// heldNote is the tool message of a call waiting for approval.
const heldNote = "The call to %q was not run: it is waiting for the user's approval."

// hold puts c aside until the host decides about it; req is what the
// policy was asked, err its answer.
func (r *run) hold(c *call, req permission.Request, err error) {
	var de *permission.DeferredError
	if errors.As(err, &de) {
		req.Changed = req.Changed || de.Request.Changed // as the policy found it
	}
	r.held = append(r.held, PendingCall{ID: r.runtime().NewID(), Turn: c.turn, Index: c.index,
		Call: c.stored, Request: req})
	r.refuse(c, StatusPending, fmt.Sprintf(heldNote, c.sent.Name))
}

// pause ends a run whose calls wait for approvals, saving what Resume
// needs.
func (r *run) pause() error {
	st := &State{
		Version:       StateVersion,
		ID:            r.runtime().NewID(),
		Messages:      slices.Clone(r.msgs),
		Pending:       r.held,
		Turn:          r.turn,
		ModelCalls:    r.result.Turns,
		Usage:         r.result.Usage,
		ContextBudget: r.window.budget,
		Repeats:       r.repeats.saved(),
	}
	r.loaded.save(st)
	r.result.Stop = StopPendingApproval
	r.result.Pending = st
	return ErrPendingApproval
}

// resume settles the pending calls of st with decisions, then carries on.
func (r *run) resume(ctx context.Context, st *State, decisions map[string]permission.Decision) error {
	if err := r.check(); err != nil {
		r.result.Stop = StopError
		return err
	}
	cat := r.catalog()
	calls := make([]*call, len(st.Pending))
	for i, p := range st.Pending {
		c := &call{turn: p.Turn, index: p.Index, sent: p.Call, stored: p.Call, tool: cat.byName[p.Call.Name], all: cat.all}
		if decisions[p.ID].Allowed() {
			if err := checkTool(c, p); err != nil {
				r.result.Stop = StopError
				return err
			}
		}
		calls[i] = c
	}
	if ctx.Err() != nil {
		r.result.Pending = st
		return r.canceled(ctx)
	}
	var allowed []*call
	for i, p := range st.Pending {
		if c := calls[i]; r.settle(ctx, c, p, decisions[p.ID]) {
			allowed = append(allowed, c)
		}
	}
	r.execute(ctx, allowed)
	var keys []string
	for _, c := range calls {
		if c.result.Status == StatusOK || c.result.Status == StatusToolError {
			keys = append(keys, c.key)
		}
	}
	r.repeats.recordResumed(keys)
	first := len(r.msgs) - r.msgs[lastAssistant(r.msgs)].callCount()
	for _, c := range calls {
		for i := first; i < len(r.msgs); i++ {
			if r.msgs[i].ToolCallID == c.sent.ID {
				r.msgs[i] = r.label(c.msg) // as the placeholder it replaces was
				r.window.keep(i, c.kept)
			}
		}
	}
	if ctx.Err() != nil {
		return r.canceled(ctx)
	}
	return r.loop(ctx)
}

// settle applies the host's decision d about the pending call c and
// reports whether c is to run; else its tool message is set.
func (r *run) settle(ctx context.Context, c *call, p PendingCall, d permission.Decision) bool {
	if pa, ok := r.a.Policy.(answerer); ok {
		// Answer may deny a call the host approved, never approve one it
		// denied: only an approved call had its tool checked (checkTool).
		if a := pa.Answer(p.Request, d); !a.Allowed() || d.Allowed() {
			d = a
		}
	}
	r.ev.emit(&ApprovalDecided{Turn: c.turn, Index: c.index, Decision: d})
	r.traceDecided(ctx, c, d, nil)
	if !d.Allowed() {
		r.refuse(c, StatusDenied, d.DenialMessage(c.sent.Name))
		return false
	}
	if !r.checkCall(c) {
		return false
	}
	req := c.tool.request(c.args)
	if c.skill != nil {
		req = c.skill.request(c.args)
	}
	if !sameDefinition(req, p.Request) {
		r.refuse(c, StatusDenied, fmt.Sprintf(
			"The call to %q was not run: the tool changed while the call waited for approval, so the approval does not hold. Call it again if you still need it.", c.sent.Name))
		return false
	}
	return true
}

// checkTool checks that the approved pending call c names, in the Agent's
// catalogue, the tool its request names.
func checkTool(c *call, p PendingCall) error {
	mismatch := func(detail string) error {
		return &ResumeError{Kind: ResumeToolMismatch, Call: p.ID, Detail: detail}
	}
	switch t := c.tool; {
	case t == nil:
		return mismatch(fmt.Sprintf("no tool named %q is offered", clip(p.Call.Name, 100)))
	case t.skill:
		if !strings.HasPrefix(p.Request.Tool, "skill:") { // the rest is checked with the arguments
			return mismatch("the request is not for a skill")
		}
	case t.server != p.Request.Server || t.original != p.Request.Tool:
		return mismatch(fmt.Sprintf("%q is tool %q of server %q, the request names tool %q of server %q",
			clip(p.Call.Name, 100), clip(t.original, 100), clip(t.server, 100), clip(p.Request.Tool, 100), clip(p.Request.Server, 100)))
	}
	return nil
}

// checkState checks st and decisions before anything is done with them:
// st is untrusted input.
func checkState(st *State, decisions map[string]permission.Decision) error {
	invalid := func(call, format string, args ...any) error {
		return &ResumeError{Kind: ResumeInvalidState, Call: call, Detail: fmt.Sprintf(format, args...)}
	}
	switch {
	case st == nil:
		return invalid("", "no state")
	case st.Version != StateVersion && st.Version != 1:
		return invalid("", "version %d, want %d", st.Version, StateVersion)
	case len(st.Pending) == 0:
		return invalid("", "no pending call")
	case st.Turn < 1 || st.ModelCalls < st.Turn || st.ContextBudget < 0 || st.SkillBytes < 0:
		return invalid("", "impossible counters")
	}
	if err := checkConversation(st.Messages); err != nil {
		return invalid("", "%v", err)
	}
	last := lastAssistant(st.Messages)
	if last < 0 || len(st.Messages)-last-1 != st.Messages[last].callCount() {
		return invalid("", "the conversation does not end with a message's tool calls and their results")
	}
	made := st.Messages[last].ToolCalls()
	results := map[string]Message{}
	for _, m := range st.Messages[last+1:] {
		results[m.ToolCallID] = m
	}
	seen := map[string]bool{}
	for _, p := range st.Pending {
		switch {
		case p.ID == "" || seen[p.ID]:
			return invalid(p.ID, "a pending call has no ID, or the ID of another")
		case p.Turn != st.Turn || p.Index < 0 || p.Index >= len(made) || made[p.Index] != p.Call || seen[p.Call.ID]:
			return invalid(p.ID, "not a call of the conversation's last message")
		case !isHeld(results[p.Call.ID], p.Call):
			return invalid(p.ID, "the call's tool message is not that of a call waiting for approval")
		case p.Request.PrefixedName != p.Call.Name || !bytes.Equal(canonical(p.Request.Arguments), canonical([]byte(p.Call.Arguments))):
			return invalid(p.ID, "the request is not for the call")
		}
		seen[p.ID], seen[p.Call.ID] = true, true
		if _, ok := decisions[p.ID]; !ok {
			return &ResumeError{Kind: ResumeMissingDecision, Call: p.ID}
		}
	}
	unknown := make([]string, 0, len(decisions))
	for id := range decisions {
		if !seen[id] {
			unknown = append(unknown, id)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return &ResumeError{Kind: ResumeUnknownDecision, Call: unknown[0],
			Detail: fmt.Sprintf("%d decisions for no pending call", len(unknown))}
	}
	return nil
}

// isHeld reports whether m is the tool message of c waiting for approval
// (labelled local when the run that held it was a local model's with
// local-only content, see run.add).
func isHeld(m Message, c ToolCall) bool {
	return m.Role == RoleTool && m.ToolCallID == c.ID && m.Name == c.Name && m.Server == "" && (m.Egress == "" || m.Egress == config.EgressLocal) &&
		len(m.Parts) == 1 && m.Parts[0].Kind == PartToolResult && m.Parts[0].Structured == nil && m.Text() == fmt.Sprintf(heldNote, c.Name)
}

// lastAssistant returns the index of the last assistant message of msgs,
// or -1.
func lastAssistant(msgs []Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == RoleAssistant {
			return i
		}
	}
	return -1
}

// sameDefinition reports whether two requests describe the same tool.
// They may have been through JSON, which re-encodes raw JSON.
func sameDefinition(a, b permission.Request) bool {
	return a.Server == b.Server && a.Tool == b.Tool && a.Title == b.Title && a.Description == b.Description &&
		bytes.Equal(canonical(a.InputSchema), canonical(b.InputSchema)) &&
		bytes.Equal(canonical(mustJSON(a.Annotations)), canonical(mustJSON(b.Annotations)))
}

// canonical returns raw JSON as encoding/json writes it; invalid JSON as
// it is.
func canonical(raw []byte) []byte {
	out, err := json.Marshal(json.RawMessage(raw))
	if err != nil {
		return raw
	}
	return out
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v) // plain data: cannot fail
	return b
}

// randomID returns 128 random bits in hex.
func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

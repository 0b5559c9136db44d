package agent

import (
	"time"

	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// Event is something that happened during a run, for the host to render.
// It is one of *TextDelta, *ToolCallProposed, *ApprovalRequested,
// *ApprovalDecided, *ToolStarted, *ToolView, *ToolStatus,
// *ElicitationRequested, *ElicitationAnswered, *ToolFinished,
// *TurnFinished, *SkillLoaded and *Warning; a host tells them apart with a
// type switch. Every event of a run carries Turn, the number of its turn,
// counting from 1 (a Warning about the tools offered, sent before the
// first model call, and the events of a pre-loaded skill, carry 0); the
// events of one tool call also carry Index, the call's position in its
// turn, counting from 0.
//
// For each tool call the model proposes, the host sees, in order:
// ToolCallProposed; then, if the call is valid, ApprovalRequested and
// ApprovalDecided; then, if it was allowed, ToolStarted, a ToolView when
// the tool has an MCP App view, ToolStatus events while it runs as an
// MCP task, and for each elicitation its server sends meanwhile an
// ElicitationRequested then an ElicitationAnswered; and always, last, one
// ToolFinished.
// Events of different calls of a turn may interleave once the calls run. A
// call whose approval was deferred ends its run with a ToolFinished of
// StatusPending; the run that resumes it (Agent.Resume) reports its
// ApprovalDecided, ToolStarted and ToolFinished, with the call's turn and
// index.
//
// Events are plain data; the host may keep them, but must not modify the
// messages, requests and results they refer to.
type Event interface {
	isEvent()
}

// TextDelta is a piece of the model's answer or reasoning, as it streams.
type TextDelta struct {
	Turn int
	Delta
}

// ToolCallProposed reports a tool call the model asked for, before
// anything is done with it.
type ToolCallProposed struct {
	Turn, Index int
	// Call is the call as the model sent it.
	Call ToolCall
	// Server and Tool locate the tool: the MCP server (FuncServer for a
	// local Go function) and the tool's own name there. Both are empty when
	// the model named a tool that is not offered.
	Server, Tool string
}

// ApprovalRequested reports that the permission policy is deciding
// whether a call may run. The policy may answer by itself (auto mode, an
// earlier "allow always") or ask the host's Approver.
type ApprovalRequested struct {
	Turn, Index int
	// Request is the call, as the policy is asked about it.
	Request permission.Request
}

// ApprovalDecided reports the policy's decision about a call. Err is set
// when no answer could be obtained; the call is then denied.
type ApprovalDecided struct {
	Turn, Index int
	// Decision is the policy's answer; it denies when Err is set.
	Decision permission.Decision
	// Err is why no answer was obtained; nil when the policy answered.
	Err error
}

// ToolStarted reports that a call is being run.
type ToolStarted struct {
	Turn, Index int
	// Call is the call as the model sent it.
	Call ToolCall
}

// ToolView reports that a call being run has an MCP App view to show
// (package mcp/apps): the tool's _meta.ui names a ui:// resource of its
// server. It comes right after the call's ToolStarted, so that the host
// can fetch the view and start it while the tool runs; the call's
// ToolFinished follows, whose Result the host gives the view (or, for a
// call that did not end with a result, its cancellation). The model
// never sees the view.
//
// # MCP Apps
//
// A tool whose MCP Apps visibility (package mcp/apps) lacks "model" is
// never offered to the model, nor found by tool search: it is there for
// its server's views, which call it through an apps.Bridge. A call of a
// tool that has a view is followed, right after its ToolStarted, by a
// [ToolView] event naming the view's ui:// resource, so that the host can
// start the view while the tool runs, and give it the call's result from
// the ToolFinished. What the view sends back comes into the run through an
// [Inbox] attached to its context ([WithInbox]): its messages, and its
// latest context for the model, at the next model call.
type ToolView struct {
	Turn, Index int
	// Call is the call as the model sent it: its Arguments are the view's
	// tool input.
	Call ToolCall
	// Server and Tool locate the tool: its server, and its name there.
	Server, Tool string
	// ResourceURI is the view's ui:// resource, on Server.
	ResourceURI string
}

// ToolStatus reports a step of a call that runs as an MCP task: the task
// was created, or its status or message changed. A host that keeps TaskID
// and Server can pick the task up after a restart (toolset.Toolset.AwaitTask).
// Statuses come between ToolStarted and ToolFinished; one that arrives
// after the call ended is dropped, and a host slower than the task sees
// the newest in place of some (see mcp.WithTaskObserver).
type ToolStatus struct {
	Turn, Index int
	// Call is the call as the model sent it.
	Call ToolCall
	// Task is the task's step, as its server reported it.
	Task mcp.TaskStatus
}

// ElicitationRequested reports that the server of a running call asks
// the user for input (MCP elicitation): a form to fill in, or consent to
// open a URL. It is sent by the Elicitor set as the Toolset's client
// Elicit handler, when the request reaches it in the context of the call:
// always in the 2026-07-28 era, for task input, and over Streamable HTTP
// in the 2025-11-25 era; a 2025-11-25 stdio server's request names no
// call, so it is answered without events. A host whose Elicitor answers
// later (OnPending) may answer from this event: ID names the request for
// Elicitor.Answer. The call's ElicitationAnswered follows.
type ElicitationRequested struct {
	Turn, Index int
	// Call is the call as the model sent it.
	Call ToolCall
	// ID names the request for Elicitor.Answer when the Elicitor waits
	// for the host (OnPending); empty when Ask answers it, or nothing
	// does (the request is cancelled).
	ID string
	// Elicitation is what the server asks: every string is the server's.
	// In URL mode, URL has its control, space and non-ASCII bytes
	// percent-encoded (the same page for a browser).
	Elicitation permission.Elicitation
	// Site is, in URL mode, the URL's host in lower case, printable, for
	// the host to show prominently; SiteWarning says when the name is
	// internationalised or the connection not encrypted
	// (permission.URLSite). Both are empty in form mode.
	Site, SiteWarning string
}

// ElicitationAnswered reports what the server of a running call was sent
// for its ElicitationRequested: Action, or nothing when Err is set.
type ElicitationAnswered struct {
	Turn, Index int
	// Call is the call as the model sent it.
	Call ToolCall
	// ID and Server are those of the request.
	ID, Server string
	// Action is "accept", "decline" or "cancel"; empty when Err is set.
	Action string
	// Err is why no answer was sent: the request was withdrawn (the call
	// ended or the server gave up), Ask failed, or its answer did not fit
	// the form (permission.Elicitation.CheckAnswer).
	Err error
}

// ToolFinished reports how a proposed call ended, whether it ran or not.
// Output is the whole output, before it was cut to fit
// Agent.MaxToolOutput: this is where the host gets the full text. Sent is
// what the model was shown. It is an event of the run; what an MCP server
// answered is in Result, as the server sent it.
type ToolFinished struct {
	Turn, Index int
	// Call is the call as the model sent it.
	Call ToolCall
	// Repairs says what the agent repaired in the call's arguments before
	// validating them, such as "code fence removed", "trailing commas
	// removed" or `null dropped for optional "limit"`; nil when nothing
	// was. A repair is only made when the schema accepts its result.
	Repairs []string
	// Status says how the call ended.
	Status CallStatus
	// Output is the tool's output in full, as text (images and other
	// binary content are replaced by placeholders), or the agent's
	// explanation when the call did not run.
	Output string
	// Result is what the tool returned, as its server sent it, when it
	// ran.
	Result *mcp.CallToolResult
	// Sent is the content of the tool message given to the model.
	Sent string
	// Cut is how many bytes of Output were left out of Sent.
	Cut int
	// Duration is how long the call ran; zero when it did not run.
	Duration time.Duration
	// Err is the error of a call that failed to run (StatusFailed,
	// StatusCanceled).
	Err error
}

// CallStatus says how a proposed tool call ended.
type CallStatus string

// Call statuses. Only StatusOK and StatusToolError mean the tool ran.
const (
	// StatusOK: the tool ran and returned a result.
	StatusOK CallStatus = "ok"
	// StatusToolError: the tool ran and reported an error (isError); the
	// model reads it and may correct itself.
	StatusToolError CallStatus = "tool-error"
	// StatusInvalid: the arguments were not valid for the tool's input
	// schema; the model is told why, and the tool did not run.
	StatusInvalid CallStatus = "invalid"
	// StatusUnknown: no tool of that name is offered.
	StatusUnknown CallStatus = "unknown-tool"
	// StatusDenied: the permission policy refused the call.
	StatusDenied CallStatus = "denied"
	// StatusRepeated: the call repeats, with the same arguments, one of
	// the previous turn (or of the same turn) that returned a result, or
	// its turn repeats a cycle of two or three turns; it was not run
	// again. A call that failed, was cancelled or refused may be retried.
	StatusRepeated CallStatus = "repeated"
	// StatusFailed: the call could not be made (server unreachable,
	// protocol error, timeout); the model is told.
	StatusFailed CallStatus = "failed"
	// StatusCanceled: the run was cancelled or stopped before the call
	// finished.
	StatusCanceled CallStatus = "canceled"
	// StatusPending: the Approver deferred its answer (permission.ErrDeferred);
	// the call did not run, and waits in Result.Pending for Agent.Resume.
	StatusPending CallStatus = "pending"
)

// TurnFinished reports the end of one model turn, before its tool calls
// run.
type TurnFinished struct {
	// Turn is the number of the turn, counting from 1.
	Turn int
	// Finish is why the model stopped.
	Finish FinishReason
	// Usage is the turn's token count, as the model server reported it.
	Usage Usage
	// ToolCalls is how many calls the model asked for.
	ToolCalls int
	// Model names the model that answered: Reply.Model, or, when the
	// reply does not say, the name the Agent's Model gives itself
	// (DescribedModel); "" when neither says.
	Model string
}

// Warning reports something the agent worked around during a run. What
// the Toolset worked around while gathering the tools (a server skipped, a
// tool left out) is a toolset.Warning, listed by Toolset.Warnings, not an
// event of any run.
type Warning struct {
	// Turn is the number of the last turn started: a warning about the tools
	// offered to a turn carries the number before it (0 for the first).
	Turn int
	// Kind classifies the warning.
	Kind WarningKind
	// Message describes what happened, for the host to show.
	Message string
}

// WarningKind classifies a Warning.
type WarningKind string

// Kinds of Warning.
const (
	// WarnToolsWithheld: a local-only server's tools were not offered,
	// or its earlier output not sent, because the model is not on this
	// machine.
	WarnToolsWithheld WarningKind = "tools-withheld"
	// WarnSchema: a tool's input schema cannot be used for validation
	// (its arguments are only checked to be a JSON object), or is too
	// large to show to the model in full.
	WarnSchema WarningKind = "schema"
	// WarnAppView: a tool's MCP App metadata (_meta.ui) is unusable, so
	// its view is not shown; the tool is still offered if the model may
	// see it.
	WarnAppView WarningKind = "app-view"
	// WarnToolConflict: a tool was left out because another has the same
	// name.
	WarnToolConflict WarningKind = "tool-conflict"
	// WarnContextBudget: the conversation is estimated to exceed
	// Agent.ContextBudget even with every tool output shortened.
	WarnContextBudget WarningKind = "context-budget"
	// WarnTruncatedAnswer: the model stopped because it reached its
	// output limit (finish reason length).
	WarnTruncatedAnswer WarningKind = "truncated-answer"
	// WarnEmptyAnswer: the model gave neither text nor tool calls.
	WarnEmptyAnswer WarningKind = "empty-answer"
	// WarnDroppedCalls: asked for a final answer without tools
	// (Agent.FinalAnswer), the model made tool calls anyway, even when
	// asked once more; they were dropped and its text, if any, kept.
	WarnDroppedCalls WarningKind = "dropped-calls"
	// WarnTypedAnswer: a typed answer (RunTyped) was repaired before it
	// was accepted, or the server refused the response format and the
	// answer was asked for through AnswerTool.
	WarnTypedAnswer WarningKind = "typed-answer"
	// WarnPinnedTool: a name in Agent.PinnedTools matches no tool of the
	// catalogue (a ToolChoice that names none fails the run instead).
	WarnPinnedTool WarningKind = "pinned-tool"
)

func (*TextDelta) isEvent()            {}
func (*ToolCallProposed) isEvent()     {}
func (*ApprovalRequested) isEvent()    {}
func (*ApprovalDecided) isEvent()      {}
func (*ToolStarted) isEvent()          {}
func (*ToolView) isEvent()             {}
func (*ToolStatus) isEvent()           {}
func (*ElicitationRequested) isEvent() {}
func (*ElicitationAnswered) isEvent()  {}
func (*ToolFinished) isEvent()         {}
func (*TurnFinished) isEvent()         {}
func (*Warning) isEvent()              {}

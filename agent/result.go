package agent

import "errors"

// Result is the outcome of a run. It is returned whatever happened, so that
// the conversation so far is never lost. It is plain data, owned by the
// caller.
type Result struct {
	// Messages is the whole conversation: the messages the run was given,
	// then every message of the run. Every tool call in it has its tool
	// message, even when the run stopped early, so it can be passed to a
	// later Run as it is: a call waiting for approval has one saying so.
	Messages []Message
	// Answer is the text of the model's last message when it answered
	// without calling tools; "" if it never did.
	Answer string
	// Stop says why the run ended.
	Stop StopReason
	// Turns is how many times the model was called.
	Turns int
	// Usage adds up the token counts of every turn.
	Usage Usage
	// Warnings are the warnings of the run, also delivered as events.
	Warnings []Warning
	// Pending is set when Stop is StopPendingApproval: the calls waiting
	// for the host's decisions, and what Agent.Resume needs to carry on
	// once they are given. nil otherwise.
	Pending *State
}

// StopReason says why a run ended.
type StopReason string

// Stop reasons. Only StopAnswer is a normal end; each other one comes with
// an error from Run.
const (
	// StopAnswer: the model answered without calling tools.
	StopAnswer StopReason = "answer"
	// StopMaxTurns: the model was called Agent.MaxTurns times and still
	// asked for tools.
	StopMaxTurns StopReason = "max-turns"
	// StopRepeatedCall: the model repeated a call it had been told not to
	// repeat.
	StopRepeatedCall StopReason = "repeated-call"
	// StopCanceled: the context was cancelled or its deadline passed.
	StopCanceled StopReason = "canceled"
	// StopError: the model failed (endpoint error, broken stream) or the
	// run could not start (invalid conversation, tool name conflict).
	StopError StopReason = "error"
	// StopPendingApproval: the Approver deferred its answer about one or
	// more calls (permission.ErrDeferred); they are in Result.Pending,
	// for Agent.Resume.
	StopPendingApproval StopReason = "pending-approval"
)

// Errors that Run returns when a limit stops the run; match them with
// errors.Is. A cancelled run returns an error matching ctx.Err() instead.
var (
	// ErrMaxTurns: the run reached Agent.MaxTurns.
	ErrMaxTurns = errors.New("agent: maximum number of turns reached")
	// ErrRepeatedCall: the model kept repeating the same call.
	ErrRepeatedCall = errors.New("agent: the model repeated the same tool call")
	// ErrPendingApproval: the run stopped to wait for approvals
	// (StopPendingApproval); Result.Pending holds them.
	ErrPendingApproval = errors.New("agent: the run waits for approvals")
)

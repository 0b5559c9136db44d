package permission

import (
	"context"
	"errors"
)

// Approver decides whether one MCP tool call may run. It is the back end a
// host implements to put its own approval UI in front of tool calls; the
// [Policy] is the front end the agent calls, and it consults the Approver
// only for the calls its mode and rules say must be asked.
//
// Approve receives the call about to be made and returns the host's answer.
// A nil error means the returned [Decision] is the answer, whatever it is:
// a refusal is a Decision with Verdict [Deny], never an error. A non-nil
// error means no answer could be obtained (the UI failed, its input closed
// unexpectedly, ctx ended); the Decision is then ignored and the call is
// denied. There is no default verdict but [Deny]: the zero Decision denies.
//
// Approve may block for as long as a person takes to answer, but it must
// return promptly once ctx is done, with ctx.Err() (possibly wrapped) as its
// error. The Policy cancels ctx when its own per-question timeout expires,
// and treats any Decision returned after ctx is done as a denial.
//
// Approve must not modify the Request, nor the bytes its slices refer to. It
// may keep them after returning, read-only (for a log, say).
//
// Approve may be called from several goroutines at once (the agent may check
// several tool calls of one turn concurrently), so implementations must be
// safe for concurrent use. An Approver that can ask only one question at a
// time serialises its calls itself, as [Terminal] does.
//
// An Approver that cannot answer now, because the person who decides is
// not there (a web page closed, a chat that answers tomorrow), returns
// [ErrDeferred], possibly wrapped: the agent then ends the run with the call
// pending, for the host to ask later and resume (agent.Agent.Resume). A
// caller that does not know about deferral sees an error and denies, so
// deferring fails closed.
//
// An Approver answers one call; remembering "always" answers for the rest of
// the session is the Policy's job, so an Approver is usually stateless.
//
// # Plugging in an approval UI
//
// A host with its own UI (a chat front end, a desktop dialog, a web page)
// implements Approver, blocking until the user answers and giving up when
// ctx is done:
//
//	type dialogApprover struct{ ui *myUI }
//
//	func (a dialogApprover) Approve(ctx context.Context, req permission.Request) (permission.Decision, error) {
//		answer, err := a.ui.Ask(ctx, req.Server, req.PrefixedName, req.ArgumentsText(4000), req.Changed)
//		if err != nil {
//			return permission.Decision{}, err // the call is denied
//		}
//		switch answer {
//		case "always":
//			return permission.Decision{Verdict: permission.AllowTool}, nil
//		case "yes":
//			return permission.Decision{Verdict: permission.AllowOnce}, nil
//		}
//		return permission.Decision{Verdict: permission.Deny, Reason: "the user said no"}, nil
//	}
//
//	policy := permission.NewPolicy(dialogApprover{ui},
//		permission.WithServerMode("docs", permission.ModeAuto),
//		permission.WithTimeout(2*time.Minute))
//
// and the agent, before each call:
//
//	d, err := policy.Check(ctx, req)
//	if !d.Allowed() {
//		result = d.DenialMessage(req.PrefixedName) // err, if any, says why no answer came
//	}
//
// The Approver answers about one call and keeps no state: remembering
// "always", the modes and the rules are the Policy's job.
type Approver interface {
	// Approve answers whether the call req describes may run.
	Approve(ctx context.Context, req Request) (Decision, error)
}

// ErrDeferred is the error an [Approver] returns to put off its answer: the
// call neither runs nor is denied now. [Policy.Check] passes it on
// (in a *[DeferredError], with a denying Decision, Source
// [SourceDeferred]); the agent
// stops the run with the call pending, and the host gives the answer
// later, to agent.Agent.Resume, which passes it to [Policy.Answer].
var ErrDeferred = errors.New("permission: approval deferred")

// DeferredError is the error [Policy.Check] returns when its Approver
// deferred: it matches ErrDeferred, and holds the Request as the Approver
// was asked, with Changed as the Policy set it, for the host to show the
// user later.
type DeferredError struct {
	// Request is the request the Approver was asked.
	Request Request
	// Err is the Approver's error, which matches ErrDeferred.
	Err error
}

// Error returns "permission: approving ", the tool's name and Err.
func (e *DeferredError) Error() string {
	return "permission: approving " + e.Request.name() + ": " + e.Err.Error()
}

// Unwrap returns Err.
func (e *DeferredError) Unwrap() error { return e.Err }

// ApproverFunc adapts an ordinary function to the [Approver] interface. The
// function must honour the Approver contract, concurrency included.
type ApproverFunc func(ctx context.Context, req Request) (Decision, error)

// Approve calls f(ctx, req).
func (f ApproverFunc) Approve(ctx context.Context, req Request) (Decision, error) {
	return f(ctx, req)
}

// AllowAll is an [Approver] that allows every call it is asked about, once.
// With it, a [Policy] runs every call, still reporting each decision to its
// audit function. It is safe for concurrent use.
type AllowAll struct{}

// Approve returns a Decision with Verdict [AllowOnce].
func (AllowAll) Approve(context.Context, Request) (Decision, error) {
	return Decision{Verdict: AllowOnce}, nil
}

// DenyAll is an [Approver] that denies every call it is asked about, giving
// Reason to the model. With it, a [Policy] runs only the calls its modes allow
// without asking (ModeAuto servers). It is safe for concurrent use.
type DenyAll struct {
	// Reason is passed on to the model; it may be empty.
	Reason string
}

// Approve returns a Decision with Verdict [Deny] and d.Reason.
func (d DenyAll) Approve(context.Context, Request) (Decision, error) {
	return Decision{Verdict: Deny, Reason: d.Reason}, nil
}

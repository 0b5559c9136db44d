package permission

import "time"

// Source says what settled a decision.
type Source int

const (
	// SourceAsked: the Approver answered.
	SourceAsked Source = iota + 1
	// SourceRemembered: an earlier AllowTool or AllowServer answer covered
	// the call.
	SourceRemembered
	// SourceAuto: the server's mode is ModeAuto and no rule required asking.
	SourceAuto
	// SourceFailed: no answer could be obtained (the Approver failed, the
	// question timed out, or ctx was done), so the call was denied.
	SourceFailed
	// SourceDeferred: the Approver put off its answer (ErrDeferred), so the
	// call was not run now; its answer comes later, through Policy.Answer.
	SourceDeferred
)

// String returns "asked", "remembered", "auto", "failed" or "deferred".
func (s Source) String() string {
	switch s {
	case SourceAsked:
		return "asked"
	case SourceRemembered:
		return "remembered"
	case SourceAuto:
		return "auto"
	case SourceFailed:
		return "failed"
	case SourceDeferred:
		return "deferred"
	}
	return "unknown"
}

// Event records one decision of a [Policy], for the host's audit trail. The
// Policy emits exactly one Event per call of [Policy.Check]; see [WithAudit].
// It is an audit record, not one of the agent's events (agent.Event), which
// report the same decision as ApprovalDecided.
type Event struct {
	// Time is when the decision was made.
	Time time.Time
	// Server, Tool and PrefixedName identify the tool, as in the Request.
	Server, Tool, PrefixedName string
	// Mode is the mode in force for the server: its sampling mode for a
	// sampling question.
	Mode Mode
	// Source says what settled the decision.
	Source Source
	// Verdict and Reason are the decision returned by Check.
	Verdict Verdict
	// Reason says why the call was denied, empty when none was given.
	Reason string
	// Changed reports that the tool's definition had changed since it was
	// last allowed (Request.Changed as the Approver saw it).
	Changed bool
	// Err is the error returned by Check: non-nil exactly when Source is
	// SourceFailed or SourceDeferred.
	Err error
}

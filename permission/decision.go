package permission

import (
	"fmt"
	"strconv"
)

// Verdict is the answer to one approval question. Its zero value is [Deny],
// so a forgotten or zero Decision never lets a call through, and any value
// other than the four constants below is treated as Deny.
type Verdict int

const (
	// Deny refuses the call; the model is told so (see [Decision.DenialMessage]).
	Deny Verdict = iota
	// AllowOnce lets this one call run.
	AllowOnce
	// AllowTool lets this call run and the [Policy] allow every later call of
	// the same tool on the same server, for the rest of the session, unless
	// the tool's definition changes.
	AllowTool
	// AllowServer lets this call run and the [Policy] allow every later call
	// of any tool of the same server, for the rest of the session (a tool
	// whose definition changed is still asked again).
	AllowServer
)

// String returns "deny", "allow once", "allow tool" or "allow server".
func (v Verdict) String() string {
	switch v {
	case Deny:
		return "deny"
	case AllowOnce:
		return "allow once"
	case AllowTool:
		return "allow tool"
	case AllowServer:
		return "allow server"
	}
	return "Verdict(" + strconv.Itoa(int(v)) + ")"
}

// Decision is an [Approver]'s answer, and the [Policy]'s. The zero Decision
// denies.
type Decision struct {
	// Verdict is the answer; the zero Verdict is Deny.
	Verdict Verdict
	// Reason says why a call was denied. It is passed on to the model, so
	// the model can adapt ("use the staging repository instead"); the Policy
	// fills it in when it denies on its own (timeout, error, cancellation).
	Reason string
	// Edited, for a sampling question (Request.Sampling), is the request
	// or the completion as the user edited it; nil leaves it as asked.
	Edited *Sampling
	// Review, for an allowed sampling request, asks that the completion
	// be shown (Policy.ReviewSampling) before it goes back to the server.
	Review bool
}

// Allowed reports whether the call may run: Verdict is AllowOnce, AllowTool
// or AllowServer. Every other Verdict denies.
func (d Decision) Allowed() bool {
	return d.Verdict == AllowOnce || d.Verdict == AllowTool || d.Verdict == AllowServer
}

// String returns the verdict, followed by the reason if there is one.
func (d Decision) String() string {
	if d.Reason == "" {
		return d.Verdict.String()
	}
	return d.Verdict.String() + ": " + d.Reason
}

// DenialMessage returns the text the agent sends back to the model as the
// result of a denied call to tool, so that a denial ends one call, not the
// conversation. It returns "" when d allows the call.
func (d Decision) DenialMessage(tool string) string {
	if d.Allowed() {
		return ""
	}
	msg := fmt.Sprintf("Permission denied: the call to tool %q was not run.", tool)
	if d.Reason != "" {
		msg += " Reason: " + d.Reason
	}
	return msg + "\nDo not retry this call unless the user asks you to."
}

package permission

import "context"

// Checker decides whether a call may run: the one method the agent's loop
// (agent.Agent.Policy) and an MCP App's bridge (apps.Bridge.Policy) ask.
// *Policy implements it; a host may write its own.
//
// Check decides whether the call req describes may run. The Decision is
// always usable: when it denies, Decision.DenialMessage is what the caller
// tells the model or the view. A non-nil error means no answer was
// obtained, and the Decision then denies. An error matching ErrDeferred
// means the answer was put off; what the caller does with such a call is
// in its own documentation. Check may be called from several goroutines
// at once and must return promptly once ctx is done.
type Checker interface {
	Check(ctx context.Context, req Request) (Decision, error)
}

var _ Checker = (*Policy)(nil)

// Package permission lets the host program decide, before any MCP tool runs,
// whether it may run.
//
// The package has the shape of log/slog: a front end that the agent calls,
// [Policy], and a one-method back end that the host implements, [Approver].
// The agent calls [Policy.Check] for every tool call the model proposes; the
// Policy applies the configured [Mode] of the tool's server, the session's
// earlier answers and two safety rules, and asks the Approver only when they
// leave the question open. Ready-made approvers are [AllowAll], [DenyAll],
// [Terminal] (a prompt on a text terminal) and [ApproverFunc] (any function).
//
// # Modes and rules
//
// [ModeAsk], the default, asks before every call; [ModeAuto] asks before
// none, but for the two rules below. A mode is set for all servers ([WithMode]) and per server
// ([WithServerMode]), mirroring the configuration file's
// "permissions: ask|auto". An answer can allow one call ([AllowOnce]), the
// tool for the rest of the session ([AllowTool]) or every tool of its server
// ([AllowServer]); the Policy remembers the last two. A server's sampling
// requests ([Sampling]) have a mode of their own, ModeAsk unless set
// ([WithSamplingMode], [WithServerSamplingMode]; the file's "sampling"),
// and what is remembered for them is never what is remembered for a tool.
//
// Two rules, on by default, make the Policy ask where it otherwise would not:
//
//   - A tool its server declares destructive (destructiveHint true, readOnlyHint
//     not true) is asked even in ModeAuto ([WithConfirmDestructive],
//     [WithServerConfirmDestructive], mirroring the configuration's
//     "confirmDestructive"). An unannotated tool is not, although the MCP
//     default calls it destructive: otherwise ModeAuto would ask about
//     every unannotated tool and mean nothing.
//   - A tool whose definition (title, description, input schema, hints)
//     changed since a call of it was last allowed is asked again, whatever the
//     mode and the session's allowances ([WithConfirmChanged]). The Policy
//     notices the change itself and tells the Approver ([Request].Changed).
//
// Tool annotations are hints from the server and may lie, so the Policy uses
// them only to ask more, never to skip a question in ModeAsk.
//
// # Failing closed
//
// A call runs only when an answer or a mode allows it. An Approver error, a
// question that outlives its [WithTimeout], or a cancelled context denies the
// call. A denial is not a crash: [Decision.DenialMessage] is the tool result
// the agent sends back to the model instead of running the tool. Every
// decision is reported to the host's audit function ([WithAudit], [Event]).
//
// An Approver that cannot answer now (the user is not on the page) returns
// [ErrDeferred]. Check denies, with an error matching it; the agent, which
// knows, stops the run with the call pending instead, and the answer given
// later goes to [Policy.Answer] (see agent.Agent.Resume).
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
package permission

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
// How a call fails closed is on [Policy.Check]; how a host plugs in its own
// approval UI, with an example, on [Approver].
package permission

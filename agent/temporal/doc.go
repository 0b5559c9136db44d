// Package temporal runs agent runs durably on Temporal (temporal.io): a
// run survives the crash or the deploy of the process that runs it, waits
// days for an approval without holding a worker, and many runs spread
// over many worker processes.
//
// # How a run is split
//
// The run's logic is the agent package's own: the workflow Run drives an
// agent.Agent whose Model, ToolSource, Policy and Runtime do no I/O
// themselves. Each model call is one activity (Chat), each tool call one
// activity (CallTool), and the catalogue of tools is read by an activity
// (Catalog) when the run starts and each time it resumes after an
// approval. The activities run in the worker, on the host's
// [Activities]: its Model, its ToolSource (an *toolset.Toolset, so MCP
// connections are pooled per worker, not per run) and its local Funcs.
// Replaying a run's history replays the same decisions with the results
// the history holds: a tool call that returned is never run again.
//
// # What is guaranteed
//
//   - A call whose activity completed is recorded in the history and never
//     executed again, whatever happens to the workers afterwards.
//   - A call interrupted by the loss of its worker (its heartbeats stop)
//     is retried only when its tool says it is safe: readOnlyHint or
//     idempotentHint true, or named in Config.Retry by the host. Any other
//     interrupted call stops the run with Output.Stop StopMayHaveRun and
//     the call in Output.MayHaveRun: it may have run, and the host decides.
//   - A model call is retried on a network failure, a 429 or a 5xx status,
//     after the server's Retry-After when it sends one.
//   - A call whose approval is deferred (the workflow's policy defers
//     every call its modes do not allow) waits for the update DecideUpdate;
//     the workflow holds no worker while it waits. The query ProgressQuery
//     returns the run's events so far and the calls waiting.
//   - Cancelling the workflow cancels the activities in flight; their
//     context is cancelled, so an MCP call is cancelled on its server
//     (notifications/cancelled, or tasks/cancel for a task).
//   - Tool outputs longer than Activities.MaxToolOutput are cut, head and
//     tail, before they enter the history; Activities.Blobs, when set,
//     stores the whole output first and the model is told its reference.
//
// The rules a host's own workflow code around Run follows are on [Run].
//
// Not supported in a durable run: skills, streaming text (TextDelta),
// typed answers (agent.RunTyped), the ToolStatus events of MCP tasks and
// the agent.Trace hooks.
//
// How the output of local-only servers (egress: local) is kept out of a
// history the host does not trust is on [Activities].
package temporal

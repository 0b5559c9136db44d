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
// # Local-only servers and the history
//
// A run's history, on the Temporal server, holds its whole conversation:
// the input, every model reply, every tool's arguments and output, the
// approvals and the result. The output of a local-only server (egress:
// local) must stay on the machines the host trusts, so:
//
//   - Whether the model is local is the worker's fact, not the
//     starter's: the Catalog activity reports whether the worker's Model
//     is on its machine (agent.Capabilities.Local), and only then does the run
//     offer local-only tools to the model. The Chat activity of a worker
//     whose model is hosted withholds local-only content whatever the
//     workflow sent, so a run moved to such a worker leaks nothing.
//   - The tools of local-only servers are offered only when
//     Activities.SealedHistory says the history may hold their output:
//     the clients of every worker and every starter seal the payloads
//     with a [Codec] (AES-256-GCM, one key they share), or the Temporal
//     server and its store are on this machine. Sealed, the server holds
//     only ciphertext; its web UI then shows sealed payloads.
//   - What the host puts in Input is stored as it is: a conversation
//     holding local-only content belongs in a sealed run only.
//
// # What a host may do around it
//
// A host's own workflow code that starts Run as a child workflow must
// follow Temporal's rules as Run does: no I/O, no goroutine (workflow.Go),
// no clock but workflow.Now, no map iteration whose order decides
// anything. Config is part of the workflow's input, hence of its history:
// it holds no credential. A change to this package or to the agent
// package that changes a run's decisions must be checked against recorded
// histories (worker.NewWorkflowReplayer), as this package's tests do.
//
// Not supported in a durable run: skills, streaming text (TextDelta),
// typed answers (agent.RunTyped), the ToolStatus events of MCP tasks and
// the agent.Trace hooks.
package temporal

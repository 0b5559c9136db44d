// Package mcp is mini-me's own client for the Model Context Protocol.
//
// A host does not start here: package
// git.rickub.com/bots-garden/mini-me/mcp/toolset, whose Discover connects
// to every server of a configuration and gathers their tools into one
// Toolset, is its entry point. This package is the client beneath it, for
// one server: for a host that talks to a server itself, or needs its
// options (Options, through toolset.Options.Client).
//
// A [Client] talks to one MCP server. [Connect] reaches it through a
// [Transport] ([HTTPTransport] for Streamable HTTP, [CommandTransport] for
// a local subprocess spoken to over stdin and stdout) and finds out which
// protocol era it speaks:
//
//   - the stateless 2026-07-28 revision, probed first with server/discover:
//     no handshake, protocol metadata in every request's _meta, and the
//     MCP-Protocol-Version, Mcp-Method, Mcp-Name and Mcp-Param-* headers;
//   - the initialize-based revisions (2025-11-25, 2025-06-18, 2025-03-26),
//     used when the probe gets a non-modern answer: session id on every
//     request, DELETE on close, a new session when the old one expires;
//   - the deprecated HTTP+SSE transport of 2024-11-05, tried last, for
//     servers that only have that.
//
// Responses may come as JSON or as an SSE stream; progress and log
// notifications reach [Options.OnProgress] and [Options.OnLog]. Every call
// takes a context: cancelling it ends the HTTP request (and, for a legacy
// server, sends notifications/cancelled). A response that had come when
// the call saw its context end is returned all the same, over every
// transport: the request ran, and its result may name a task to follow.
//
// Errors a caller branches on are typed: [*RPCError] carries the JSON-RPC
// code and data, [*HTTPError] an HTTP answer without a JSON-RPC body,
// [*AuthError] a 401 or 403 with its challenge, and the sentinels [ErrAuth], [ErrProtocol], [ErrTooLarge],
// [ErrSessionExpired], [ErrStreamBroken], [ErrInputRequired] and
// [ErrMissingToken] work with errors.Is. A tool that fails is not an error:
// its result has IsError set, for the model to read.
//
// Tokens come from environment variables ([HTTPTransport.TokenEnv]) or from
// [Credentials] such as an *oauth.Authorizer (package mcp/oauth, the OAuth
// 2.1 flow of the MCP specification), which toolset.Discover builds for servers
// whose auth type is oauth, with the host's browser step and token store. They are sent only to the
// configured origin (scheme, host and port, checked on every redirect) and
// never appear in errors or logs. Every 401 or 403, for any request (calls,
// notifications, streams, DELETE, the HTTP+SSE transport), is an
// [*AuthError] matching [ErrAuth], with the server's challenge parsed;
// a request is sent again after one at most twice (a new token, then a
// step-up), and only when the Credentials say a new token may succeed.
//
// # Local servers
//
// [CommandTransport] runs a stdio server as a subprocess in its own
// process group, with a minimal environment (the host's secrets reach only
// the servers configured to get them), its stderr forwarded to
// [Options.Logger], and a bounded shutdown that leaves no process behind.
// A server that dies fails its calls with an [*ExitError] holding the end
// of its stderr; a [RestartPolicy] may start it again. A server slow to
// start (npx or uvx downloading it) is not mistaken for a legacy one: past
// [CommandTransport.ProbeTimeout] the client sends initialize beside the
// unanswered server/discover probe and takes whichever answer settles the
// era first, so a late modern answer to the probe still makes the
// connection modern.
//
// # Many servers
//
// A host with many servers uses package mcp/toolset: its Discover
// connects to every server of a configuration at once and gathers their
// tools, prompts, resources and skills into one catalogue, built on this
// package's public API alone.
//
// # Tracing
//
// A [ClientTrace] attached to a context with [WithTrace] is called at the
// start and end of every request made with that context (a Toolset's
// discovery of each server has its own hooks, toolset.Trace); its
// TraceContext hook puts the W3C
// trace context of the host's span in the request's params._meta. The
// hooks run on the calling goroutine and must not block; without a trace
// they cost nothing. [RequestInfo.Attributes] names what is known after
// the OpenTelemetry semantic conventions for MCP; the nested module
// agent/otel maps it all to OpenTelemetry.
//
// # Requests from servers
//
// A server may ask the host for something: a completion by the host's
// model ([Options.Sample], sampling/createMessage), input from the user
// ([Options.Elicit]: a form, or with [Options.ElicitURL] a URL to open),
// or the roots the user shares ([Options.Roots]). Each is declared only
// when its handler is set and reaches the same handler in both eras: as a
// JSON-RPC request of a legacy server (answered from a goroutine of its
// own), inside the input_required result of a 2026-07-28 call (answered on
// the call's goroutine, then retried with the answers), or as a task's
// input request. The client checks each request against what it declared
// and refuses the rest as the spec says (-32602 for an undeclared mode or
// feature, -32601 with no handler, -1 for a sampling request the handler
// refused with [ErrRefused]); it never fetches an elicitation's URL, and a
// legacy server's [CodeURLElicitationRequired] error is shown through
// Elicit and the request retried once. [Client.Instructions] gives the
// server's instructions, [Client.NotifyRootsChanged] tells it the roots
// changed.
//
// # Tasks
//
// A tool that needs minutes runs as an MCP task unless the host sets
// [Options.Tasks] to [TasksOff]: in the 2025-11-25 era the client asks for
// one when the tool's execution.taskSupport requires it (or allows it,
// with [TasksWhenAllowed]); in the 2026-07-28 era it declares the
// [TasksExtension] on every request and the server decides. [Client.CallTool]
// then polls tasks/get until the task ends and returns its result as any
// call's; input the task asks for goes to [Options.Elicit],
// [Options.Sample] and [Options.Roots], as for a plain call.
// toolset.Tool.Task says how a tool of a Toolset runs, [WithTaskObserver]
// reports each step of a call, and [Client.AwaitTask] (or
// toolset.Toolset.AwaitTask) follows a task created before a restart, from
// its id.
//
// # Deliberate limits
//
// The client offers elicitation, sampling and roots only when the host
// sets [Options.Elicit], [Options.Sample] or [Options.Roots], and hosts
// no tasks of its own (it only calls tools as tasks). A sampling request
// has at most 1000 messages; a URL-mode elicitation's URL at most 8 KiB,
// and a URLElicitationRequired error at most 8 URLs. A connection answers
// at most [Options.MaxServerRequests] ([DefaultMaxServerRequests], 16)
// legacy server requests at once, the others at once with an error; one
// input_required round carries at most [MaxInputRequests] (64) input
// requests, the call failing before any handler runs when it carries more.
// A listing keeps at most [Options.MaxListItems] ([DefaultMaxListItems],
// 10,000) items, and the pages' responses past [Options.MaxListBytes]
// ([DefaultMaxListBytes], 64 MiB), over at most 1000 pages, cut with a
// warning ([Options.OnListCut]) when the server lists more.
//
// A task-backed call is bounded, and each bound is an error that works
// with errors.Is:
//
//   - the caller's context, or [Options.TaskTimeout] ([DefaultTaskTimeout],
//     30 min) when it has no deadline ([ErrTaskTimeout]); either way the
//     task is cancelled with tasks/cancel on a fresh context of 5 s, as it
//     is when the call fails for any reason but the task's own end, its
//     loss, or Close (after Close the task runs on, for AwaitTask);
//   - the task's ttl: a task still running one poll after its ttl, counted
//     on the client's clock from when the call first saw the task (the
//     server's createdAt is not trusted to match it), is given up
//     ([ErrTaskExpired]);
//   - a task the server no longer knows (-32602 on tasks/get) is
//     [ErrTaskLost]; a failed task [ErrTaskFailed], wrapping the server's
//     [*RPCError] when there is one; a task the server cancelled
//     [ErrTaskCancelled]. A completed task whose result has IsError is a
//     tool error, returned as a result;
//   - a server that reports a status after a terminal one, another task's
//     id, an input key reused for another request, more than
//     [MaxInputRequests] (64) input requests or more than 10,000 status
//     changes for one task breaks the
//     rules ([ErrTaskMisbehaved]);
//   - polls follow the server's interval, clamped to [MinTaskPollInterval]
//     (50 ms) and [MaxTaskPollInterval] (30 s), [DefaultTaskPollInterval]
//     (1 s) when it gives none; each tasks/get, tasks/update and
//     tasks/cancel is bounded by 30 s, a blocking 2025-11-25 tasks/result
//     by 10 min (polling then resumes), and three transport failures of
//     tasks/get in a row end the call. Task status notifications are not
//     listened to: polling alone drives the call, so no server can make
//     the client poll faster. A task observer that falls behind gets the
//     first 16 steps queued and the newest in place of the rest; it never
//     holds up the call. A task's id may be a bearer token for its result,
//     so the observer alone gets it: the errors and logs of a call do not
//     quote it.
//
// A request is sent twice only when that cannot make it run twice. The one
// rule, for both eras and every way a request can be lost:
//
//   - A request the server provably did not run is sent again, once: a
//     version it refused (-32022), or a
//     header mismatch (-32001), once the tools are listed again.
//   - A request that may have run is sent again only when it is safe to
//     repeat: a listing or a read, or a tools/call of a tool annotated
//     read-only or idempotent when [Options.TrustToolHints] is set (the
//     client lists the tools itself, once, to learn the hints, if the
//     host did not). Annotations are hints a server may get wrong: that
//     is the host's call.
//   - It may have run when its legacy session was lost (a 404, or a 400
//     that speaks of the session: the session may have been lost after
//     the call ran) and when its response stream broke with nothing to
//     resume from (a modern stream, or a legacy one without an event id;
//     a legacy stream with one is resumed with GET and Last-Event-ID
//     instead, which repeats nothing).
//   - Otherwise the caller gets [ErrSessionExpired] (a new session is
//     ready: the next call works) or [ErrStreamBroken], and decides.
package mcp

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
// Errors a caller branches on are typed: [*RPCError] carries the JSON-RPC
// code and data, [*HTTPError] an HTTP answer without a JSON-RPC body,
// [*AuthError] a 401 or 403 with its challenge, and the sentinels [ErrAuth], [ErrProtocol], [ErrTooLarge],
// [ErrSessionExpired], [ErrStreamBroken], [ErrInputRequired] and
// [ErrMissingToken] work with errors.Is. A tool that fails is not an error:
// its result has IsError set, for the model to read.
//
// A host with many servers uses package mcp/toolset: its Discover
// connects to every server of a configuration at once and gathers their
// tools, prompts, resources and skills into one catalogue, built on this
// package's public API alone.
//
// # Where the details are
//
//   - responses, notifications and cancellation: [Client];
//   - tokens, and where they may go: [Credentials];
//   - local servers over stdio: [CommandTransport];
//   - requests from servers (sampling, elicitation, roots) and the limits
//     of a connection: [Options];
//   - tasks, and the bounds of a task-backed call: [Client.CallTool];
//   - when a request is sent twice: [Transport];
//   - tracing: [ClientTrace].
package mcp

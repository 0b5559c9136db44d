// Package apps is the host side of MCP Apps (the io.modelcontextprotocol/ui
// extension, SEP-1865, dialect 2026-01-26): interactive HTML views that an
// MCP server attaches to its tools, which a host renders in a sandboxed
// iframe beside the conversation.
//
// Its one job is to keep a host from getting the security-sensitive parts
// wrong:
//
//   - [Declare] advertises the extension in an mcp.Options, in both
//     protocol eras, so that servers offer their UI tools;
//   - [ToolMeta] reads a tool's _meta.ui (resourceUri, visibility);
//     [ForModel] and [ForApp] say who may see and call it: a tool whose
//     visibility lacks "model" must never be offered to a model, a tool
//     whose visibility lacks "app" must never be called by a view;
//   - [Cache] fetches a view's ui:// resource from the tool's own server,
//     checks it (MIME type text/html;profile=mcp-app, the URI asked, the
//     listing's type, a size bound) and keeps it for the session;
//   - [ContentSecurityPolicy] builds the policy the view's document must be
//     served under from the resource's metadata: deny by default, only
//     declared origins, every malformed entry dropped, and no origin on
//     the user's machine or local network ([Networks]) unless the view's
//     server is there too ([ContentSecurityPolicyFor], [ServerNetworks]);
//   - [Bridge] is the host end of the JSON-RPC link with one view. A web or
//     desktop host plugs it into its own transport to the iframe (a
//     postMessage relay, a WebSocket, a webview channel): the host hands it
//     each message the view sent (Bridge.Handle) and delivers what it sends
//     (Bridge.Send). The bridge answers ui/initialize with the host
//     context, tells the view the tool's input and result, and checks every
//     request the view makes before anything reaches the server or the
//     user.
//
// # Every message from a view is untrusted
//
// A view is HTML a server wrote. The bridge treats each of its messages as
// hostile input: it is bounded in size (Bridge.MaxMessageSize), parsed as
// one JSON-RPC 2.0 object, and its method must be one the bridge knows;
// nothing in it is ever executed or evaluated. A tools/call reaches only
// the view's own server (Bridge.Server), only for a tool that server lists
// with "app" in its visibility, and only after the host's permission
// policy (Bridge.Policy) allowed it, as for a model's call, with the
// request's Caller naming the view. resources/read reaches only the view's
// own server and its answer is bounded. ui/message and
// ui/update-model-context go to the host's callbacks as plain text blocks;
// ui/open-link goes to the host's OpenLink only for an http or https URL,
// and the host asks the user first. A request the bridge refuses is
// answered with a JSON-RPC error (-32000 for a refusal, -32601 for an
// unknown method, -32602 for bad params) and logged; a bad notification is
// dropped and logged.
//
// # Limits
//
// DefaultMaxMessageSize bounds one message from a view, DefaultMaxHTML a
// view's document, DefaultMaxResult what a proxied call or read may return
// to the view, DefaultMaxInFlight the requests of one view running at once,
// DefaultTeardownWait how long Close waits for the view to acknowledge
// ui/resource-teardown.
//
// Not implemented: app-provided tools (the host calling tools the view
// declares), ui/download-file, sampling from a view, tool-input-partial.
// The bridge does not advertise them, and answers their methods with
// -32601.
package apps

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// ClientTrace is a set of hooks that watch a Client's requests and a
// Toolset's discovery, in the manner of net/http/httptrace: attach one to
// a context with [WithTrace], and every request made with that context, or
// one derived from it, reports to it. The package never depends on a
// tracing system; an adapter (the nested module agent/otel, for
// OpenTelemetry) maps the hooks to spans and metrics, with the attribute
// names the Attributes methods give.
//
// Every field may be nil. Hooks run synchronously, on the goroutine that
// made the call, while the call waits: they must be fast and must not
// block (hand slow work to a goroutine of your own). They may run at the
// same time for concurrent calls. What they are given is read-only and
// must not be kept once the matching Done hook returns.
//
// A Start hook returns the context the request carries from then on, and
// that the matching Done hook gets: an adapter starts a span there and
// finds it again at the end. Returning nil keeps the context unchanged.
// Done is called once for every Start, whatever the outcome.
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
type ClientTrace struct {
	// RequestStart is called before a request is sent, RequestDone once
	// its answer came (or the call failed). Notifications are not
	// reported; a request sent again (a new session, a retried version)
	// stays one request, whose ID is the last one sent. The legacy
	// initialize is reported, with the ProtocolVersion in use before it
	// ("" at the first).
	RequestStart func(ctx context.Context, req *RequestInfo) context.Context
	RequestDone  func(ctx context.Context, req *RequestInfo, res *RequestResult)

	// TraceContext, when set, returns the W3C trace context of ctx (the
	// context RequestStart returned): a traceparent, and a tracestate
	// when there is one. They are sent in the request's params._meta, the
	// place the MCP specification reserves for them, so that the server's
	// spans join the host's trace. A traceparent that is not of the W3C
	// form (version 00), or whose trace or parent id is all zeros, is not
	// sent.
	TraceContext func(ctx context.Context) (traceparent, tracestate string)
}

type traceKey struct{}

// WithTrace returns a context carrying t. When ctx already carries a
// trace, both are called: the outer one's Start hooks first, its Done
// hooks last, and t's TraceContext, if set, wins over the outer one's.
func WithTrace(ctx context.Context, t *ClientTrace) context.Context {
	if old := ContextTrace(ctx); old != nil {
		t = composeTrace(old, t)
	}
	return context.WithValue(ctx, traceKey{}, t)
}

// ContextTrace returns the trace ctx carries, or nil.
func ContextTrace(ctx context.Context) *ClientTrace {
	t, _ := ctx.Value(traceKey{}).(*ClientTrace)
	return t
}

// composeTrace returns a trace calling outer's hooks around inner's.
func composeTrace(outer, inner *ClientTrace) *ClientTrace {
	t := &ClientTrace{
		RequestStart: nestStart(outer.RequestStart, inner.RequestStart),
		RequestDone:  nestDone(outer.RequestDone, inner.RequestDone),
		TraceContext: inner.TraceContext,
	}
	if t.TraceContext == nil {
		t.TraceContext = outer.TraceContext
	}
	return t
}

// nestStart calls outer then inner, each with the context the one before
// returned.
func nestStart[I any](outer, inner func(context.Context, I) context.Context) func(context.Context, I) context.Context {
	switch {
	case outer == nil:
		return inner
	case inner == nil:
		return outer
	}
	return func(ctx context.Context, info I) context.Context {
		ctx = keep(ctx, outer(ctx, info))
		return keep(ctx, inner(ctx, info))
	}
}

// nestDone calls inner then outer.
func nestDone[I, R any](outer, inner func(context.Context, I, R)) func(context.Context, I, R) {
	switch {
	case outer == nil:
		return inner
	case inner == nil:
		return outer
	}
	return func(ctx context.Context, info I, res R) {
		inner(ctx, info, res)
		outer(ctx, info, res)
	}
}

// keep returns next, or ctx when a hook returned nil.
func keep(ctx, next context.Context) context.Context {
	if next == nil {
		return ctx
	}
	return next
}

// RequestInfo describes one request, for the trace hooks.
type RequestInfo struct {
	// Server is Options.ServerName: the server's name in the
	// configuration, for a Client of a Toolset.
	Server string
	// Method is the JSON-RPC method, such as "tools/call".
	Method string
	// Name is the tool of a tools/call or the prompt of a prompts/get.
	Name string
	// ResourceURI is the resource of a resources/read or a subscription.
	ResourceURI string
	// ID is the JSON-RPC request id.
	ID int64
	// ProtocolVersion is the MCP version in use, "" before negotiation.
	ProtocolVersion string
	// SessionID is the legacy Streamable HTTP session, when there is one.
	SessionID string
	// Transport is the network transport: "tcp" for HTTP, "unix" for a
	// unix socket, "pipe" for a subprocess's stdio, "" when not known.
	Transport string
	// Address and Port are the server's host (or socket path) and port,
	// for HTTP and unix sockets.
	Address string
	Port    int
}

// SpanName is the name the MCP semantic conventions give the request's
// span: the method, then the tool or prompt name if any
// ("tools/call get_weather").
func (r *RequestInfo) SpanName() string {
	if r.Name != "" {
		return r.Method + " " + r.Name
	}
	return r.Method
}

// Attributes returns what is known of the request when it starts, named
// after the OpenTelemetry semantic conventions for MCP: mcp.method.name,
// gen_ai.operation.name (execute_tool for tools/call), gen_ai.tool.name or
// gen_ai.prompt.name, mcp.resource.uri, jsonrpc.request.id,
// mcp.protocol.version, mcp.session.id, network.transport, server.address
// and server.port; those without a value are left out. Values are strings
// or ints.
func (r *RequestInfo) Attributes() []slog.Attr {
	a := make([]slog.Attr, 0, 10)
	a = append(a, slog.String("mcp.method.name", r.Method))
	switch r.Method {
	case "tools/call":
		a = append(a, slog.String("gen_ai.operation.name", "execute_tool"), slog.String("gen_ai.tool.name", r.Name))
	case "prompts/get":
		a = append(a, slog.String("gen_ai.prompt.name", r.Name))
	}
	a = stringAttr(a, "mcp.resource.uri", r.ResourceURI)
	a = append(a, slog.String("jsonrpc.request.id", strconv.FormatInt(r.ID, 10)))
	a = stringAttr(a, "mcp.protocol.version", r.ProtocolVersion)
	a = stringAttr(a, "mcp.session.id", r.SessionID)
	a = stringAttr(a, "network.transport", r.Transport)
	a = stringAttr(a, "server.address", r.Address)
	if r.Port > 0 {
		a = append(a, slog.Int("server.port", r.Port))
	}
	return a
}

func stringAttr(a []slog.Attr, key, value string) []slog.Attr {
	if value == "" {
		return a
	}
	return append(a, slog.String(key, value))
}

// RequestResult is how a request ended.
type RequestResult struct {
	// Err is the call's error; nil when an answer came, a tool's own
	// failure (IsError) included.
	Err error
	// ErrorType classifies a failure for error.type: "tool_error" for a
	// tool result with IsError, the JSON-RPC error code ("-32602") for an
	// error answer, the HTTP status ("503") for an HTTP error,
	// "timeout", "canceled", "closed", "session_expired",
	// "stream_broken", "auth", "protocol" or "_OTHER"; "" on success.
	ErrorType string
	// Duration is the time from RequestStart to RequestDone.
	Duration time.Duration
}

// Attributes returns error.type (and, for a JSON-RPC error,
// rpc.response.status_code) when the request failed, else nothing.
func (r *RequestResult) Attributes() []slog.Attr {
	if r.ErrorType == "" {
		return nil
	}
	a := []slog.Attr{slog.String("error.type", r.ErrorType)}
	var rpc *RPCError
	if errors.As(r.Err, &rpc) {
		a = append(a, slog.String("rpc.response.status_code", strconv.Itoa(rpc.Code)))
	}
	return a
}

// errorType classifies err for RequestResult.ErrorType.
func errorType(err error, toolError bool) string {
	var rpc *RPCError
	var hErr *HTTPError
	switch {
	case err == nil && toolError:
		return "tool_error"
	case err == nil:
		return ""
	case errors.As(err, &rpc):
		return strconv.Itoa(rpc.Code)
	case errors.As(err, &hErr):
		return strconv.Itoa(hErr.StatusCode)
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	for _, s := range []struct {
		err  error
		name string
	}{{ErrClosed, "closed"}, {ErrSessionExpired, "session_expired"}, {ErrStreamBroken, "stream_broken"},
		{ErrAuth, "auth"}, {ErrProtocol, "protocol"}} {
		if errors.Is(err, s.err) {
			return s.name
		}
	}
	return "_OTHER"
}

// traceRequest reports r's start to t and returns the context the request
// goes on with and the func that reports its end. It adds the trace
// context to r's _meta.
func (c *Client) traceRequest(ctx context.Context, t *ClientTrace, r *outgoing, result any) (context.Context, func(error)) {
	p := c.state()
	info := &RequestInfo{Server: c.opts.ServerName, Method: r.method, ID: r.id, ProtocolVersion: p.version,
		Transport: c.peer.transport, Address: c.peer.address, Port: c.peer.port}
	switch {
	case r.method == "tools/call" || r.method == "prompts/get":
		info.Name = r.name
	case strings.HasPrefix(r.method, "resources/"):
		info.ResourceURI = r.name
	}
	if s, ok := c.conn.(interface{ sessionID() string }); ok {
		info.SessionID = s.sessionID()
	}
	start := time.Now()
	if t.RequestStart != nil {
		ctx = keep(ctx, t.RequestStart(ctx, info))
	}
	if t.TraceContext != nil {
		if m, ok := r.params.(paramsWithMeta); ok {
			if parent, state := t.TraceContext(ctx); validTraceparent(parent) {
				m.setMeta(withTraceContext(m.meta(), parent, state))
			}
		}
	}
	return ctx, func(err error) {
		if t.RequestDone == nil {
			return
		}
		info.ID = r.id
		w, _ := result.(*callToolWire)
		t.RequestDone(ctx, info, &RequestResult{Err: err, ErrorType: errorType(err, w != nil && w.IsError), Duration: time.Since(start)})
	}
}

// tracedRoundTrip is conn.roundTrip reported to the trace of ctx, for a
// request sent outside call: the legacy initialize.
func (c *Client) tracedRoundTrip(ctx context.Context, r *outgoing, result any) (err error) {
	if t := ContextTrace(ctx); t != nil {
		var done func(error)
		ctx, done = c.traceRequest(ctx, t, r, result)
		defer func() { done(err) }()
	}
	return c.conn.roundTrip(ctx, r, result)
}

// validTraceparent reports a W3C traceparent of version 00:
// 00-<32 hex>-<16 hex>-<2 hex>, lower case, with neither id all zeros
// (which W3C Trace Context makes invalid).
func validTraceparent(s string) bool {
	const noTrace, noParent = "00000000000000000000000000000000", "0000000000000000"
	if len(s) != 55 || s[:3] != "00-" || s[35] != '-' || s[52] != '-' || s[3:35] == noTrace || s[36:52] == noParent {
		return false
	}
	for i := 3; i < 55; i++ {
		if i == 35 || i == 52 {
			continue
		}
		if !strings.ContainsRune("0123456789abcdef", rune(s[i])) {
			return false
		}
	}
	return true
}

// withTraceContext returns meta (a JSON object, or empty) with traceparent
// and tracestate set; a tracestate left by an earlier attempt goes when
// state is empty.
func withTraceContext(meta json.RawMessage, parent, state string) json.RawMessage {
	m := map[string]json.RawMessage{}
	if len(meta) > 0 {
		_ = json.Unmarshal(meta, &m) // our own JSON
	}
	m["traceparent"], _ = json.Marshal(parent)
	delete(m, "tracestate")
	if state != "" && len(state) <= 512 {
		m["tracestate"], _ = json.Marshal(state)
	}
	b, _ := json.Marshal(m) // strings and raw JSON we made
	return b
}

// peer is where a Client's server is, for the trace hooks.
type peer struct {
	transport, address string
	port               int
}

// peerOf describes the server t reaches.
func peerOf(t Transport) peer {
	switch t := t.(type) {
	case *CommandTransport:
		return peer{transport: "pipe"}
	case *HTTPTransport:
		u, err := url.Parse(t.URL)
		if err != nil {
			return peer{}
		}
		if u.Scheme == "unix" {
			sock, _, _ := strings.Cut(u.Path, ":/")
			return peer{transport: "unix", address: sock}
		}
		port, _ := strconv.Atoi(u.Port())
		if port == 0 {
			port = map[string]int{"http": 80, "https": 443}[u.Scheme]
		}
		return peer{transport: "tcp", address: u.Hostname(), port: port}
	}
	return peer{}
}

// sessionID returns the legacy session, for the trace hooks.
func (h *httpConn) sessionID() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.modern {
		return ""
	}
	return h.session
}

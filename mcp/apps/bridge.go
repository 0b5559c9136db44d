package apps

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strconv"
	"sync"
	"time"

	"git.rickub.com/bots-garden/mini-me/internal/jsonrpc"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// Default limits of a Bridge, used where its field is zero.
const (
	// DefaultMaxMessageSize bounds one message from a view, in bytes.
	DefaultMaxMessageSize = 1 << 20
	// DefaultMaxResult bounds what a proxied tools/call or resources/read
	// returns to the view, in bytes of JSON.
	DefaultMaxResult = 8 << 20
	// DefaultMaxInFlight bounds the requests of one view being answered
	// at once; more are refused.
	DefaultMaxInFlight = 8
	// DefaultCallTimeout bounds a request of the view that reaches the
	// server or the host's callbacks.
	DefaultCallTimeout = 2 * time.Minute
	// DefaultTeardownWait bounds how long Close waits for the view to
	// answer ui/resource-teardown.
	DefaultTeardownWait = 3 * time.Second
)

// maxText bounds the text of a ui/message or ui/update-model-context, in
// bytes, and maxMethod a method name.
const (
	maxText   = 64 << 10
	maxMethod = 128
	maxID     = 128
)

// JSON-RPC error codes a Bridge answers a view with.
const (
	CodeParse          = jsonrpc.CodeParseError
	CodeInvalidRequest = jsonrpc.CodeInvalidRequest
	CodeUnknownMethod  = jsonrpc.CodeMethodNotFound
	CodeInvalidParams  = jsonrpc.CodeInvalidParams
	// CodeRefused answers a request the host refused: not allowed by the
	// policy, the user, the tool's visibility, the handshake order or a
	// limit.
	CodeRefused = -32000
)

// Errors of a Bridge.
var (
	// ErrClosed: the bridge was closed.
	ErrClosed = errors.New("apps: bridge closed")
	// ErrBadMessage: a message from the view was not a JSON-RPC 2.0
	// object the bridge could read.
	ErrBadMessage = errors.New("apps: bad message from the view")
	// ErrOrder: tool input and result were given out of order or twice.
	ErrOrder = errors.New("apps: tool notifications out of order")
)

// Bridge is the host end of the JSON-RPC link with one view: one rendered
// instance of an MCP App. The host creates one per view, with Server and
// Send set, passes each message the view sends to Handle, and gives the
// view the tool's input and result (ToolInput, ToolResult) and context
// changes (SetContext); Close tears the view down.
//
// Message, ModelContext and OpenLink, and the calls to the server, run on
// goroutines of the bridge's own, never the one that called Handle, with a
// context that ends when the request's time is up (CallTimeout) or the
// bridge closes: they may wait for the user, but must return once ctx
// ends, since Close waits for them. Resize, DisplayModeChanged
// and TeardownRequested are told on the goroutine that called Handle, and
// must return quickly. A nil callback refuses what it would have
// answered, and the bridge does not advertise it.
//
// A Bridge is safe for concurrent use once its fields are set; they must
// not change after the first Handle, and it must not be copied.
type Bridge struct {
	// Server is the view's own server, the one whose tool named the view:
	// the only server its requests reach. Required.
	Server Server
	// ServerName names it in permission requests and logs.
	ServerName string
	// ResourceURI is the view's ui:// URI: it names the view as the
	// Caller of its permission requests ("app " + ResourceURI).
	ResourceURI string
	// Policy decides the view's tools/call requests (see
	// permission.Checker; *permission.Policy is one, with the same rules
	// as for a model's call); nil refuses them all. The request's Caller
	// names the view. A decision the policy defers
	// (permission.ErrDeferred) refuses the view's call: a view waits for
	// its answer, it cannot be resumed later.
	Policy permission.Checker
	// HostInfo names the host to the view.
	HostInfo mcp.Implementation
	// Context is the host context given in ui/initialize; SetContext
	// changes it.
	Context HostContext
	// Sandbox is what the host applied to the view's frame, reported to
	// the view: the CSP origins kept and the permissions granted.
	Sandbox Sandbox

	// Send delivers a message to the view: a response, a notification or
	// a request of the host. Required. Calls are never concurrent; Send
	// should not block for long, since a reply waits for it. An error is
	// logged, and the message is lost.
	Send func(msg []byte) error
	// Message adds a ui/message to the conversation as a message from
	// the user, attributed to the view, and should start a turn (see
	// agent.Inbox). content is text blocks only. An error refuses it.
	Message func(ctx context.Context, content []mcp.Content) error
	// ModelContext replaces the context the view gives the model for its
	// next turn (ui/update-model-context); it must not start a turn.
	// content is text blocks only, structured a JSON object or nil.
	ModelContext func(ctx context.Context, content []mcp.Content, structured json.RawMessage) error
	// OpenLink asks the user whether to open u, an http or https URL, and
	// opens it if they agree; an error (the user said no) refuses it.
	OpenLink func(ctx context.Context, u *url.URL) error
	// Resize is told the size the view asks for (ui/notifications/
	// size-changed), in CSS pixels, clamped to the container's maximum
	// dimensions; a value of 0 was not given.
	Resize func(width, height int)
	// DisplayModeChanged is told the mode the view switched to, after
	// the bridge checked it is one both the host (Context.
	// AvailableDisplayModes) and the view offer.
	DisplayModeChanged func(mode string)
	// TeardownRequested is told that the view asks to be closed; the
	// host may then call Close.
	TeardownRequested func()
	// Logger receives the audit of what the view asked and what was
	// refused; nil discards it.
	Logger *slog.Logger

	// MaxMessageSize, MaxResult, MaxInFlight, CallTimeout and
	// TeardownWait are limits; zero means the Default of the same name.
	MaxMessageSize int
	MaxResult      int
	MaxInFlight    int
	CallTimeout    time.Duration
	TeardownWait   time.Duration

	once  sync.Once
	life  context.Context
	end   context.CancelFunc
	slots chan struct{}
	wg    sync.WaitGroup

	sendMu sync.Mutex
	mu     sync.Mutex
	closed bool
	ready  bool     // ui/notifications/initialized seen
	queue  [][]byte // host notifications waiting for ready
	input  bool     // tool-input given
	done   bool     // tool-result or tool-cancelled given
	modes  []string // the view's availableDisplayModes
	tools  []mcp.Tool
	listed bool
	nextID int
	// waits are the host's requests to the view awaiting an answer.
	waits map[string]chan struct{}
}

// HostContext is what the host tells a view about where it is shown
// (McpUiHostContext). Every field is optional.
type HostContext struct {
	// ToolInfo is the tool call the view shows.
	ToolInfo *ToolInfo `json:"toolInfo,omitempty"`
	// Theme is "light" or "dark".
	Theme string `json:"theme,omitempty"`
	// Styles are the host's style variables and fonts, as raw JSON.
	Styles json.RawMessage `json:"styles,omitempty"`
	// DisplayMode is "inline", "fullscreen" or "pip".
	DisplayMode string `json:"displayMode,omitempty"`
	// AvailableDisplayModes are the modes the host supports; nil means
	// only "inline".
	AvailableDisplayModes []string `json:"availableDisplayModes,omitempty"`
	// ContainerDimensions says how the view is sized.
	ContainerDimensions *Dimensions `json:"containerDimensions,omitempty"`
	// Locale is a BCP 47 tag, TimeZone an IANA zone.
	Locale   string `json:"locale,omitempty"`
	TimeZone string `json:"timeZone,omitempty"`
	// UserAgent names the host application.
	UserAgent string `json:"userAgent,omitempty"`
	// Platform is "web", "desktop" or "mobile".
	Platform string `json:"platform,omitempty"`
}

// ToolInfo is the tool call a view shows.
type ToolInfo struct {
	// ID is the JSON-RPC id of the tools/call, raw; nil when unknown.
	ID json.RawMessage `json:"id,omitempty"`
	// Tool is the tool's definition.
	Tool mcp.Tool `json:"tool"`
}

// Dimensions are a view's container size, in CSS pixels: a fixed Height
// or Width means the host sizes the frame, a Max or a zero value means the
// view sizes itself.
type Dimensions struct {
	Height    int `json:"height,omitempty"`
	MaxHeight int `json:"maxHeight,omitempty"`
	Width     int `json:"width,omitempty"`
	MaxWidth  int `json:"maxWidth,omitempty"`
}

// Sandbox is what the host applied to a view's frame.
type Sandbox struct {
	// CSP is the origins the view's policy allows; nil for the default.
	CSP *CSP `json:"csp,omitempty"`
	// Permissions are the features granted.
	Permissions Permissions `json:"permissions"`
}

func (b *Bridge) init() {
	b.once.Do(func() {
		b.life, b.end = context.WithCancel(context.Background())
		b.slots = make(chan struct{}, limit(b.MaxInFlight, DefaultMaxInFlight))
		b.waits = map[string]chan struct{}{}
		if b.Logger == nil {
			b.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		}
		b.Logger = b.Logger.With("server", b.ServerName, "resource", b.ResourceURI)
	})
}

func limit[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Handle takes one message the view sent. Call it with the view's
// messages in the order they came, from one goroutine at a time: the
// handshake depends on that order. Handle does not wait for the server or
// the user: a request is answered through Send, at once when the bridge
// refuses it or can answer alone, else from a goroutine of the bridge.
// The error says why a message was dropped or refused (ErrBadMessage,
// ErrClosed, or the refusal sent to the view), for the host to log; the
// host need not act on it.
func (b *Bridge) Handle(msg []byte) error {
	b.init()
	b.mu.Lock()
	closed := b.closed
	b.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if len(msg) > limit(b.MaxMessageSize, DefaultMaxMessageSize) {
		b.Logger.Warn("apps: message from the view too large, dropped", "bytes", len(msg))
		return fmt.Errorf("%w: %d bytes, over %d", ErrBadMessage, len(msg), limit(b.MaxMessageSize, DefaultMaxMessageSize))
	}
	var m jsonrpc.Message
	raw := json.RawMessage{}
	m.Result = &raw
	trimmed := bytes.TrimSpace(msg)
	if len(trimmed) == 0 || trimmed[0] != '{' || json.Unmarshal(trimmed, &m) != nil {
		b.reply(nil, nil, &jsonrpc.Error{Code: CodeParse, Message: "not a JSON-RPC object"})
		return fmt.Errorf("%w: not a JSON object", ErrBadMessage)
	}
	if err := m.Check(); err != nil || len(m.ID) > maxID || len(m.Method) > maxMethod ||
		len(m.Params) > 0 && !isObjectJSON(m.Params) {
		if len(m.ID) > 0 && m.ID.Valid() && len(m.ID) <= maxID {
			b.reply(m.ID, nil, &jsonrpc.Error{Code: CodeInvalidRequest, Message: "invalid request"})
		}
		return fmt.Errorf("%w: invalid JSON-RPC envelope", ErrBadMessage)
	}
	switch {
	case m.IsResponse():
		b.answered(m.ID)
		return nil
	case m.IsNotification():
		return b.notification(m.Method, m.Params)
	}
	return b.request(m.ID, m.Method, m.Params)
}

// isObjectJSON reports whether raw is a JSON object (already known valid).
func isObjectJSON(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{'
}

// refusal is a request the bridge refused, as an error for Handle.
type refusal struct {
	code int
	msg  string
}

func (r refusal) Error() string { return fmt.Sprintf("apps: refused (%d): %s", r.code, r.msg) }

// fail answers id with an error and returns it as Handle's error.
func (b *Bridge) fail(id jsonrpc.ID, method string, code int, msg string) error {
	e := &jsonrpc.Error{Code: code, Message: msg}
	b.Logger.Info("apps: view request refused", "method", method, "code", code, "reason", msg)
	b.reply(id, nil, e)
	return refusal{code, msg}
}

// reply sends a response; a nil id answers a message whose id is unknown.
func (b *Bridge) reply(id jsonrpc.ID, result any, e *jsonrpc.Error) {
	r := jsonrpc.Response{JSONRPC: jsonrpc.Version, ID: id, Result: result, Error: e}
	if e == nil && result == nil {
		r.Result = struct{}{}
	}
	out, err := json.Marshal(r)
	if err != nil {
		b.Logger.Error("apps: encoding a response", "err", err)
		out, _ = json.Marshal(jsonrpc.Response{JSONRPC: jsonrpc.Version, ID: id,
			Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error"}})
	}
	b.send(out)
}

func (b *Bridge) send(msg []byte) {
	b.sendMu.Lock()
	defer b.sendMu.Unlock()
	if err := b.Send(msg); err != nil {
		b.Logger.Warn("apps: sending to the view", "err", err)
	}
}

// notify sends a host notification, or queues it until the view is
// initialized.
func (b *Bridge) notify(method string, params any) error {
	out, err := json.Marshal(jsonrpc.Request{JSONRPC: jsonrpc.Version, Method: method, Params: params})
	if err != nil {
		return fmt.Errorf("apps: %s: %w", method, err)
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return ErrClosed
	}
	if !b.ready {
		b.queue = append(b.queue, out)
		b.mu.Unlock()
		return nil
	}
	b.mu.Unlock()
	b.send(out)
	return nil
}

// ToolInput gives the view the arguments of the tool call it shows
// (ui/notifications/tool-input), once, before ToolResult. Nothing reaches
// the view before it is initialized: until then the bridge keeps it.
func (b *Bridge) ToolInput(args json.RawMessage) error {
	b.init()
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	if !isObjectJSON(args) || !json.Valid(args) {
		return fmt.Errorf("apps: tool input: not a JSON object")
	}
	b.mu.Lock()
	if b.input {
		b.mu.Unlock()
		return fmt.Errorf("%w: tool input given twice", ErrOrder)
	}
	b.input = true
	b.mu.Unlock()
	return b.notify("ui/notifications/tool-input", map[string]any{"arguments": args})
}

// ToolResult gives the view the result of the tool call it shows
// (ui/notifications/tool-result), unchanged, once, after ToolInput.
func (b *Bridge) ToolResult(res *mcp.CallToolResult) error {
	if err := b.finish(); err != nil {
		return err
	}
	return b.notify("ui/notifications/tool-result", res)
}

// ToolCancelled tells the view the tool call it shows did not finish
// (ui/notifications/tool-cancelled): it was cancelled, denied or failed.
func (b *Bridge) ToolCancelled(reason string) error {
	if err := b.finish(); err != nil {
		return err
	}
	return b.notify("ui/notifications/tool-cancelled", map[string]string{"reason": reason})
}

func (b *Bridge) finish() error {
	b.init()
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.done:
		return fmt.Errorf("%w: tool result given twice", ErrOrder)
	case !b.input:
		return fmt.Errorf("%w: tool result before tool input", ErrOrder)
	}
	b.done = true
	return nil
}

// SetContext changes the host context: the fields of change that are set
// replace the current ones, and the view is sent them
// (ui/notifications/host-context-changed).
func (b *Bridge) SetContext(change HostContext) error {
	b.init()
	b.mu.Lock()
	merge(&b.Context, change)
	b.mu.Unlock()
	return b.notify("ui/notifications/host-context-changed", change)
}

// merge copies the fields set in c into dst.
func merge(dst *HostContext, c HostContext) {
	if c.ToolInfo != nil {
		dst.ToolInfo = c.ToolInfo
	}
	if c.Styles != nil {
		dst.Styles = c.Styles
	}
	if c.AvailableDisplayModes != nil {
		dst.AvailableDisplayModes = c.AvailableDisplayModes
	}
	if c.ContainerDimensions != nil {
		dst.ContainerDimensions = c.ContainerDimensions
	}
	for _, f := range []struct {
		dst *string
		v   string
	}{{&dst.Theme, c.Theme}, {&dst.DisplayMode, c.DisplayMode},
		{&dst.Locale, c.Locale}, {&dst.TimeZone, c.TimeZone}, {&dst.UserAgent, c.UserAgent}, {&dst.Platform, c.Platform}} {
		if f.v != "" {
			*f.dst = f.v
		}
	}
}

// Close tears the view down: it sends ui/resource-teardown to an
// initialized view and waits for its answer, at most TeardownWait or
// until ctx ends; then it cancels the view's requests in flight, waits for
// them, and refuses every later message. Close is idempotent. The error
// says the view did not answer in time; the bridge is closed all the same,
// and the host may remove the frame.
func (b *Bridge) Close(ctx context.Context) error {
	b.init()
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	var wait chan struct{}
	var out []byte
	if b.ready {
		b.nextID++
		id := "teardown-" + strconv.Itoa(b.nextID)
		wait = make(chan struct{})
		b.waits[strconv.Quote(id)] = wait
		out, _ = json.Marshal(jsonrpc.Request{JSONRPC: jsonrpc.Version, ID: jsonrpc.ID(strconv.Quote(id)),
			Method: "ui/resource-teardown", Params: struct{}{}})
	}
	b.mu.Unlock()
	var err error
	if wait != nil {
		b.send(out)
		t := time.NewTimer(limit(b.TeardownWait, DefaultTeardownWait))
		select {
		case <-wait:
		case <-t.C:
			err = errors.New("apps: the view did not answer ui/resource-teardown in time")
		case <-ctx.Done():
			err = fmt.Errorf("apps: waiting for the view's teardown: %w", ctx.Err())
		}
		t.Stop()
	}
	b.mu.Lock()
	b.closed = true
	b.queue = nil
	b.mu.Unlock()
	b.end()
	b.wg.Wait()
	return err
}

// answered takes the view's answer to a request of the host.
func (b *Bridge) answered(id jsonrpc.ID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if w, ok := b.waits[string(id)]; ok {
		delete(b.waits, string(id))
		close(w)
		return
	}
	b.Logger.Debug("apps: the view answered no request of ours", "id", string(id))
}

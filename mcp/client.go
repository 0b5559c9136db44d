package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"git.rickub.com/bots-garden/mini-me/internal/jsonrpc"
)

// Default limits, used where Options leaves a field zero.
const (
	DefaultConnectTimeout = 30 * time.Second
	DefaultCallTimeout    = 5 * time.Minute
	DefaultMaxMessageSize = 32 << 20
	// DefaultElicitCompleteWait is Options.ElicitCompleteWait's default.
	DefaultElicitCompleteWait = time.Minute
	// DefaultMaxListItems is Options.MaxListItems's default: far more
	// tools, prompts or resources than a model can use, far fewer than
	// would weigh on memory.
	DefaultMaxListItems = 10000
	// DefaultMaxListBytes is Options.MaxListBytes's default: a listing of
	// DefaultMaxListItems tools of 6 KiB each.
	DefaultMaxListBytes = 64 << 20
	// DefaultMaxServerRequests is Options.MaxServerRequests's default:
	// room for a few questions to the user at once, while a server that
	// floods requests gets errors instead of a goroutine each.
	DefaultMaxServerRequests = 16
	// maxInputRounds bounds the input_required rounds of one call.
	maxInputRounds = 8
	// MaxInputRequests bounds the input requests (elicitation, roots,
	// sampling) that a server may make in one input_required round, and
	// that one task may make over its life: a round that asks for more
	// fails the call with ErrProtocol before any handler runs, a task
	// with ErrTaskMisbehaved.
	MaxInputRequests = 64
	// maxPages bounds a paginated listing, against servers that loop
	// (Options.MaxListItems bounds its items, Options.MaxListBytes its
	// size).
	maxPages = 1000
)

// Era is the protocol family a server speaks.
type Era string

const (
	// EraModern is the stateless 2026-07-28 revision.
	EraModern Era = "modern"
	// EraLegacy covers the initialize-based revisions, 2025-03-26 to
	// 2025-11-25, and the deprecated HTTP+SSE transport of 2024-11-05.
	EraLegacy Era = "legacy"
)

// Options configure a Client. The zero value is ready to use.
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
type Options struct {
	// ClientInfo identifies this client to servers; the default names
	// mini-me.
	ClientInfo Implementation
	// ProtocolVersion pins a version (and so an era) instead of detecting
	// it: Version20260728 speaks only the stateless revision, a legacy
	// version skips the server/discover probe. To reconnect to a server
	// whose version is known, pass the ProtocolVersion of the earlier
	// Client: the connection then costs no round trip beyond the era's own
	// handshake (server/discover, or initialize).
	ProtocolVersion string
	// ConnectTimeout bounds Connect: era detection and the handshake.
	ConnectTimeout time.Duration
	// CallTimeout bounds each call that has no earlier deadline, and a
	// tools/call that may become a task (Client.TaskUse) even under a
	// later one: the caller's deadline is then the task's, and the
	// request that creates the task, or the plain call the server may
	// answer instead, stays bounded as any call.
	CallTimeout time.Duration
	// MaxMessageSize bounds one incoming message, in bytes
	// (DefaultMaxMessageSize when zero): a JSON body, a stdio line, or an
	// SSE event, whose count includes its framing (the "data: " prefixes,
	// id and event lines, line endings). A bigger one is refused with
	// ErrTooLarge.
	MaxMessageSize int64
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// ServerName names the server in trace hooks (RequestInfo.Server)
	// and, as the "server" attribute, in the Logger's records; a Toolset
	// sets it to the server's name in the configuration.
	ServerName string

	// The notification callbacks below run one at a time, in arrival
	// order, on a goroutine of the connection, never on one that reads
	// responses: a callback that blocks delays only later callbacks, never
	// a call, which still honours its context. They may call the Client
	// back (OnToolsChanged calling ListTools), but should return quickly:
	// a connection queues at most 256 notifications for them and drops
	// the rest, counted in the log (never a tools change). Elicit, Sample
	// and Roots run on goroutines of their own, with the context of the
	// call or stream that brought the request (a 2026-07-28 input request
	// runs on the goroutine of the call that received it, which waits for
	// the answer anyway). MaxServerRequests bounds how many such
	// goroutines one connection runs.

	// OnProgress, when set, asks servers for progress on every call and
	// receives it.
	OnProgress func(Progress)
	// OnLog receives the log messages servers send (notifications/message).
	OnLog func(LogMessage)
	// OnToolsChanged is called when the server says its tool list changed.
	OnToolsChanged func()
	// OnInvalidTool is told of each tool ListTools leaves out because its
	// definition is invalid (a bad x-mcp-header annotation).
	OnInvalidTool func(tool string, reason error)
	// OnResourcesChanged is called when the server says its resources
	// changed (notifications/resources/list_changed), which is how a
	// skills server says its skills changed.
	OnResourcesChanged func()
	// OnPromptsChanged is called when the server says its prompt list
	// changed (notifications/prompts/list_changed).
	OnPromptsChanged func()
	// OnResourceUpdated is called when a resource the client subscribed
	// to (SubscribeResource) changed (notifications/resources/updated).
	// It has the signature of toolset.Options.OnResourceUpdated: the
	// update names its server (Options.ServerName).
	OnResourceUpdated func(ResourceUpdate)

	// Skills declares the skills extension (SkillsExtension) in the
	// client capabilities, in both eras. The skills methods work whenever
	// the server declares the extension; this only tells the server the
	// host uses skills.
	Skills bool

	// Extensions declares further extensions in the client capabilities,
	// in both eras (in initialize, and in the _meta of every 2026-07-28
	// request): each key is an extension's identifier, its value the
	// extension's settings object, nil meaning {}. Package mcp/apps
	// declares MCP Apps this way (apps.Declare). An entry for
	// SkillsExtension or TasksExtension is ignored: Skills and Tasks
	// decide those.
	Extensions map[string]json.RawMessage

	// TrustToolHints takes the server's readOnlyHint and idempotentHint
	// as facts: a call of such a tool that may have run (its response
	// stream broke, or its legacy session was lost) is sent again, once.
	// Off by default, since annotations are only hints and a tool run
	// twice may act twice; then the caller gets ErrStreamBroken or
	// ErrSessionExpired. [Transport] gives the whole replay rule.
	TrustToolHints bool

	// Elicit answers a server's request for user input. When nil, the
	// client does not offer elicitation. It gets form requests, and URL
	// requests too when ElicitURL is set.
	Elicit func(context.Context, *ElicitRequest) (*ElicitResult, error)
	// ElicitURL declares URL-mode elicitation besides form mode: Elicit
	// then also gets the requests to open a URL, and a legacy server's
	// URLElicitationRequired error (CodeURLElicitationRequired) is shown
	// through Elicit; once the user consented to every URL, the client
	// waits for the server to say each interaction completed
	// (notifications/elicitation/complete), at most ElicitCompleteWait,
	// and sends the request again, once (the server ran nothing). A
	// refusal, or the same error again, reaches the caller.
	ElicitURL bool
	// ElicitCompleteWait bounds that wait, for servers that never send
	// the notification (the user's consent is then taken as the sign):
	// DefaultElicitCompleteWait when zero, no wait when negative. The
	// call's own context bounds it too.
	ElicitCompleteWait time.Duration
	// OnElicitationComplete is told when a legacy server says the URL
	// interaction id (ElicitRequest.ElicitationID) completed. It runs as
	// the notification callbacks do.
	OnElicitationComplete func(id string)
	// Sample answers a server's request for a completion by the host's
	// model (sampling/createMessage) in both eras. When nil, the client
	// does not offer sampling. Return an error matching ErrRefused when
	// the user refuses. The client checks the request first (maxTokens,
	// messages, tool results) and refuses one using what it did not
	// declare.
	Sample func(context.Context, *SampleRequest) (*SampleResult, error)
	// SampleTools declares tool use in sampling (SampleRequest.Tools);
	// SampleContext declares the deprecated includeContext values
	// "thisServer" and "allServers". Both need Sample.
	SampleTools, SampleContext bool
	// Roots lists the roots the user allows servers to see. When nil, the
	// client does not offer roots. A legacy client declares that it tells
	// of changes: the host calls NotifyRootsChanged when the list changes.
	Roots func(context.Context) ([]Root, error)
	// MaxListItems bounds the items one listing returns (ListTools,
	// ListPrompts, ListResources, ListResourceTemplates, the skills'
	// index, ReadSkillDirectory), whatever the number of pages; zero means
	// DefaultMaxListItems. A server that lists more has its listing cut
	// to the first MaxListItems items, no further page asked for; the cut
	// is logged at Warn and told to OnListCut.
	MaxListItems int
	// MaxListBytes bounds the size of one listing, in bytes of the
	// responses its pages came in; zero means DefaultMaxListBytes. Each
	// page is bounded by MaxMessageSize, the items by MaxListItems, but a
	// few large items a page (a tool with a schema of megabytes) would
	// still add up to maxPages (1,000) pages of MaxMessageSize. A listing
	// whose pages pass MaxListBytes ends with the page that passed it, no
	// further page asked for, and is cut like one over MaxListItems.
	MaxListBytes int64
	// OnListCut, when set, is told of each listing cut at MaxListItems or
	// MaxListBytes: the method ("tools/list") and the items kept
	// (MaxListItems, or fewer for a cut at MaxListBytes). It runs on the
	// goroutine of the listing call, before the call returns.
	OnListCut func(method string, limit int)
	// MaxServerRequests bounds the requests of a legacy server (ping,
	// elicitation, sampling, roots) that one connection answers at once;
	// zero means DefaultMaxServerRequests. A request over the bound is
	// answered at once with an error (CodeInternalError, "client busy"),
	// its handler not called, and logged at Warn.
	MaxServerRequests int

	// Tasks says when tools are called as MCP tasks (see TaskPolicy); the
	// zero value does when a tool requires it (TasksWhenRequired). A
	// task-backed call polls until the task ends (tasks.go gives the
	// limits), reports its steps to the observer of its context
	// (WithTaskObserver) and returns the task's result like any call.
	Tasks TaskPolicy
	// TaskTimeout bounds a task-backed call whose context has no
	// deadline; zero means DefaultTaskTimeout. The task is then
	// cancelled (unless it had ended, its result still on its way) and
	// the call fails with ErrTaskTimeout.
	TaskTimeout time.Duration
}

// ResourceUpdate says a subscribed resource changed.
type ResourceUpdate struct {
	// Server is Options.ServerName: the server's name in a Toolset.
	Server string
	// URI is the resource that changed.
	URI string
}

// Progress is one progress notification for a call in flight.
type Progress struct {
	// Server names the server in a Toolset (empty from a lone Client).
	Server string
	// Method and Name say which call it is about (Name is the tool,
	// prompt or resource, when there is one).
	Method, Name string
	// Progress is the progress so far; it grows with each notification.
	Progress float64
	Total    float64 // 0 when unknown
	// Message is the server's description of the progress, if any.
	Message string
}

// LogMessage is a log record a server sent.
type LogMessage struct {
	// Level is the record's syslog severity, "debug" to "emergency".
	Level string `json:"level"`
	// Logger names the logger that issued the record, if any.
	Logger string `json:"logger,omitempty"`
	// Data is the record: any JSON value, raw.
	Data json.RawMessage `json:"data"`
}

// Client is a connection to one MCP server. It is safe for concurrent use.
//
// Responses may come as JSON or as an SSE stream; progress and log
// notifications reach [Options.OnProgress] and [Options.OnLog]. Every call
// takes a context: cancelling it ends the HTTP request (and, for a legacy
// server, sends notifications/cancelled). A response that had come when
// the call saw its context end is returned all the same, over every
// transport: the request ran, and its result may name a task to follow.
type Client struct {
	opts   Options
	log    *slog.Logger
	nextID atomic.Int64
	// listens counts the listen streams the server acknowledged.
	listens atomic.Int64

	// proto is what negotiation found; it changes only while connecting
	// and when a modern server turns out to speak only a legacy version.
	proto atomic.Pointer[protoState]
	meta  json.RawMessage // static part of the modern request _meta
	// toolLists counts the ListTools calls begun. When the first
	// subscriptions/listen comes in force (inForce), listStale records
	// whether a listing began before it, which a change in between would
	// have made stale without a notification; inForced is closed then.
	toolLists atomic.Int64
	// refused counts the server requests refused as over
	// Options.MaxServerRequests.
	refused atomic.Int64
	// ignored counts the requests a modern server sent (ignoredRequest).
	ignored   atomic.Int64
	listStale atomic.Bool
	forceOnce sync.Once
	inForced  chan struct{}

	life   context.Context // ends when Close is called
	end    context.CancelFunc
	initMu sync.Mutex // serialises legacy re-initialisation
	mu     sync.Mutex
	conn   conn
	closed bool
	// inflight are the calls under way, each by its key from callSeq:
	// Shutdown cancels them.
	inflight map[uint64]context.CancelFunc
	callSeq  uint64
	headers  map[string][]headerParam // modern tools/call header paths per tool
	hints    map[string]*ToolAnnotations
	tasking  map[string]TaskUse   // how each listed tool is called
	progress map[string]*Progress // by progress token
	// toolsFresh, promptsFresh and resourcesFresh are when the last list
	// of each expires (zero: no lifetime).
	toolsFresh, promptsFresh, resourcesFresh time.Time
	initGen                                  int // legacy session generation
	// elicitWaits are the URL interactions a retry waits for, by id.
	elicitWaits map[string]chan struct{}
	// resourceSubs are the 2026-07-28 resource subscriptions, each a
	// listen stream of its own (see subscribe.go).
	resourceSubs resourceStreams
	// peer is where the server is, for the trace hooks.
	peer peer
}

// conn carries messages for one era-aware transport.
type conn interface {
	// roundTrip sends r and decodes the result of its response into
	// result (a pointer). A JSON-RPC error comes back as *RPCError.
	roundTrip(ctx context.Context, r *outgoing, result any) error
	// notify sends a notification (legacy only).
	notify(ctx context.Context, method string, params any) error
	// setProtocol fixes the era and version used in headers from now on;
	// a new legacy version also forgets the session.
	setProtocol(era Era, version string)
	// probeTimeout bounds the server/discover probe, 0 for none.
	probeTimeout() time.Duration
	close(ctx context.Context) error
}

// outgoing is one request on its way out.
type outgoing struct {
	id      int64
	method  string
	name    string // Mcp-Name value, "" if none
	params  any
	headers []header // Mcp-Param-* headers
	// replay says the request may be sent again when its stream broke:
	// it reads, or its tool is trusted to be read-only or idempotent.
	replay bool
	// callTimeout says Options.CallTimeout bounds the request even under
	// an earlier deadline: a tools/call that may become a task, whose
	// caller's deadline is meant for the whole task.
	callTimeout bool
	// probe marks the server/discover that finds the era: a refusal
	// listing only handshake versions is an answer to negotiate, never a
	// cause to fall back here (negotiate initializes, once). A refusal
	// that lists our version is retried like any request's.
	probe bool
	// size is the bytes of the response's message, set by the transport
	// that decoded it into the call's result.
	size int
}

type header struct{ name, value string }

// Connect connects to the server t describes, detects its era and, for a
// legacy server, runs the initialize handshake. opts may be nil.
func Connect(ctx context.Context, t Transport, opts *Options) (*Client, error) {
	if opts != nil {
		for id, settings := range opts.Extensions {
			if len(settings) > 0 && !isJSONObject(settings) {
				return nil, fmt.Errorf("mcp: Options.Extensions[%q]: the settings are not a JSON object", id)
			}
		}
	}
	c := newClient(opts)
	c.peer = peerOf(t)
	cn, err := t.connect(ctx, c)
	if err != nil {
		return nil, err
	}
	c.conn = cn
	ctx, cancel := context.WithTimeout(ctx, c.opts.ConnectTimeout)
	defer cancel()
	if err := c.negotiate(ctx); err != nil {
		cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), DefaultCloseTimeout)
		defer ccancel()
		_ = cn.close(cctx)
		return nil, err
	}
	return c, nil
}

func newClient(opts *Options) *Client {
	c := &Client{headers: map[string][]headerParam{}, hints: map[string]*ToolAnnotations{}, tasking: map[string]TaskUse{}, progress: map[string]*Progress{},
		inForced: make(chan struct{})}
	c.life, c.end = context.WithCancel(context.Background())
	if opts != nil {
		c.opts = *opts
	}
	if c.opts.ClientInfo.Name == "" {
		c.opts.ClientInfo = Implementation{Name: "mini-me", Version: "0.1.0"}
	}
	if c.opts.ConnectTimeout <= 0 {
		c.opts.ConnectTimeout = DefaultConnectTimeout
	}
	if c.opts.CallTimeout <= 0 {
		c.opts.CallTimeout = DefaultCallTimeout
	}
	if c.opts.MaxMessageSize <= 0 {
		c.opts.MaxMessageSize = DefaultMaxMessageSize
	}
	if c.opts.ElicitCompleteWait == 0 {
		c.opts.ElicitCompleteWait = DefaultElicitCompleteWait
	}
	if c.opts.TaskTimeout <= 0 {
		c.opts.TaskTimeout = DefaultTaskTimeout
	}
	if c.opts.MaxListItems <= 0 {
		c.opts.MaxListItems = DefaultMaxListItems
	}
	if c.opts.MaxListBytes <= 0 {
		c.opts.MaxListBytes = DefaultMaxListBytes
	}
	if c.opts.MaxServerRequests <= 0 {
		c.opts.MaxServerRequests = DefaultMaxServerRequests
	}
	c.log = c.opts.Logger
	if c.log == nil {
		c.log = slog.New(discardHandler{})
	} else if c.opts.ServerName != "" {
		c.log = c.log.With("server", c.opts.ServerName)
	}
	c.meta = c.modernMeta()
	return c
}

// protoState is what negotiation learnt of the server.
type protoState struct {
	era          Era
	version      string
	serverInfo   Implementation
	capabilities ServerCapabilities
	instructions string

	// tasks is what capabilities say of tasks, decoded once (every call
	// asks, now that tasks are on by default).
	tasksOnce sync.Once
	tasks     serverTasks
}

// state returns what negotiation learnt so far; never nil.
func (c *Client) state() *protoState {
	if p := c.proto.Load(); p != nil {
		return p
	}
	return &protoState{}
}

// era returns the protocol family in use.
func (c *Client) era() Era { return c.state().era }

// Era returns the protocol family the server speaks.
func (c *Client) Era() Era { return c.era() }

// ProtocolVersion returns the version in use with the server.
func (c *Client) ProtocolVersion() string { return c.state().version }

// ServerInfo returns what the server says it is: for display only.
func (c *Client) ServerInfo() Implementation { return c.state().serverInfo }

// Capabilities returns what the server offers.
func (c *Client) Capabilities() ServerCapabilities { return c.state().capabilities }

// Instructions returns the server's usage instructions, if any.
func (c *Client) Instructions() string { return c.state().instructions }

// Close is Shutdown bounded by DefaultCloseTimeout.
func (c *Client) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), DefaultCloseTimeout)
	defer cancel()
	return c.Shutdown(ctx)
}

// Shutdown ends the connection: calls in flight fail with ErrClosed, a
// legacy HTTP session is deleted and a subprocess is stopped (see
// CommandTransport for its steps). When ctx ends first, what remains is
// cut short: the session is left to expire, the process is killed, and
// the host's callbacks still running are no longer waited for. Shutdown is
// idempotent: only the first call does the work, later ones return nil at
// once.
func (c *Client) Shutdown(ctx context.Context) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	inflight := c.inflight
	c.inflight = nil
	c.mu.Unlock()
	c.end()
	for _, cancel := range inflight {
		cancel()
	}
	err := c.conn.close(ctx)
	c.resourceSubs.wait()
	return err
}

// DefaultCloseTimeout bounds Close: how long the end of a session (a
// DELETE, a subprocess's stop) may take before it is cut short.
const DefaultCloseTimeout = 5 * time.Second

// call sends one request and decodes its result, applying the call timeout,
// progress tokens, cancellation and the legacy session rules.
func (c *Client) call(ctx context.Context, r *outgoing, result any) (err error) {
	_, deadline := ctx.Deadline()
	// Close must end the calls in flight. Over our own stdio pipes it
	// does so itself: it cuts a write blocked on a full pipe, and
	// stopping the process fails every call waiting on it (mux.fail), so
	// a call whose own context bounds it needs no context of ours. Any
	// other call gets one that Close cancels, with the call timeout when
	// its context has no deadline or the timeout binds it anyway.
	s, ok := c.conn.(*stdioConn)
	endsItsCalls := ok && s.closeCuts
	c.mu.Lock()
	closed, gen := c.closed, c.initGen
	c.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if !deadline || r.callTimeout || !endsItsCalls {
		timeout := c.opts.CallTimeout
		if deadline && !r.callTimeout {
			timeout = 0
		}
		var cancel context.CancelFunc
		var key uint64
		if ctx, cancel, key, err = c.closeable(ctx, timeout); err != nil {
			return err
		}
		defer cancel()
		defer c.unlist(key)
		endsItsCalls = false
	}
	r.id = c.nextID.Add(1)
	if t := ContextTrace(ctx); t != nil { // a call on a closed Client is not reported
		var done func(error)
		ctx, done = c.traceRequest(ctx, t, r, result)
		defer func() { done(err) }()
	}
	err = c.send(ctx, r, result, gen)
	if rpcCode(err) == CodeURLElicitationRequired && c.opts.ElicitURL && c.opts.Elicit != nil && c.era() == EraLegacy {
		// The server ran nothing: it needs the user at a URL first. The
		// host's answer and the wait for the completion end at Close.
		ectx := ctx
		if endsItsCalls {
			cctx, cancel, key, cerr := c.closeable(ctx, 0)
			if cerr != nil {
				return cerr
			}
			defer cancel()
			defer c.unlist(key)
			ectx = cctx
		}
		if err = c.elicitRequired(ectx, err); err == nil {
			r.id = c.nextID.Add(1)
			err = c.send(ctx, r, result, gen)
		}
	}
	if err != nil && c.life.Err() != nil {
		return ErrClosed
	}
	return err
}

// closeable derives from ctx a context that Close cancels, bounded by
// timeout when it is not 0, and lists its cancel among the calls in
// flight under key until unlist. It fails with ErrClosed once Close began.
func (c *Client) closeable(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc, uint64, error) {
	var cancel context.CancelFunc
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, timeout)
	} else {
		ctx, cancel = context.WithCancel(ctx)
	}
	// A map entry under the lock, cheaper than an AfterFunc.
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		cancel()
		return nil, nil, 0, ErrClosed
	}
	if c.inflight == nil {
		c.inflight = map[uint64]context.CancelFunc{}
	}
	key := c.callSeq
	c.callSeq++
	c.inflight[key] = cancel
	return ctx, cancel, key, nil
}

// unlist removes the call key from the calls in flight.
func (c *Client) unlist(key uint64) {
	c.mu.Lock()
	delete(c.inflight, key)
	c.mu.Unlock()
}

func (c *Client) send(ctx context.Context, r *outgoing, result any, gen int) error {
	err := c.conn.roundTrip(ctx, r, result)
	if err != nil && c.era() == EraModern {
		// A version refused says the server did not run the request.
		if versionRetry(err) {
			// The server rejected the version yet lists ours as
			// supported: the spec says to retry with a mutually
			// supported one, once.
			r.id = c.nextID.Add(1)
			err = c.conn.roundTrip(ctx, r, result)
		} else if v := legacyOnly(err); v != "" && !r.probe {
			if ferr := c.fallBack(ctx, v); ferr != nil {
				return fmt.Errorf("mcp: %s: server speaks only %s and initialize failed: %w", r.method, v, ferr)
			}
			r.toLegacy()
			r.id = c.nextID.Add(1)
			err = c.conn.roundTrip(ctx, r, result)
		}
	}
	if errors.Is(err, errSessionGone) {
		// The server no longer knows the legacy session. That does not
		// prove the request did not run (the session may have been lost
		// after it), so a new session is started for the next calls
		// and only a request safe to repeat is sent again, once.
		if rerr := c.reinitialize(ctx, gen); rerr != nil {
			return fmt.Errorf("%w: %s: a new session failed: %w", ErrSessionExpired, r.method, rerr)
		}
		if !r.replay {
			return fmt.Errorf("%w: %s: the server lost the session; a new one is ready, but the request may have run and was not sent again", ErrSessionExpired, r.method)
		}
		r.id = c.nextID.Add(1)
		err = c.conn.roundTrip(ctx, r, result)
		if errors.Is(err, errSessionGone) {
			return fmt.Errorf("%w: %s: the new session was lost too", ErrSessionExpired, r.method)
		}
	}
	return err
}

// legacyOnly returns the newest legacy version listed by an
// UnsupportedProtocolVersion error that does not list the modern one: a
// server that answered server/discover, yet speaks only legacy versions.
func legacyOnly(err error) string {
	supported, ok := supportedVersions(err)
	if !ok || slices.Contains(supported, Version20260728) {
		return ""
	}
	return newestLegacy(supported)
}

// fallBack turns a modern Client legacy for good, with an initialize
// offering version; concurrent callers share the one handshake.
func (c *Client) fallBack(ctx context.Context, version string) error {
	c.initMu.Lock()
	defer c.initMu.Unlock()
	if c.era() != EraModern {
		return nil // another call fell back already
	}
	c.log.Info("mcp: server refused the modern version after discover; speaking legacy", "version", version)
	return c.initialize(ctx, version)
}

// versionRetry reports an UnsupportedProtocolVersion error whose supported
// list includes the modern version we speak.
func versionRetry(err error) bool {
	supported, _ := supportedVersions(err)
	return slices.Contains(supported, Version20260728)
}

// errSessionGone is the transport's word for a 404 on a request that
// carried a session id.
var errSessionGone = errors.New("mcp: session not found")

// reinitialize starts a new legacy session unless another caller already
// did since generation gen. Calls keep flowing meanwhile: those that meet
// the old session's 404 wait here, then use the new one.
func (c *Client) reinitialize(ctx context.Context, gen int) error {
	c.initMu.Lock()
	defer c.initMu.Unlock()
	c.mu.Lock()
	cur := c.initGen
	c.mu.Unlock()
	if cur != gen {
		return nil
	}
	c.log.Info("mcp: session expired, initializing a new one")
	if _, err := c.handshake(ctx, c.ProtocolVersion()); err != nil {
		return err
	}
	c.mu.Lock()
	c.initGen++
	c.mu.Unlock()
	return nil
}

// request builds an outgoing request with era-appropriate params.
func (c *Client) request(method, name string, params paramsWithMeta) *outgoing {
	r := &outgoing{method: method, name: name, params: params}
	params.setMeta(c.requestMeta())
	return r
}

// paramsWithMeta are request params that carry _meta.
type paramsWithMeta interface {
	setMeta(json.RawMessage)
	meta() json.RawMessage
}

// metaParams is the params of a request that has nothing but _meta.
type metaParams struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

func (p *metaParams) setMeta(m json.RawMessage) { p.Meta = m }
func (p *metaParams) meta() json.RawMessage     { return p.Meta }

// toLegacy strips the modern protocol fields from a request's _meta (a
// progress token stays), for a server that turned out to be legacy.
func (r *outgoing) toLegacy() {
	r.headers = nil
	p, ok := r.params.(paramsWithMeta)
	if !ok || len(p.meta()) == 0 {
		return
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(p.meta(), &m) != nil {
		return
	}
	for k := range m {
		if strings.HasPrefix(k, "io.modelcontextprotocol/") {
			delete(m, k)
		}
	}
	if len(m) == 0 {
		p.setMeta(nil)
		return
	}
	b, _ := json.Marshal(m) // re-encoding what we decoded
	p.setMeta(b)
}

// requestMeta returns the _meta of a new request: the per-request protocol
// fields in the modern era, nothing in the legacy one.
func (c *Client) requestMeta() json.RawMessage {
	if c.era() == EraModern {
		return c.meta
	}
	return nil
}

func (c *Client) modernMeta() json.RawMessage {
	m := struct {
		Version string          `json:"io.modelcontextprotocol/protocolVersion"`
		Caps    json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
		Info    Implementation  `json:"io.modelcontextprotocol/clientInfo"`
	}{Version20260728, c.capabilitiesJSON(false), c.opts.ClientInfo}
	b, _ := json.Marshal(m) // cannot fail: plain strings and raw JSON we made
	return b
}

// capabilitiesJSON lists what the handlers offer; legacy adds roots'
// listChanged shape.
func (c *Client) capabilitiesJSON(legacy bool) json.RawMessage {
	caps := map[string]any{}
	if c.opts.Elicit != nil {
		modes := map[string]any{"form": struct{}{}}
		if c.opts.ElicitURL {
			modes["url"] = struct{}{}
		}
		caps["elicitation"] = modes
	}
	if c.opts.Sample != nil {
		sampling := map[string]any{}
		if c.opts.SampleTools {
			sampling["tools"] = struct{}{}
		}
		if c.opts.SampleContext {
			sampling["context"] = struct{}{}
		}
		caps["sampling"] = sampling
	}
	if c.opts.Roots != nil {
		if legacy {
			caps["roots"] = map[string]any{"listChanged": true}
		} else {
			caps["roots"] = struct{}{}
		}
	}
	ext := map[string]any{}
	for id, settings := range c.opts.Extensions {
		if len(settings) == 0 {
			ext[id] = struct{}{}
		} else {
			ext[id] = settings
		}
	}
	delete(ext, SkillsExtension)
	delete(ext, TasksExtension)
	if c.opts.Skills {
		ext[SkillsExtension] = struct{}{}
	}
	if c.opts.Tasks != TasksOff {
		if legacy {
			// A client that calls tools as tasks and hosts none: the
			// 2025-11-25 object with no request types, no list, no cancel.
			caps["tasks"] = struct{}{}
		} else {
			ext[TasksExtension] = struct{}{}
		}
	}
	if len(ext) > 0 {
		caps["extensions"] = ext
	}
	b, _ := json.Marshal(caps) // cannot fail: empty structs and valid raw JSON
	return b
}

// withProgress adds a progress token to a request's _meta when the host
// listens for progress, and returns a func that forgets it.
func (c *Client) withProgress(r *outgoing, p paramsWithMeta) func() {
	if c.opts.OnProgress == nil {
		return func() {}
	}
	token := fmt.Sprintf("p%d", c.nextID.Add(1))
	base := c.requestMeta()
	var m map[string]json.RawMessage
	if len(base) > 0 {
		_ = json.Unmarshal(base, &m) // our own JSON
	} else {
		m = map[string]json.RawMessage{}
	}
	m["progressToken"], _ = json.Marshal(token)
	b, _ := json.Marshal(m)
	p.setMeta(b)
	c.mu.Lock()
	c.progress[token] = &Progress{Method: r.method, Name: r.name}
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		delete(c.progress, token)
		c.mu.Unlock()
	}
}

// notification handles a notification from the server.
func (c *Client) notification(method string, params json.RawMessage) {
	switch method {
	case "notifications/progress":
		if p, ok := c.progressOf(params); ok {
			c.opts.OnProgress(p)
		}
	case "notifications/message":
		if c.opts.OnLog == nil {
			return
		}
		var m LogMessage
		if json.Unmarshal(params, &m) != nil {
			c.log.Warn("mcp: malformed log notification")
			return
		}
		c.opts.OnLog(m)
	case "notifications/tools/list_changed":
		if c.opts.OnToolsChanged != nil {
			c.opts.OnToolsChanged()
		}
	case "notifications/resources/list_changed":
		if c.opts.OnResourcesChanged != nil {
			c.opts.OnResourcesChanged()
		}
	case "notifications/resources/updated":
		c.resourceUpdated(params)
	case "notifications/prompts/list_changed":
		if c.opts.OnPromptsChanged != nil {
			c.opts.OnPromptsChanged()
		}
	case "notifications/elicitation/complete":
		c.elicitationComplete(params)
	case "notifications/subscriptions/acknowledged":
		if c.resourceSubs.owns(params) {
			return // a resource subscription's stream: no list to re-fetch
		}
		// A listen stream (re)opened. Nothing is replayed, so the host
		// must re-fetch what may have changed while none was open: after
		// a reopening, or after the first opening if a listing began
		// before it (a change in between would go unnoticed).
		if again := c.listens.Add(1) > 1 || c.listStale.Load(); again && c.opts.OnToolsChanged != nil {
			c.opts.OnToolsChanged()
		}
		if c.listens.Load() > 1 && c.opts.OnResourcesChanged != nil {
			c.opts.OnResourcesChanged()
		}
		if c.listens.Load() > 1 && c.opts.OnPromptsChanged != nil {
			c.opts.OnPromptsChanged()
		}
	default:
		c.log.Debug("mcp: notification ignored", "method", method)
	}
}

// inForce records that the first subscription to tool list changes is in
// force: acknowledged over HTTP, where requests are not ordered, or
// written over stdio, where the server reads in order.
func (c *Client) inForce() {
	c.forceOnce.Do(func() {
		c.listStale.Store(c.toolLists.Load() > 0)
		close(c.inForced)
	})
}

// progressOf reads a progress notification for a call in flight; it
// reports false for a finished or unknown call, or when nobody listens.
func (c *Client) progressOf(params json.RawMessage) (Progress, bool) {
	if c.opts.OnProgress == nil {
		return Progress{}, false
	}
	var p struct {
		Token    json.RawMessage `json:"progressToken"`
		Progress float64         `json:"progress"`
		Total    float64         `json:"total"`
		Message  string          `json:"message"`
	}
	if json.Unmarshal(params, &p) != nil {
		c.log.Warn("mcp: malformed progress notification")
		return Progress{}, false
	}
	var token string
	if json.Unmarshal(p.Token, &token) != nil {
		return Progress{}, false
	}
	c.mu.Lock()
	known := c.progress[token]
	c.mu.Unlock()
	if known == nil {
		return Progress{}, false
	}
	return Progress{Method: known.Method, Name: known.Name, Progress: p.Progress, Total: p.Total, Message: p.Message}, true
}

// serverRequest answers a request from a legacy server: ping, and the
// input requests the host has handlers for; anything else is
// method-not-found.
func (c *Client) serverRequest(ctx context.Context, method string, params json.RawMessage) (any, *jsonrpc.Error) {
	switch method {
	case "ping":
		return struct{}{}, nil
	case "elicitation/create", "roots/list", "sampling/createMessage":
		res, err := c.input(ctx, method, params)
		switch {
		case err == nil:
			return res, nil
		case errors.Is(err, ErrInputRequired):
			return nil, &jsonrpc.Error{Code: CodeMethodNotFound, Message: "method not supported: " + method}
		case errors.Is(err, errInvalidRequest):
			return nil, &jsonrpc.Error{Code: CodeInvalidParams, Message: err.Error()}
		case errors.Is(err, ErrRefused) && method == "sampling/createMessage":
			return nil, &jsonrpc.Error{Code: codeUserRejected, Message: "user rejected sampling request"}
		}
		// The handler's own error stays here: it may name what the
		// server has no business seeing.
		c.log.Warn("mcp: a handler failed to answer a server request", "method", method, "error", err)
		return nil, &jsonrpc.Error{Code: CodeInternalError, Message: "the client could not answer " + method}
	}
	return nil, &jsonrpc.Error{Code: CodeMethodNotFound, Message: "method not supported: " + method}
}

// busy is the answer to a server request over Options.MaxServerRequests.
// The first refusal of a Client is logged at Warn, later ones at Debug: a
// flood must not flood the log too.
func (c *Client) busy(method string) *jsonrpc.Error {
	c.warnFirst(&c.refused, "mcp: too many server requests in flight; refused", "method", clip(method, 40), "limit", c.opts.MaxServerRequests)
	return &jsonrpc.Error{Code: CodeInternalError, Message: fmt.Sprintf("client busy: %d server requests in flight", c.opts.MaxServerRequests)}
}

// ignoredRequest logs a request that a 2026-07-28 server sent on a
// stream, where that era has none: the first of a Client at Warn, later
// ones at Debug, the method clipped, so that a flood does not flood the
// log too.
func (c *Client) ignoredRequest(method string) {
	c.warnFirst(&c.ignored, "mcp: modern server sent a request; ignored", "method", clip(method, 40))
}

// warnFirst logs msg at Warn the first time n counts it, at Debug after.
func (c *Client) warnFirst(n *atomic.Int64, msg string, args ...any) {
	level := slog.LevelDebug
	if n.Add(1) == 1 {
		level = slog.LevelWarn
	}
	c.log.Log(context.Background(), level, msg, args...)
}

// discardHandler is a slog handler that drops everything.
type discardHandler struct{}

func (discardHandler) Enabled(context.Context, slog.Level) bool  { return false }
func (discardHandler) Handle(context.Context, slog.Record) error { return nil }
func (d discardHandler) WithAttrs([]slog.Attr) slog.Handler      { return d }
func (d discardHandler) WithGroup(string) slog.Handler           { return d }

// isJSONObject reports whether raw is one valid JSON object.
func isJSONObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{' && json.Valid(raw)
}

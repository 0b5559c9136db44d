package toolset

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/oauth"
)

// ErrUnknownTool is returned by Toolset.Call for a name the Toolset does
// not offer (never offered, or removed by a refresh).
var ErrUnknownTool = errors.New("toolset: unknown tool")

// ErrServerConfig wraps the configuration problems Discover finds in a
// server entry itself: no or two transports, a duplicate name, an unknown
// auth type.
var ErrServerConfig = errors.New("toolset: invalid server configuration")

// ErrOptions wraps the problems Discover finds in its Options: a callback
// of Options.Client that the Toolset sets itself.
var ErrOptions = errors.New("toolset: invalid options")

// Options configure Discover. The zero value is ready to use.
type Options struct {
	// Logger receives the Toolset's diagnostics (each skipped server, each
	// warning, at Warn) and, unless Client.Logger is set, each server's
	// client's, with a server attribute. nil discards them. It is the
	// common case of Client, so a host that only wants logs needs no
	// mcp.Options.
	Logger *slog.Logger
	// Client is the base of every server's client options, passed to
	// each server as it is but for these, set per server: ServerName is
	// the configured name; ConnectTimeout and CallTimeout are the server's
	// connectTimeout and timeout when it has them; Tasks follows its tasks
	// key when set; Roots follows Roots below; Logger defaults to the
	// Toolset's Logger; OnProgress and OnListCut are wrapped (OnProgress
	// to fill Progress.Server). OnToolsChanged, OnPromptsChanged,
	// OnResourcesChanged, OnResourceUpdated and OnInvalidTool are the
	// Toolset's own: Discover fails with an error matching ErrOptions when
	// one is set here (use OnChange and OnResourceUpdated below).
	Client mcp.Options
	// Browser is the host's sign-in step for the servers whose auth type is
	// oauth; nil means oauth.NonInteractive, which fails at once with an
	// error matching oauth.ErrInteractionRequired (and ErrAuth) rather than
	// wait for a browser. Use oauth.Terminal in a terminal program.
	Browser oauth.Browser
	// TokenStore keeps the OAuth tokens of those servers; nil means in
	// memory, shared by the Toolset's servers for its life.
	TokenStore oauth.TokenStore
	// OAuthHTTPClient sends the OAuth requests of those servers (metadata,
	// registration, token, revocation), for a proxy, a custom CA or
	// tracing: it is their oauth.Config.HTTPClient. nil means each
	// server's Authorizer uses a client of its own.
	OAuthHTTPClient *http.Client
	// ClientSecrets are OAuth client secrets the host holds in memory, by
	// server name: the secret of an oauth entry that names neither
	// clientSecretEnv nor clientSecretFile. Such an entry must name its
	// issuer, the only authorization server the secret goes to; without
	// one the server is skipped with an error matching ErrServerConfig.
	ClientSecrets map[string]oauth.Secret
	// OnChange is called after each refresh of a server's tools, whether or
	// not anything changed and whether or not it succeeded. Calls are never
	// concurrent; OnChange may call every Toolset method but Close.
	OnChange func(ToolsChange)
	// OnResourceUpdated receives the changes of the resources subscribed
	// to with SubscribeResource: the server and the URI. It runs as the
	// client's notification callbacks do (see Options).
	OnResourceUpdated func(mcp.ResourceUpdate)
	// Roots, when set, lists the roots the server may see (the host's
	// own choice, asked each time the server asks), in place of the
	// configuration's (config.Server.Roots) and of Client.Roots. Without
	// it, a server whose configuration has roots is offered those (none
	// for roots: []), and one with nothing configured Client.Roots.
	Roots func(ctx context.Context, server string) ([]mcp.Root, error)
	// OnDiscover, when set, is told of each server's progress during
	// Discover: connecting, listing, then ready or skipped. Reports come
	// one at a time, from the goroutines connecting the servers, and all
	// before Discover returns; one that blocks holds up discovery only (no
	// call runs yet). It must not call the Toolset, which does not exist
	// yet. Every skip and warning is also logged at Warn to Logger.
	OnDiscover func(DiscoverProgress)
	// SkillFolders are local skill folders (config.Config.Skills), whose
	// skills join the catalogue beside the servers' (see Skills). A
	// server's skills are listed only when Client.Skills is set.
	SkillFolders []string
}

// ToolsChange describes one refresh of a server's tools. Names are the
// Toolset's names.
type ToolsChange struct {
	// Server is the name of the server whose tools were refreshed.
	Server string
	// Added and Removed list the tools that appeared and disappeared;
	// Updated lists the tools whose definition differs from the previous
	// listing.
	Added, Removed, Updated []string
	// Err says why the refresh failed; the previous tools are kept.
	Err error
}

// Tool is one tool of a Toolset.
type Tool struct {
	// Name is the tool's name in the Toolset, "{server}_{tool}" sanitised
	// (see ToolName), unique and stable for the Toolset's life.
	Name string
	// Server is the name of the server that offers it.
	Server string
	// Tool is the definition as the server listed it last; Tool.Name is
	// the original name, the one sent to the server.
	Tool mcp.Tool
	// Changed reports that the description, input schema or annotations
	// differ from the definition first seen: a permission given for the
	// old definition should be asked again.
	Changed bool
	// Egress is the server's configured egress: the tools of a
	// config.EgressLocal server, and what they return, must not reach a
	// model off this machine.
	Egress config.Egress
	// Task says whether a call runs as an MCP task, which may take far
	// longer than a plain call (mcp.Options.Tasks).
	Task mcp.TaskUse
}

// WarningKind classifies a Warning.
type WarningKind string

// Kinds of Warning.
const (
	// WarnServerSkipped: the server is not used (configuration, missing
	// token, unreachable, timeout, protocol error); its ServerStatus.Err
	// says why.
	WarnServerSkipped WarningKind = "server-skipped"
	// WarnInvalidTool: a tool's definition is unusable (bad x-mcp-header,
	// no name, input schema not an object, listed twice).
	WarnInvalidTool WarningKind = "invalid-tool"
	// WarnToolNotFound: an allowlisted tool is not offered by the server.
	WarnToolNotFound WarningKind = "tool-not-found"
	// WarnToolTooLarge: a tool's input schema is over MaxToolSchema; the
	// tool is not offered.
	WarnToolTooLarge WarningKind = "tool-too-large"
	// WarnToolTrimmed: a tool's description was over MaxToolDescription
	// and is cut (it says so at its end); the tool is offered.
	WarnToolTrimmed WarningKind = "tool-trimmed"
	// WarnBinaryInput: a tool needs binary input, which a model cannot
	// produce.
	WarnBinaryInput WarningKind = "binary-input"
	// WarnTaskRequired: a tool can only run as a task, and the client
	// does not use tasks (mcp.Options.Tasks is mcp.TasksOff, or the server has tasks: off).
	WarnTaskRequired WarningKind = "task-required"
	// WarnNameCollision: a tool's name was taken by another tool, so it has
	// a hashed name.
	WarnNameCollision WarningKind = "name-collision"
	// WarnToolChanged: a tool's definition changed since it was first
	// seen.
	WarnToolChanged WarningKind = "tool-changed"
	// WarnRefreshFailed: the last refresh of the server's tools failed;
	// the previous tools are kept.
	WarnRefreshFailed WarningKind = "refresh-failed"
)

// Warning is a problem a Toolset worked around while gathering or
// refreshing the tools (the agent's Warning, by contrast, is an event of
// one run). Tool is the server's original tool name, empty for a
// server-wide warning.
type Warning struct {
	// Server is the name of the server concerned.
	Server string
	// Tool is the tool's original name; empty for a server-wide warning.
	Tool string
	// Kind classifies the warning.
	Kind WarningKind
	// Message describes the problem.
	Message string
}

// String formats the warning for a log line or a start-up banner.
func (w Warning) String() string {
	if w.Tool == "" {
		return fmt.Sprintf("%s: %s: %s", w.Server, w.Kind, w.Message)
	}
	return fmt.Sprintf("%s: tool %q: %s: %s", w.Server, w.Tool, w.Kind, w.Message)
}

// ServerStatus is what a Toolset knows of one configured server.
type ServerStatus struct {
	// Name is the server's name in the configuration.
	Name string
	// Connected is false when the server was skipped; Err says why.
	Connected bool
	// Era is the protocol family the server speaks; empty until connected.
	Era mcp.Era
	// ProtocolVersion is the protocol version in use; empty until connected.
	ProtocolVersion string
	// ServerInfo is what the server says of itself; zero until connected.
	ServerInfo mcp.Implementation
	// Tools counts the server's tools in the Toolset.
	Tools int
	// Skills counts the server's skills in the Toolset.
	Skills int
	// Prompts, Resources and ResourceTemplates count the server's prompts,
	// resources and resource templates in the Toolset.
	Prompts, Resources, ResourceTemplates int
	// Egress is the server's egress setting in the configuration.
	Egress config.Egress
	// Instructions are the server's usage instructions (its initialize or
	// discover result), as it sent them: server-provided text, untrusted.
	Instructions string
	// Err is why the server was skipped, nil when it is connected.
	Err error
	// OAuth is the server's authorization when its auth type is oauth
	// (nil otherwise), connected or skipped: its State (token expiry,
	// scopes, client id), Refresh and SignOut are the host's.
	OAuth *oauth.Authorizer
}

// Toolset is the single catalogue of tools an agent sees, gathered from
// every configured server. Create it with Discover; Close it when done. It
// is safe for concurrent use: Call may run while a refresh replaces a
// server's tools, while Add and Remove change the servers, and while Close
// runs.
type Toolset struct {
	opts Options
	log  *slog.Logger

	life  context.Context // ends with Close; bounds refreshes
	stop  context.CancelFunc
	loops sync.WaitGroup

	changeMu sync.Mutex // serialises OnChange
	editMu   sync.Mutex // serialises Add, Remove and Reload

	mu      sync.RWMutex
	closed  bool
	servers []*tsServer        // configuration order; replaced, never changed in place
	tools   []Tool             // every server's tools, in order
	index   map[string]route   // Toolset name → server and original
	taken   map[string]toolKey // every name ever given, never reused
	sk      toolsetSkills

	prompts   toolsetPrompts
	resources toolsetResources
}

type route struct {
	srv      *tsServer
	original string
	pos      int // in Toolset.tools
}

// toolKey identifies a tool across refreshes.
type toolKey struct{ server, tool string }

// tsServer is one configured server inside a Toolset.
type tsServer struct {
	cfg            config.Server
	connectTimeout time.Duration
	client         *mcp.Client       // nil when skipped; fixed after Discover
	auth           *oauth.Authorizer // set by connect, before apply or skip reads it
	kick           chan struct{}     // a refresh is due; capacity 1 coalesces bursts
	gone           chan struct{}     // closed by Remove: its loops stop
	calls          sync.WaitGroup    // Toolset.Call in flight, which Remove waits for

	invalidMu sync.Mutex
	invalid   []invalidTool // reported by ListTools, drained by list
	cuts      listCuts      // listings cut at mcp.Options.MaxListItems

	// Guarded by Toolset.mu.
	status   ServerStatus
	tools    []Tool
	warnings []Warning // of the last listing (or the skip)
	failed   *Warning  // the last refresh failed
	names    map[string]assignedName
	first    map[string]fingerprint
	last     map[string]fingerprint

	sk serverSkills

	prompts   capList[[]mcp.Prompt]
	resources capList[resourceSet]
}

// assignedName is the name a tool got and, when its natural name was
// taken, by whom.
type assignedName struct {
	name, natural string
	holder        toolKey
}

// fingerprint is what a model and a permission depend on in a tool
// definition. It holds the definition's own values (no copy): comparing
// two costs nothing when they are the same memory, as they are from one
// listing to the next of an unchanged tool, and re-encodes the schemas
// and annotations only when their bytes differ.
type fingerprint struct {
	description string
	schema      json.RawMessage
	annotations *mcp.ToolAnnotations
}

// listing is one tools/list of a server after filtering, or why it failed.
type listing struct {
	tools    []mcp.Tool
	warnings []Warning
	err      error
}

// Discover connects to every server concurrently, lists their tools and
// returns the catalogue. opts may be nil.
//
// Each server gets its own connect timeout, covering the connection and
// the listing: Server.ConnectTimeout, else opts.Client.ConnectTimeout, else
// DefaultConnectTimeout. Server.Timeout, when set, bounds each call. Start-up
// therefore takes about as long as the slowest server, not the sum.
//
// A server that cannot be used (bad entry, missing token variable,
// unreachable, timeout, protocol error) is skipped: its ServerStatus says
// why and Warnings has a WarnServerSkipped for it; the other servers work.
// Discover fails only when ctx ends before every server has answered or
// timed out, because the caller then no longer wants a Toolset; having no
// working server at all is not an error.
//
// ctx bounds discovery only. Afterwards the Toolset refreshes a server's
// tools when the server says they changed, until Close.
func Discover(ctx context.Context, servers []config.Server, opts *Options) (*Toolset, error) {
	t := &Toolset{index: map[string]route{}} // taken is made once the listings are in
	if opts != nil {
		t.opts = *opts
	}
	if t.opts.TokenStore == nil {
		t.opts.TokenStore = &oauth.MemoryStore{}
	}
	if err := checkOptions(&t.opts.Client); err != nil {
		return nil, err
	}
	t.log = t.opts.Logger
	if t.log == nil {
		t.log = t.opts.Client.Logger
	}
	if t.opts.Client.Logger == nil {
		t.opts.Client.Logger = t.opts.Logger
	}
	if t.log == nil {
		t.log = slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.Level(math.MaxInt)}))
	}
	t.life, t.stop = context.WithCancel(context.Background())

	t.servers = make([]*tsServer, len(servers))
	listings := make([]listing, len(servers))
	names := make(map[string]bool, len(servers))
	var wg sync.WaitGroup
	progress := &progressReporter{on: t.opts.OnDiscover}
	for i, cfg := range servers {
		s := t.newServer(cfg)
		t.servers[i] = s
		if err := checkServer(cfg, names); err != nil {
			listings[i].err = err
			progress.server(i, cfg.Name).done(nil, &listings[i], nil)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			listings[i] = t.connect(ctx, s, progress.server(i, cfg.Name))
		}()
	}
	// The local skill folders are scanned while the servers connect; a
	// scan stopped by ctx fails Discover below, like the connections.
	local, localWarn, _ := scanSkillFolders(ctx, t.opts.SkillFolders)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		t.stop()
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), mcp.DefaultCloseTimeout)
		defer cancel()
		_ = t.closeClients(cctx)
		return nil, fmt.Errorf("toolset: discover: %w", err)
	}

	t.mu.Lock()
	n := 0 // the tools listed: room for every name at once
	for _, l := range listings {
		n += len(l.tools)
	}
	t.taken = make(map[string]toolKey, n)
	for i, s := range t.servers { // in order: names are deterministic
		if err := listings[i].err; err != nil {
			t.skip(s, err)
		} else {
			t.apply(s, listings[i])
		}
	}
	t.rebuild() // once for all: rebuilding after each server is quadratic
	t.mu.Unlock()
	t.startSkills(local, localWarn)
	promptsCap.start(t)
	resourcesCap.start(t)
	for _, s := range t.servers {
		if s.client != nil {
			t.loops.Add(1)
			go t.watch(s)
		}
	}
	return t, nil
}

func (t *Toolset) newServer(cfg config.Server) *tsServer {
	s := &tsServer{
		cfg:            cfg,
		connectTimeout: cfg.ConnectTimeout,
		kick:           make(chan struct{}, 1),
		gone:           make(chan struct{}),
		status:         ServerStatus{Name: cfg.Name, Egress: cfg.Egress},
		names:          map[string]assignedName{},
		first:          map[string]fingerprint{},
		last:           map[string]fingerprint{},
		sk:             serverSkills{kick: make(chan struct{}, 1)},
		prompts:        newCapList[[]mcp.Prompt](),
		resources:      newCapList[resourceSet](),
	}
	if s.connectTimeout <= 0 {
		s.connectTimeout = t.opts.Client.ConnectTimeout
	}
	if s.connectTimeout <= 0 {
		s.connectTimeout = mcp.DefaultConnectTimeout
	}
	return s
}

// checkServer rejects an entry Discover cannot use on its own terms; names
// collects the names seen so far, ignoring case as config does.
func checkServer(cfg config.Server, names map[string]bool) error {
	key := strings.ToLower(cfg.Name)
	switch {
	case cfg.Name == "":
		return fmt.Errorf("%w: server has no name", ErrServerConfig)
	case names[key]:
		return fmt.Errorf("%w: duplicate server name %q", ErrServerConfig, cfg.Name)
	}
	names[key] = true
	return nil
}

// connect connects to one server and lists its tools within the server's
// connect timeout.
func (t *Toolset) connect(ctx context.Context, s *tsServer, progress serverProgress) listing {
	ctx, traced := traceDiscover(ctx, s.cfg.Name)
	l := t.connectList(ctx, s, progress)
	progress.done(s.client, &l, traced)
	return l
}

func (t *Toolset) connectList(ctx context.Context, s *tsServer, progress serverProgress) listing {
	tr, err := t.transport(s.cfg)
	if err != nil {
		return listing{err: err}
	}
	if ht, ok := tr.(*mcp.HTTPTransport); ok {
		s.auth, _ = ht.Credentials.(*oauth.Authorizer)
	}
	progress.report(DiscoverConnecting, nil, nil)
	cctx, cancel := context.WithTimeout(ctx, s.connectTimeout)
	defer cancel()
	c, err := mcp.Connect(cctx, tr, t.clientOptions(s))
	if err == nil {
		progress.report(DiscoverListing, c, nil)
		l := s.list(cctx, c)
		if l.err == nil {
			s.client = c
			s.sk.first = t.listSkills(cctx, s)
			promptsCap.connect(cctx, s)
			resourcesCap.connect(cctx, s)
			return l
		}
		_ = c.Close()
		err = l.err
	}
	if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("no answer within %v: %w", s.connectTimeout, err)
	}
	return listing{err: err}
}

// transportFor builds the transport a server entry describes.
func transportFor(s config.Server) (mcp.Transport, error) {
	switch {
	case s.URL != "" && s.Command != "":
		return nil, fmt.Errorf("%w: both url and command are set", ErrServerConfig)
	case s.URL == "" && s.Command == "":
		return nil, fmt.Errorf("%w: neither url nor command is set", ErrServerConfig)
	case s.Command != "":
		return &mcp.CommandTransport{Name: s.Name, Command: s.Command, Args: s.Args, Env: s.Env, Dir: s.Dir}, nil
	}
	t := &mcp.HTTPTransport{URL: s.URL}
	if len(s.Headers) > 0 {
		t.Header = make(http.Header, len(s.Headers))
		for k, v := range s.Headers {
			t.Header.Set(k, v)
		}
	}
	if a := s.Auth; a != nil && a.Type != config.AuthOAuth {
		if a.TokenEnv == "" {
			return nil, fmt.Errorf("%w: auth has no token variable", ErrServerConfig)
		}
		t.TokenEnv = a.TokenEnv
		switch a.Type {
		case config.AuthBearer:
		case config.AuthAPIKey:
			t.TokenHeader = a.Header
			if t.TokenHeader == "" {
				t.TokenHeader = config.DefaultAPIKeyHeader
			}
		default:
			return nil, fmt.Errorf("%w: unknown auth type %q", ErrServerConfig, a.Type)
		}
	}
	return t, nil
}

// due asks the server's refresh loop to list its tools again.
func (s *tsServer) due() {
	select {
	case s.kick <- struct{}{}:
	default: // a refresh is already due
	}
}

// clientOptions derives a server's client options from the Toolset's.
func (t *Toolset) clientOptions(s *tsServer) *mcp.Options {
	o := t.opts.Client
	o.ConnectTimeout = s.connectTimeout
	o.ServerName = s.cfg.Name
	o.Roots = t.roots(s.cfg)
	if s.cfg.ProtocolVersion != "" {
		o.ProtocolVersion = s.cfg.ProtocolVersion
	}
	if s.cfg.Timeout > 0 {
		o.CallTimeout = s.cfg.Timeout
	}
	switch s.cfg.Tasks {
	case config.TasksOff:
		o.Tasks = mcp.TasksOff
	case config.TasksRequired:
		o.Tasks = mcp.TasksWhenRequired
	case config.TasksAllowed:
		o.Tasks = mcp.TasksWhenAllowed
	}
	o.OnToolsChanged = s.due
	o.OnResourceUpdated = t.opts.OnResourceUpdated // ServerName names the server
	o.OnPromptsChanged = s.prompts.due
	o.OnResourcesChanged = s.resources.due
	if o.Skills {
		o.OnResourcesChanged = func() {
			s.resources.due()
			s.skillsDue()
		}
	}
	if onProgress := o.OnProgress; onProgress != nil {
		o.OnProgress = func(p mcp.Progress) {
			p.Server = s.cfg.Name
			onProgress(p)
		}
	}
	onCut := o.OnListCut
	o.OnListCut = func(method string, limit int) {
		s.cuts.record(method, limit)
		if onCut != nil {
			onCut(method, limit)
		}
	}
	o.OnInvalidTool = func(name string, reason error) {
		s.invalidMu.Lock()
		s.invalid = append(s.invalid, invalidTool{name, reason})
		s.invalidMu.Unlock()
	}
	return &o
}

// list lists and filters a server's tools. Lists of one server never
// overlap: discovery comes first, then the server's refresh loop.
func (s *tsServer) list(ctx context.Context, c *mcp.Client) listing {
	tools, err := c.ListTools(ctx)
	s.invalidMu.Lock()
	invalid := s.invalid
	s.invalid = nil
	s.invalidMu.Unlock()
	if err != nil {
		return listing{err: err}
	}
	kept, warns := filterTools(s.cfg.Name, s.cfg.Tools, tools, invalid, c.TaskUse)
	return listing{tools: kept, warnings: append(warns, s.cuts.take(s.cfg.Name, "tools/list")...)}
}

// skip records why a server is not used. t.mu is held.
func (t *Toolset) skip(s *tsServer, err error) {
	s.status.Err, s.status.OAuth = err, s.auth
	w := Warning{Server: s.cfg.Name, Kind: WarnServerSkipped, Message: err.Error()}
	s.warnings = []Warning{w}
	t.log.Warn("toolset: server skipped", "server", s.cfg.Name, "reason", w.Message)
}

// apply makes a listing the server's tools: names are kept or given,
// definitions compared with the first and the previous ones. t.mu is held;
// the caller then rebuilds the catalogue (rebuild), once for all it applied.
func (t *Toolset) apply(s *tsServer, l listing) ToolsChange {
	s.status.OAuth = s.auth
	if s.client != nil {
		s.status.Connected = true
		s.status.Era, s.status.ProtocolVersion = s.client.Era(), s.client.ProtocolVersion()
		s.status.ServerInfo = s.client.ServerInfo()
		s.status.Instructions = s.client.Instructions()
	}
	ch := ToolsChange{Server: s.cfg.Name}
	prev := make(map[string]bool, len(s.tools))
	for _, st := range s.tools {
		prev[st.Name] = true
	}
	tools := make([]Tool, 0, len(l.tools))
	warns := l.warnings
	if len(s.names) == 0 && len(l.tools) > 8 { // the first listing (names are never forgotten), past a small map: room for all at once
		s.names = make(map[string]assignedName, len(l.tools))
		s.first = make(map[string]fingerprint, len(l.tools))
		s.last = make(map[string]fingerprint, len(l.tools))
	}
	for _, tool := range l.tools {
		a := t.assign(s, tool.Name)
		fp := fingerprintOf(&tool)
		first, ok := s.first[tool.Name]
		if !ok {
			s.first[tool.Name], first = fp, fp
		}
		last := s.last[tool.Name]
		s.last[tool.Name] = fp
		changed := first.diff(fp)
		if a.name != a.natural {
			warns = append(warns, Warning{Server: s.cfg.Name, Tool: tool.Name, Kind: WarnNameCollision,
				Message: fmt.Sprintf("name %q is taken by tool %q of server %q; exposed as %q", a.natural, a.holder.tool, a.holder.server, a.name)})
		}
		if len(changed) > 0 {
			warns = append(warns, Warning{Server: s.cfg.Name, Tool: tool.Name, Kind: WarnToolChanged,
				Message: "definition changed since first seen: " + strings.Join(changed, ", ")})
		}
		switch {
		case !prev[a.name]:
			ch.Added = append(ch.Added, a.name)
		case len(last.diff(fp)) > 0:
			ch.Updated = append(ch.Updated, a.name)
		}
		delete(prev, a.name)
		st := Tool{Name: a.name, Server: s.cfg.Name, Tool: tool, Changed: len(changed) > 0, Egress: s.cfg.Egress}
		if s.client != nil {
			st.Task = s.client.TaskUse(tool)
		}
		tools = append(tools, st)
	}
	for _, st := range s.tools {
		if prev[st.Name] {
			ch.Removed = append(ch.Removed, st.Name)
		}
	}
	t.logNew(s.warnings, warns)
	s.tools, s.warnings, s.failed = tools, warns, nil
	s.status.Tools = len(tools)
	return ch
}

// assign returns the name of a server's tool, giving it one the first time
// it is seen. A name is never given to another tool later, so a name the
// model saw keeps meaning the same tool. t.mu is held.
func (t *Toolset) assign(s *tsServer, original string) assignedName {
	if a, ok := s.names[original]; ok {
		return a
	}
	key := toolKey{s.cfg.Name, original}
	a := assignedName{natural: ToolName(key.server, key.tool)}
	// A name is taken unless by this very tool, whose server was removed
	// and added again.
	a.name = uniqueName(key.server, key.tool, func(n string) bool { k, ok := t.taken[n]; return ok && k != key })
	if a.name != a.natural {
		a.holder = t.taken[a.natural]
	}
	t.taken[a.name] = key
	s.names[original] = a
	return a
}

// logNew logs the warnings of now that were not there before.
func (t *Toolset) logNew(before, now []Warning) {
	old := make(map[Warning]bool, len(before))
	for _, w := range before {
		old[w] = true
	}
	for _, w := range now {
		if !old[w] {
			t.log.Warn("toolset: "+w.Message, "server", w.Server, "tool", w.Tool, "kind", string(w.Kind))
		}
	}
}

// rebuild recomputes the catalogue from the servers' tools. t.mu is held.
func (t *Toolset) rebuild() {
	n := 0
	for _, s := range t.servers {
		n += len(s.tools)
	}
	t.tools = make([]Tool, 0, n)
	t.index = make(map[string]route, n)
	for _, s := range t.servers {
		for _, st := range s.tools {
			if !forModel(st) {
				continue
			}
			t.index[st.Name] = route{srv: s, original: st.Tool.Name, pos: len(t.tools)}
			t.tools = append(t.tools, st)
		}
	}
}

func fingerprintOf(t *mcp.Tool) fingerprint {
	return fingerprint{description: t.Description, schema: t.InputSchema, annotations: t.Annotations}
}

// diff names the parts of g that differ from f: the description, the
// schema once re-encoded canonically (so that key order and spacing do
// not count), the annotations as JSON.
func (f fingerprint) diff(g fingerprint) []string {
	var parts []string
	if f.description != g.description {
		parts = append(parts, "description")
	}
	if !bytes.Equal(f.schema, g.schema) && !bytes.Equal(canonicalJSON(f.schema), canonicalJSON(g.schema)) {
		parts = append(parts, "input schema")
	}
	if f.annotations != g.annotations {
		a, _ := json.Marshal(f.annotations) // plain struct: cannot fail
		b, _ := json.Marshal(g.annotations)
		if !bytes.Equal(a, b) {
			parts = append(parts, "annotations")
		}
	}
	return parts
}

// canonicalJSON re-encodes a JSON value with sorted keys and no
// insignificant space, so that equal schemas compare equal however a
// server orders them; invalid JSON is returned as is.
func canonicalJSON(raw json.RawMessage) []byte {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return raw
	}
	b, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return b
}

// watch refreshes a server's tools each time the server says they changed,
// until Close. Notifications that arrive during a refresh cause one more
// refresh, not one each.
func (t *Toolset) watch(s *tsServer) { t.follow(s, s.kick, func() { t.refresh(s) }) }

// follow runs refresh for s each time kick fires, one at a time, until
// Close or Remove; it is one of t.loops.
func (t *Toolset) follow(s *tsServer, kick <-chan struct{}, refresh func()) {
	defer t.loops.Done()
	for {
		select {
		case <-t.life.Done():
			return
		case <-s.gone:
			return
		case <-kick:
			refresh()
		}
	}
}

// refresh lists a server's tools again and tells the host.
func (t *Toolset) refresh(s *tsServer) {
	ctx, cancel := context.WithTimeout(t.life, s.connectTimeout)
	defer cancel()
	l := s.list(ctx, s.client)
	t.mu.Lock()
	if t.closed || s.removed() {
		t.mu.Unlock()
		return
	}
	var ch ToolsChange
	if l.err != nil {
		ch = ToolsChange{Server: s.cfg.Name, Err: l.err}
		s.failed = &Warning{Server: s.cfg.Name, Kind: WarnRefreshFailed, Message: l.err.Error() + "; the previous tools are kept"}
		t.log.Warn("toolset: refreshing tools failed", "server", s.cfg.Name, "error", l.err)
	} else {
		ch = t.apply(s, l)
		t.rebuild()
	}
	t.mu.Unlock()
	if t.opts.OnChange != nil {
		t.changeMu.Lock()
		defer t.changeMu.Unlock()
		t.opts.OnChange(ch)
	}
}

// Tools returns the catalogue: servers in configuration order, each
// server's tools in the server's order. The slice is the caller's; the
// definitions it holds are shared and must not be modified.
//
// A server whose list has outlived its 2026-07-28 ttlMs is listed again in
// the background; the fresh list shows in a later call (and OnChange).
// The lifetime is only looked at here, when the tools are used: it is not
// a polling interval.
func (t *Toolset) Tools() []Tool {
	now := time.Now()
	t.mu.RLock()
	servers := t.servers
	t.mu.RUnlock()
	for _, s := range servers {
		if s.client == nil {
			continue
		}
		if f := s.client.ToolsFreshUntil(); !f.IsZero() && now.After(f) {
			s.due()
		}
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	return append([]Tool(nil), t.tools...)
}

// Tool returns the tool with the Toolset name name.
func (t *Toolset) Tool(name string) (Tool, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	r, ok := t.index[name]
	if !ok {
		return Tool{}, false
	}
	return t.tools[r.pos], true
}

// Warnings returns the current warnings, servers in configuration order:
// why a server is skipped, which tools are left out or renamed or changed,
// and whether the last refresh failed.
func (t *Toolset) Warnings() []Warning {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var out []Warning
	for _, s := range t.servers {
		out = append(out, s.warnings...)
		if s.failed != nil {
			out = append(out, *s.failed)
		}
	}
	out = append(out, t.skillWarnings()...)
	for _, s := range t.servers {
		out = append(out, s.prompts.warnings...)
		out = append(out, s.resources.warnings...)
	}
	return append(out, t.resources.warnings...)
}

// Servers returns the status of every configured server, in configuration
// order.
func (t *Toolset) Servers() []ServerStatus {
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := make([]ServerStatus, len(t.servers))
	for i, s := range t.servers {
		out[i] = s.status
	}
	return out
}

// roots returns the roots handler of the server cfg (see Options.Roots).
func (t *Toolset) roots(cfg config.Server) func(context.Context) ([]mcp.Root, error) {
	switch {
	case t.opts.Roots != nil:
		hook, name := t.opts.Roots, cfg.Name
		return func(ctx context.Context) ([]mcp.Root, error) { return hook(ctx, name) }
	case cfg.Roots == nil:
		return t.opts.Client.Roots
	case len(cfg.Roots) == 0:
		return nil // roots: []: this server sees none, and is not offered roots
	}
	roots := make([]mcp.Root, len(cfg.Roots))
	for i, uri := range cfg.Roots {
		roots[i] = mcp.Root{URI: uri, Name: path.Base(uri)}
	}
	return func(context.Context) ([]mcp.Root, error) { return slices.Clone(roots), nil }
}

// NotifyRootsChanged tells every connected server that the roots
// Client.Roots lists changed (mcp.Client.NotifyRootsChanged: legacy
// servers get notifications/roots/list_changed and ask again; 2026-07-28
// ones ask with each request that needs them). It returns the servers'
// errors, joined.
func (t *Toolset) NotifyRootsChanged(ctx context.Context) error {
	t.mu.RLock()
	var clients []*mcp.Client
	var names []string
	for _, s := range t.servers {
		if s.client != nil {
			clients, names = append(clients, s.client), append(names, s.cfg.Name)
		}
	}
	t.mu.RUnlock()
	var errs []error
	for i, c := range clients {
		if err := c.NotifyRootsChanged(ctx); err != nil {
			errs = append(errs, fmt.Errorf("server %q: %w", names[i], err))
		}
	}
	return errors.Join(errs...)
}

// Call calls the tool the Toolset names name, on its server, under its
// original name. args is anything that marshals to a JSON object; nil sends
// none. A name the Toolset does not offer gives ErrUnknownTool; a tool that
// fails is not an error (see ToolResult.IsError).
func (t *Toolset) Call(ctx context.Context, name string, args any) (*ToolResult, error) {
	t.mu.RLock()
	closed := t.closed
	r, ok := t.index[name]
	if ok && !closed {
		r.srv.calls.Add(1) // before Remove can wait: it takes t.mu first
		defer r.srv.calls.Done()
	}
	t.mu.RUnlock()
	switch {
	case closed:
		return nil, fmt.Errorf("toolset: call %s: %w", name, mcp.ErrClosed)
	case !ok:
		return nil, fmt.Errorf("%w: %q", ErrUnknownTool, name)
	}
	res, err := r.srv.client.CallTool(namedObserver(ctx, r.srv.cfg.Name), r.original, args)
	if err != nil {
		return nil, fmt.Errorf("toolset: call %s (server %q): %w", name, r.srv.cfg.Name, err)
	}
	return &ToolResult{Name: name, Server: r.srv.cfg.Name, Result: res}, nil
}

// Shutdown stops refreshing and shuts every server's client down,
// concurrently (see mcp.Client.Shutdown): calls in flight fail, and later
// calls fail with mcp.ErrClosed. When ctx ends first, what remains is cut
// short (sessions are left to expire, processes are killed), so Shutdown
// returns soon after ctx ends. Shutdown is idempotent: only the first call
// does the work, later ones return nil at once.
func (t *Toolset) Shutdown(ctx context.Context) error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	t.mu.Unlock()
	t.stop()
	err := t.closeClients(ctx)
	t.loops.Wait()
	return err
}

// Close is Shutdown bounded by mcp.DefaultCloseTimeout.
func (t *Toolset) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), mcp.DefaultCloseTimeout)
	defer cancel()
	return t.Shutdown(ctx)
}

// closeClients shuts every connected client down concurrently.
func (t *Toolset) closeClients(ctx context.Context) error {
	t.mu.RLock()
	servers := t.servers
	t.mu.RUnlock()
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		if s.client == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.client.Shutdown(ctx); err != nil {
				errs[i] = fmt.Errorf("toolset: server %q: %w", s.cfg.Name, err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

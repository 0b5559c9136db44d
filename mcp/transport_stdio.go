package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"git.rickub.com/bots-garden/mini-me/internal/jsonrpc"
)

// Defaults of CommandTransport.
const (
	// DefaultProbeTimeout is how long Connect waits for the answer to the
	// server/discover probe of a stdio server before it sends initialize
	// too; the probe's answer is still taken if it comes first (see
	// CommandTransport.ProbeTimeout).
	DefaultProbeTimeout = 5 * time.Second
	// DefaultRestartBackoff is the wait before the first restart when
	// RestartPolicy.Backoff is zero.
	DefaultRestartBackoff = 500 * time.Millisecond
	// maxRestartBackoff caps the doubling backoff between restarts.
	maxRestartBackoff = 30 * time.Second
)

// CommandTransport reaches a local server run as a subprocess that speaks
// MCP on its stdin and stdout: one JSON-RPC message per line, in either
// era. Connect starts the process; Client.Close stops it.
//
// Set either Command (with Args, Env and Dir), mirroring a config.Server
// entry, or Cmd, a command the host built.
//
// Environment: the child does not inherit the host's environment, so that
// the host's secrets do not reach every server. It gets a minimal base
// (PATH, HOME, USER, LOGNAME, SHELL, TMPDIR, TZ, LANG, LC_ALL, LC_CTYPE,
// TERM and the XDG base directories; on Windows the variables programs
// need to start, such as SYSTEMROOT, TEMP and USERPROFILE) copied from the
// host, plus Env.
//
// stdout belongs to the protocol. A line that is not JSON-RPC is logged
// (once at Warn, then at Debug) and skipped; after 10 such lines in a row
// the server is taken as broken: calls fail with ErrProtocol quoting the
// first line, and the process is stopped. A call that times out while the
// last lines were not JSON-RPC says so too (ErrProtocol with the sample).
// A whole response to a pending call whose content does not decode (a bad
// value inside a well-formed outline) fails that call at once with
// ErrProtocol. A message above Options.MaxMessageSize breaks the connection the same
// way, with ErrTooLarge. Batches (2025-03-26) are read.
//
// stderr is always drained and forwarded line by line to Options.Logger
// (level Info, attribute "server"); its last lines (at most 20, 4 KiB)
// are kept for ExitError.
//
// Shutdown: Close closes the child's stdin and gives it 2 s to exit, then
// sends SIGTERM to its process group and waits 2 s more, then sends
// SIGKILL. The child runs in a process group of its own (Setpgid), so a
// wrapper such as npx or sh leaves no process behind; the process is
// always waited for. On systems without process groups (Windows), the
// process is killed instead of signalled. An exit caused by Close is not
// an error.
//
// A process that dies on its own fails the calls in flight at once with
// an *ExitError. Later calls fail with it too, unless Restart allows a
// new process. A server that exits on the server/discover probe is a
// legacy server: it is started again and initialized, once, whatever the
// policy. The era found at Connect is kept for the life of the Client: a
// restarted legacy server is initialized again, never probed.
//
// Notifications reach Options.OnProgress, OnLog and OnToolsChanged on a
// goroutine of the connection, one at a time, never on the one reading
// stdout: a callback may call the Client. A host whose callbacks fall 256
// notifications behind loses the next ones (logged), except tool list
// changes. A modern server that offers tools.listChanged gets a
// subscriptions/listen request when OnToolsChanged is set; it is renewed
// after a restart, and when the server ends it, and OnToolsChanged is
// then called, since changes in between are not replayed. Close cancels
// it, and waits for callbacks and for Elicit and Roots handlers only
// within its bound.
//
// Connect only reads a CommandTransport: it may be used by several
// Connects, each starting its own process, but must not change while one
// runs.
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
type CommandTransport struct {
	// Name names the server in logs and errors; empty means the base name
	// of the command.
	Name string
	// Command is the program to run, looked up in PATH when it holds no
	// path separator.
	Command string
	// Args are the arguments passed to Command.
	Args []string
	// Env adds variables to the child's environment (or overrides the
	// base). Values may refer to the host's environment as ${NAME} or
	// $NAME, expanded at Connect; a reference to an unset variable is an
	// error, and $$ stands for a literal $.
	Env map[string]string
	// Dir is the child's working directory; empty means the host's.
	Dir string

	// Cmd, instead of Command, Args, Env and Dir, is a command the host
	// built. It serves as a template and is never started itself: each
	// process (first or restarted) is a new command with its Path, Args,
	// Env, Dir, ExtraFiles and SysProcAttr (in which the transport sets
	// Setpgid). Stdin, Stdout and Stderr must be nil: the transport owns
	// them. When Cmd.Env is nil the child gets the minimal base
	// environment described above, not the host's whole environment.
	Cmd *exec.Cmd

	// ProbeTimeout is how long Connect waits for the answer to the
	// server/discover probe alone; 0 means DefaultProbeTimeout. A server
	// that has not answered by then is slow to start (a package manager
	// downloading it) or legacy and silent on the probe: Connect then
	// sends initialize on the same stdin and takes the first answer that
	// settles the era, within Options.ConnectTimeout. A modern answer to
	// the probe makes the server modern, whatever initialize's answer (a
	// modern server refuses it, its era fixed by its first request); an
	// initialize that succeeds first makes it legacy. When initialize
	// fails, the probe's answer is awaited up to ProbeTimeout again
	// before initialize's error is returned. A Client pinned to
	// Version20260728 waits for the probe's answer within
	// Options.ConnectTimeout.
	ProbeTimeout time.Duration
	// Restart says whether a process that died on its own is started
	// again. Off by default: a server may hold state (a selected profile,
	// an open file) that a new process would silently lose.
	Restart RestartPolicy
}

// RestartPolicy bounds the restarts of a stdio server. A restart happens
// on the first call after the process died, never in the background; the
// calls that were in flight when it died are not retried.
type RestartPolicy struct {
	// MaxRestarts is how many times, over the life of the Client, a new
	// process may replace one that died; 0 never restarts. A restart that
	// the calling request's context cuts short (in its backoff, or while
	// the new process is started or initialized) is not counted: the next
	// call makes it again.
	MaxRestarts int
	// Backoff is the wait before the first restart, doubled for each
	// further one up to 30 s; 0 means DefaultRestartBackoff.
	Backoff time.Duration
	// OnRestart, when set, is told of each restart before it happens:
	// attempt counts from 1 and cause is why the last process ended
	// (usually an *ExitError); an attempt cut short is told again, with
	// the same number, when the next call makes it. Every restart is also
	// logged at Warn.
	OnRestart func(attempt int, cause error)
}

// ExitError reports a stdio server whose process ended on its own, or a
// StreamTransport's stream that the other side ended (Code -1, State
// "stream closed"). Calls fail with it (wrapped: get it with errors.As).
type ExitError struct {
	// Server is the server's name, Command the program as configured.
	Server, Command string
	// Code is the exit status, -1 when a signal ended the process.
	Code int
	// State says how the process ended: "exit status 3", "signal: killed".
	State string
	// Stderr holds the last lines the process wrote to stderr.
	Stderr string
	// Stdout holds the first line it wrote to stdout that was not
	// JSON-RPC, if any: often a usage message.
	Stdout string
}

// Is makes an ExitError match ErrStreamBroken: the calls in flight may
// have run.
func (e *ExitError) Is(target error) bool { return target == ErrStreamBroken }

// Error says which server exited and how, with what it last wrote to
// stdout and stderr.
func (e *ExitError) Error() string {
	s := fmt.Sprintf("mcp: server %q (%s) exited: %s", e.Server, e.Command, e.State)
	if e.Stdout != "" {
		s += fmt.Sprintf("; stdout: %q", e.Stdout)
	}
	if e.Stderr != "" {
		s += fmt.Sprintf("; stderr: %q", e.Stderr)
	}
	return s
}

func (t *CommandTransport) connect(ctx context.Context, c *Client) (conn, error) {
	l, err := t.launchSpec()
	if err != nil {
		return nil, err
	}
	if t.Restart.MaxRestarts < 0 {
		return nil, fmt.Errorf("mcp: server %q: negative MaxRestarts", l.name)
	}
	s := newStdioConn(c, l.name, t.ProbeTimeout, t.Restart)
	s.open = func(context.Context) (*proc, error) { return startProc(l, c, s.log, s.isModern, s.notice) }
	s.closeCuts = rawPipes
	return s, s.first(ctx)
}

// newStdioConn makes the conn of a stdio server, or of a host's stream,
// whose open is still to be set.
func newStdioConn(c *Client, name string, probe time.Duration, policy RestartPolicy) *stdioConn {
	if probe <= 0 {
		probe = DefaultProbeTimeout
	}
	log := c.log
	if c.opts.ServerName == "" { // else the Client's log names it
		log = log.With("server", name)
	}
	return &stdioConn{
		c:       c,
		log:     log,
		probe:   probe,
		policy:  policy,
		notes:   newNotifyQueue(c),
		sem:     make(chan struct{}, 1),
		done:    make(chan struct{}),
		swapped: make(chan struct{}),
	}
}

// first starts the first process.
func (s *stdioConn) first(ctx context.Context) error {
	p, err := s.start(ctx)
	if err != nil {
		s.notes.close(context.Background()) // no callback runs yet
		return err
	}
	close(p.ready)
	s.cur = p
	return nil
}

// launchSpec checks the transport and resolves what each start runs.
func (t *CommandTransport) launchSpec() (*launch, error) {
	if t.Cmd != nil {
		return t.fromCmd()
	}
	name := t.Name
	if name == "" {
		name = filepath.Base(t.Command)
	}
	if t.Command == "" {
		return nil, fmt.Errorf("mcp: server %q: CommandTransport needs Command or Cmd", name)
	}
	env, err := childEnv(t.Env)
	if err != nil {
		return nil, fmt.Errorf("mcp: server %q: %w", name, err)
	}
	cmd := exec.Command(t.Command, t.Args...)
	if cmd.Err != nil {
		return nil, fmt.Errorf("%w: server %q: command %q: %w", ErrUnreachable, name, t.Command, cmd.Err)
	}
	return &launch{name: name, command: t.Command, path: cmd.Path, args: cmd.Args, env: env, dir: t.Dir}, nil
}

func (t *CommandTransport) fromCmd() (*launch, error) {
	cmd := t.Cmd
	name := t.Name
	if name == "" {
		name = filepath.Base(cmd.Path)
	}
	switch {
	case t.Command != "" || len(t.Args) > 0 || len(t.Env) > 0 || t.Dir != "":
		return nil, fmt.Errorf("mcp: server %q: set Cmd or Command, Args, Env and Dir, not both", name)
	case cmd.Err != nil:
		return nil, fmt.Errorf("%w: server %q: command %q: %w", ErrUnreachable, name, cmd.Path, cmd.Err)
	case cmd.Path == "":
		return nil, fmt.Errorf("mcp: server %q: Cmd has no Path", name)
	case cmd.Process != nil:
		return nil, fmt.Errorf("mcp: server %q: Cmd was already started", name)
	case cmd.Stdin != nil || cmd.Stdout != nil || cmd.Stderr != nil:
		return nil, fmt.Errorf("mcp: server %q: Cmd.Stdin, Stdout and Stderr must be nil", name)
	}
	env := cmd.Env
	if env == nil {
		env, _ = childEnv(nil) // no references to expand: cannot fail
	}
	args := cmd.Args
	if len(args) == 0 {
		args = []string{cmd.Path}
	}
	return &launch{name: name, command: cmd.Path, path: cmd.Path, args: args, env: env, dir: cmd.Dir,
		extra: cmd.ExtraFiles, attr: cmd.SysProcAttr}, nil
}

// stdioConn is the conn of a stdio server: the current process, the
// restarts that replace it, and the subscription that follows them.
type stdioConn struct {
	c      *Client
	log    *slog.Logger
	open   func(context.Context) (*proc, error) // starts a process, or opens a stream
	probe  time.Duration
	policy RestartPolicy
	notes  *notifyQueue // notifications on their way to the host
	// closeCuts: Close ends every call in flight by itself, a write
	// blocked on a full pipe included (our own pipes, written raw), so a
	// call bounded by its own deadline needs no context of the Client's.
	closeCuts bool
	sem       chan struct{} // held by the one restart in progress
	done      chan struct{} // closed by close

	mu       sync.Mutex
	cur      *proc
	swapped  chan struct{} // closed when a restart replaces cur
	procs    []*proc       // every process started: close waits for their server requests
	restarts int           // restarts counted against the policy
	closed   bool
	era      Era
	// legacy is the version a legacy server agreed to at Connect;
	// setProtocol(EraLegacy, "") leaves it, so that a restart whose
	// initialize failed never makes the next restart skip initialize.
	legacy string
	listen stdioListen
}

// start runs a new process whose ready channel is still open.
func (s *stdioConn) start(ctx context.Context) (*proc, error) {
	p, err := s.open(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.procs = append(s.procs, p)
	s.mu.Unlock()
	return p, nil
}

func (s *stdioConn) isModern() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.era == EraModern
}

func (s *stdioConn) setProtocol(era Era, version string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.era = era
	if era == EraLegacy && version != "" {
		s.legacy = version
	}
}

func (s *stdioConn) probeTimeout() time.Duration { return s.probe }

func (s *stdioConn) roundTrip(ctx context.Context, r *outgoing, result any) error {
	p, err := s.acquire(ctx, r.method)
	if err != nil {
		return err
	}
	err = p.roundTrip(ctx, r, result)
	if err == nil {
		return nil
	}
	var exit *ExitError // past the check: a call that succeeds allocates none
	if r.method == "initialize" && errors.As(err, &exit) && s.firstProc(p) {
		// The process that got the probe died just after answering it,
		// as initialize went out: acquire starts the server again.
		if p, err = s.acquire(ctx, r.method); err != nil {
			return err
		}
		err = p.roundTrip(ctx, r, result)
	}
	if r.method == "server/discover" && errors.As(err, &exit) {
		// Not a modern answer: the negotiation falls back to initialize,
		// for which acquire starts the server again.
		return fmt.Errorf("%w: the server exited on the probe: %w", ErrProtocol, err)
	}
	return err
}

// firstProc reports whether p is the only process started so far.
func (s *stdioConn) firstProc(p *proc) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.procs) == 1 && s.procs[0] == p
}

func (s *stdioConn) notify(ctx context.Context, method string, params any) error {
	p, err := s.acquire(ctx, method)
	if err != nil {
		return err
	}
	if err := p.write(ctx, jsonrpc.Request{JSONRPC: jsonrpc.Version, Method: method, Params: params}); err != nil {
		return fmt.Errorf("mcp: %s: %w", method, err)
	}
	return nil
}

// acquire returns the process a message for method goes to, restarting a
// dead one when allowed. The initialize handshake goes to the newest
// process at once; other messages wait until it is initialized. A dead
// process that may not be restarted is returned as is: its calls fail
// with the reason it died.
func (s *stdioConn) acquire(ctx context.Context, method string) (*proc, error) {
	handshake := method == "initialize" || method == "notifications/initialized"
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return nil, ErrClosed
		}
		p := s.cur
		// The first process exiting before initialize, with or without
		// an answer: a legacy server that does not take the probe (spec:
		// start it again).
		probeExit := method == "initialize" && len(s.procs) == 1 && p.exited()
		s.mu.Unlock()
		if !handshake {
			select {
			case <-p.ready:
			case <-ctx.Done():
				return nil, fmt.Errorf("mcp: %s: %w", method, ctx.Err())
			}
		}
		if p.alive() || handshake && !probeExit {
			return p, nil
		}
		again, err := s.restart(ctx, p, probeExit)
		if err != nil {
			return nil, fmt.Errorf("mcp: %s: restarting the server: %w", method, err)
		}
		if !again {
			return p, nil
		}
	}
}

// restart replaces the dead process with a new one, unless another caller
// did already (again: look at the current process) or the policy forbids
// it (not again: dead stays). A restarted legacy server is initialized
// again with the version negotiated at Connect, every time.
func (s *stdioConn) restart(ctx context.Context, dead *proc, probeExit bool) (again bool, err error) {
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	defer func() { <-s.sem }()
	s.mu.Lock()
	if s.cur != dead || s.closed {
		s.mu.Unlock()
		return true, nil
	}
	if !probeExit && s.restarts >= s.policy.MaxRestarts {
		s.mu.Unlock()
		return false, nil
	}
	attempt := 0
	if !probeExit {
		s.restarts++
		attempt = s.restarts
	}
	version := s.legacy
	s.mu.Unlock()

	// An attempt that the calling request's context cuts short is not
	// counted: the caller gave up, the server did not fail, and the next
	// call makes the attempt again.
	cutShort := func(err error) error {
		if ctx.Err() != nil && !probeExit {
			s.mu.Lock()
			s.restarts--
			s.mu.Unlock()
		}
		return err
	}
	cause := dead.failure()
	if probeExit {
		s.log.Info("mcp: server exited on the server/discover probe; starting it again to initialize it")
	} else {
		s.log.Warn("mcp: restarting server", "attempt", attempt, "cause", cause)
		if s.policy.OnRestart != nil {
			s.policy.OnRestart(attempt, cause)
		}
		if err := s.sleep(ctx, s.backoff(attempt)); err != nil {
			return false, cutShort(err)
		}
	}
	// What the dead process left in its group goes first. Its server
	// requests are not waited for here (close does): a handler waiting for
	// the user must not hold up every call.
	_ = dead.stop(ctx)
	p, err := s.start(ctx)
	if err != nil {
		return false, cutShort(err)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		close(p.ready)
		return true, p.stop(ctx)
	}
	s.cur = p
	close(s.swapped)
	s.swapped = make(chan struct{})
	s.mu.Unlock()
	defer close(p.ready)
	if version == "" { // modern, or the probe exit: negotiate initializes it
		return true, nil
	}
	res, err := s.c.handshake(ctx, version)
	if err == nil && res.ProtocolVersion != version {
		err = fmt.Errorf("%w: the restarted server answered %s, not %s", ErrUnsupportedVersion, res.ProtocolVersion, version)
	}
	if err != nil {
		err = fmt.Errorf("initialize: %w", err)
		p.fatal(err)
		return false, cutShort(err)
	}
	return true, nil
}

// backoff is the wait before restart number attempt.
func (s *stdioConn) backoff(attempt int) time.Duration {
	d := s.policy.Backoff
	if d <= 0 {
		d = DefaultRestartBackoff
	}
	for i := 1; i < attempt && d < maxRestartBackoff; i++ {
		d *= 2
	}
	return min(d, maxRestartBackoff)
}

// sleep waits d, or until ctx is done or the connection closed.
func (s *stdioConn) sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-s.done:
		return ErrClosed
	}
}

// close ends the subscription, stops the current process, and waits for a
// restart in progress, which stops what it started once it sees the
// connection closed. Then it waits, until ctx is done, for the host's
// callbacks and the server requests being answered, of every process.
func (s *stdioConn) close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.done)
	p := s.cur
	s.mu.Unlock()
	s.unsubscribe(ctx)
	err := p.stop(ctx)
	select {
	case s.sem <- struct{}{}:
		<-s.sem
	case <-ctx.Done():
	}
	s.notes.close(ctx)
	s.mu.Lock()
	procs := s.procs
	s.mu.Unlock()
	for _, p := range procs {
		p.mux.answers.wait(ctx, p.mux.c.log)
	}
	return err
}

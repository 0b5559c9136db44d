package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"git.rickub.com/bots-garden/mini-me/internal/jsonrpc"
)

// Bounds of a stdio server's process.
const (
	// stdinGrace is how long a server has to exit once its stdin is
	// closed, and termGrace how long after SIGTERM, before SIGKILL.
	stdinGrace = 2 * time.Second
	termGrace  = 2 * time.Second
	// killWait bounds the wait for the process after SIGKILL.
	killWait = time.Second
	// pipeGrace is how long the pipes may stay open once the process has
	// exited (a grandchild holding them) before they are cut.
	pipeGrace = 200 * time.Millisecond
	// writeGrace is how long a failed write waits for the process's exit,
	// to report why it died rather than a broken pipe.
	writeGrace = 500 * time.Millisecond
	// groupPoll is the interval at which a shutdown checks the group.
	groupPoll = 10 * time.Millisecond
	// maxGarbageLines is how many non-JSON-RPC stdout lines in a row break
	// the connection.
	maxGarbageLines = 10
	// stderrTailLines and stderrTailBytes bound the stderr kept for
	// ExitError; stderrLineMax bounds one forwarded line.
	stderrTailLines = 20
	stderrTailBytes = 4 << 10
	stderrLineMax   = 4 << 10
	// sampleLen bounds the stdout sample quoted in errors.
	sampleLen = 200
)

// launch is what each start of a stdio server runs.
type launch struct {
	name    string // for logs and errors
	command string // as configured, for errors
	path    string
	args    []string // argv, with argv[0]
	env     []string
	dir     string
	extra   []*os.File
	attr    *syscall.SysProcAttr
}

// proc is one run of a stdio server: its pipes, the goroutines that read
// them and wait for it, and the calls in flight on it. A proc over a
// host's stream (StreamTransport) has no cmd and no stderr: stdin and
// stdout are the stream, and its end is the stream's.
type proc struct {
	l      *launch
	log    *slog.Logger
	maxMsg int64
	cmd    *exec.Cmd // nil over a host's stream
	pgid   int
	stdin  io.WriteCloser
	stdout io.ReadCloser
	stderr io.ReadCloser // nil over a host's stream
	exit   *os.File      // the process's pidfd (Linux), which wait waits on; nil if none
	wsem   chan struct{} // serialises writes to stdin
	cut    writeCut      // cancels the write in progress; used under wsem
	mux    *mux
	ctx    context.Context // for server requests; ends with the process
	cancel context.CancelFunc
	life   context.Context // the Client's: ends when Close begins
	// notice takes the notifications, without blocking.
	notice func(method string, params json.RawMessage)

	ready      chan struct{} // closed once usable (a restart initialized it)
	stdoutDone chan struct{}
	stderrDone chan struct{}
	gone       chan struct{} // closed once reaped and its calls failed

	closing atomic.Bool // stop began: the exit is ours
	broken  atomic.Bool // a fatal stream error: being terminated

	gmu     sync.Mutex
	sample  string // first non-JSON-RPC stdout line
	garbage int    // non-JSON-RPC lines since the last valid message

	tail stderrTail

	stopOnce sync.Once
	stopErr  error
}

// startProc starts the server with three pipes of our own, so that no
// goroutine of os/exec sits between the process and us. Its notifications
// go to notice, its other messages to its mux.
func startProc(l *launch, c *Client, log *slog.Logger, modern func() bool, notice func(string, json.RawMessage)) (*proc, error) {
	var files []*os.File
	pipe := func() (r, w *os.File, err error) {
		if r, w, err = os.Pipe(); err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	closeAll := func() {
		for _, f := range files {
			_ = f.Close()
		}
	}
	inR, inW, err1 := pipe()
	outR, outW, err2 := pipe()
	errR, errW, err3 := pipe()
	if err := errors.Join(err1, err2, err3); err != nil {
		closeAll()
		return nil, fmt.Errorf("mcp: server %q: %w", l.name, err)
	}
	cmd := &exec.Cmd{Path: l.path, Args: l.args, Env: l.env, Dir: l.dir, ExtraFiles: l.extra,
		SysProcAttr: groupAttr(l.attr), Stdin: inR, Stdout: outW, Stderr: errW}
	if err := cmd.Start(); err != nil {
		closeAll()
		return nil, fmt.Errorf("%w: server %q: start %s: %w", ErrUnreachable, l.name, l.command, err)
	}
	// The child has its ends; ours would keep the pipes open.
	_, _, _ = inR.Close(), outW.Close(), errW.Close()
	ctx, cancel := context.WithCancel(context.Background())
	p := &proc{
		l: l, log: log, maxMsg: c.opts.MaxMessageSize, cmd: cmd, pgid: processGroup(cmd.Process.Pid),
		stdin: inW, stdout: outR, stderr: errR, wsem: make(chan struct{}, 1), notice: notice, ctx: ctx, cancel: cancel,
		ready: make(chan struct{}), stdoutDone: make(chan struct{}), stderrDone: make(chan struct{}), gone: make(chan struct{}),
		exit: exitFile(cmd.Process.Pid), life: c.life,
	}
	p.mux = newMux(c, func(ctx context.Context, msg jsonrpc.Response) error { return p.write(ctx, msg) }, notice, modern)
	log.Debug("mcp: server started", "pid", cmd.Process.Pid)
	go p.readStdout()
	go p.readStderr()
	go p.wait()
	return p, nil
}

// alive reports whether calls may go to the process: it has not died,
// broken or begun to stop (each fails its mux first).
func (p *proc) alive() bool { return p.failure() == nil }

// exited reports whether the process died on its own.
func (p *proc) exited() bool {
	_, exited := p.failure().(*ExitError)
	return exited
}

// failure is why calls on the process fail, nil while it works.
func (p *proc) failure() error {
	p.mux.mu.Lock()
	defer p.mux.mu.Unlock()
	return p.mux.err
}

func (p *proc) roundTrip(ctx context.Context, r *outgoing, result any) error {
	ch, err := p.send(ctx, r)
	if err != nil {
		return err
	}
	err = p.mux.await(ctx, r, ch, result)
	if err == nil || ctx.Err() == nil {
		return err
	}
	// initialize must not be cancelled; the probe has no effect to stop,
	// and a legacy server expects nothing before initialize.
	if r.method != "initialize" && r.method != "server/discover" {
		p.cancelRequest(r.id)
	}
	p.gmu.Lock()
	sample, garbage := p.sample, p.garbage
	p.gmu.Unlock()
	if garbage > 0 {
		return fmt.Errorf("%w; %w: the server's last stdout lines are not JSON-RPC, the first: %q", err, ErrProtocol, sample)
	}
	return err
}

// send writes request r, whose response will come on the channel it
// returns.
func (p *proc) send(ctx context.Context, r *outgoing) (chan delivery, error) {
	ch, err := p.mux.register(r.id)
	if err != nil {
		return nil, fmt.Errorf("mcp: %s: %w", r.method, err)
	}
	// The request is encoded into a pooled buffer, written, and the
	// buffer given back: the write is over when writeLine returns.
	buf := lineBufs.Get().(*[]byte)
	b, err := appendRequest((*buf)[:0], r.id, r.method, r.params)
	if err == nil {
		b = append(b, '\n')
		err = p.writeLine(ctx, b)
		*buf = b
	}
	putLine(buf)
	if err != nil {
		p.mux.forget(r.id)
		return nil, fmt.Errorf("mcp: %s: %w", r.method, err)
	}
	return ch, nil
}

// cancelRequest tells the server that the request id is no longer wanted
// (stdio has no stream to close), within notifyTimeout.
func (p *proc) cancelRequest(id int64) {
	ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
	defer cancel()
	_ = p.write(ctx, jsonrpc.Request{JSONRPC: jsonrpc.Version, Method: "notifications/cancelled",
		Params: map[string]any{"requestId": id, "reason": "cancelled by the client"}})
}

// write sends one message, a line of JSON, to stdin. json.Marshal escapes
// every newline, so the line is whole. Cancelling ctx ends a write blocked
// on a full pipe; a write cut short breaks the connection, whose framing is
// lost.
func (p *proc) write(ctx context.Context, msg any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	return p.writeLine(ctx, append(b, '\n'))
}

// writeLine writes line, JSON without a raw newline and the newline that
// ends it. A ctx done before the write starts writes nothing.
func (p *proc) writeLine(ctx context.Context, line []byte) error {
	select {
	case p.wsem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-p.wsem }()
	if err := ctx.Err(); err != nil {
		return err // the select may have picked wsem though ctx was done
	}
	if p.cut.fn == nil {
		p.cut.fired, p.cut.fn = make(chan struct{}, 1), p.cutWrite
		if p.cut.raw = rawStdin(p.stdin); p.cut.raw != nil {
			p.cut.try = p.tryWrite
		}
	}
	var n int
	var err error
	if p.cut.raw != nil {
		n, err = p.writeRaw(ctx, line)
	} else {
		stop := context.AfterFunc(ctx, p.cut.fn)
		n, err = p.stdin.Write(line)
		p.uncut(stop)
	}
	if err == nil {
		return nil
	}
	if n > 0 {
		p.fatal(fmt.Errorf("%w: server %q: a message to stdin was cut short: %w", ErrStreamBroken, p.l.name, err))
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if p.life != nil && p.life.Err() != nil {
		return ErrClosed // cut by Close, or written after it began
	}
	// Most likely the process is dying: say why, rather than EPIPE.
	t := time.NewTimer(writeGrace)
	defer t.Stop()
	select {
	case <-p.gone:
		if f := p.failure(); f != nil {
			return f
		}
	case <-t.C:
	}
	return fmt.Errorf("stdin: %w", err)
}

// writeRaw writes line to our own pipe through its raw descriptor
// (tryWrite). A line that fits in the pipe, as a request nearly always
// does, is written at once and nothing watches ctx; only when the pipe is
// full does the write wait, and ctx then cuts it as over any stream. So
// does Close, when the write began before it: a call bounded by its own
// deadline has no context that Close cancels (see Client.call), and
// Close's first write, the subscription's cancel notice, would wait for
// it.
func (p *proc) writeRaw(ctx context.Context, line []byte) (int, error) {
	w := &p.cut
	w.ctx, w.rest, w.n, w.err = ctx, line, 0, nil
	w.life = p.life != nil && p.life.Err() == nil
	err := w.raw.Write(w.try)
	if w.stop != nil {
		p.uncut(w.stop)
	}
	if w.stopLife != nil {
		p.uncut(w.stopLife)
	}
	n := w.n
	if err == nil {
		err = w.err
	}
	w.ctx, w.rest, w.stop, w.stopLife, w.err = nil, nil, nil, nil, nil
	return n, err
}

// tryWrite is writeRaw's step, run by the pipe's RawConn with its
// descriptor: it writes what it can and returns false to wait until the
// pipe has room, having first set ctx to cut the wait.
func (p *proc) tryWrite(fd uintptr) bool {
	w := &p.cut
	for len(w.rest) > 0 {
		n, err := writeFd(fd, w.rest)
		if n > 0 {
			w.n += n
			w.rest = w.rest[n:]
		}
		switch {
		case err == syscall.EINTR:
		case err == syscall.EAGAIN:
			if w.stop == nil {
				w.stop = context.AfterFunc(w.ctx, w.fn)
				if w.life {
					w.stopLife = context.AfterFunc(p.life, w.fn)
				}
			}
			return false
		case err != nil:
			w.err = &os.PathError{Op: "write", Path: "stdin", Err: err}
			return true
		case n == 0:
			w.err = io.ErrShortWrite
			return true
		}
	}
	return true
}

// uncut undoes the cut that stop stops: if it ran, the write deadline it
// set is cleared once it is done (once each cut that ran is done, when
// two watched the write).
func (p *proc) uncut(stop func() bool) {
	if stop() {
		return
	}
	<-p.cut.fired
	if dl, ok := p.stdin.(writeDeadliner); ok {
		_ = dl.SetWriteDeadline(time.Time{})
	}
}

// writeCut is what writeLine needs to cancel a write, kept from one write
// to the next so that a write allocates nothing for it.
type writeCut struct {
	fired chan struct{} // receives once fn has run
	fn    func()        // p.cutWrite, bound once

	// For our own pipe: its raw descriptor and p.tryWrite, bound once;
	// nil for a host's stream.
	raw syscall.RawConn
	try func(fd uintptr) bool
	// The raw write in progress.
	ctx  context.Context
	rest []byte      // still to write
	n    int         // written
	err  error       // the write's own error
	stop func() bool // stops the cut, once the pipe was found full
	// life: Close cuts the write too (it began before Close);
	// stopLife stops that cut.
	life     bool
	stopLife func() bool
}

// cutWrite ends the write in progress when its context is done: by a
// deadline in the past, or by cutting a stream that has none.
func (p *proc) cutWrite() {
	if dl, ok := p.stdin.(writeDeadliner); ok {
		_ = dl.SetWriteDeadline(time.Unix(1, 0))
	} else {
		// A stream without deadlines can only be cut. The other calls
		// fail with it: the context that ended is not theirs.
		p.fatal(fmt.Errorf("%w: server %q: a write cancelled by its caller cut the stream", ErrStreamBroken, p.l.name))
	}
	p.cut.fired <- struct{}{}
}

// writeDeadliner is the part of *os.File and net.Conn that lets a blocked
// write be cancelled without closing the stream.
type writeDeadliner interface {
	SetWriteDeadline(time.Time) error
}

// readStdout reads one message per line until the pipe ends. After a
// fatal stream error it only drains, so the child never blocks on it.
func (p *proc) readStdout() {
	defer close(p.stdoutDone)
	defer p.stdout.Close()
	r := bufio.NewReaderSize(p.stdout, 64<<10)
	for {
		// Each line is read into a pooled buffer; a response goes to its
		// caller in it, and the caller gives it back.
		buf := lineBufs.Get().(*[]byte)
		line, err := readLine(r, (*buf)[:0], p.maxMsg)
		*buf = line
		handed := false
		if errors.Is(err, ErrTooLarge) {
			p.fatal(fmt.Errorf("%w: server %q: a stdout line exceeds %d bytes", ErrTooLarge, p.l.name, p.maxMsg))
		} else if len(line) > 0 && !p.broken.Load() {
			handed = p.handle(line, buf)
		}
		if !handed {
			putLine(buf)
		}
		if err != nil || p.broken.Load() {
			_, _ = io.Copy(io.Discard, r)
			return
		}
	}
}

// readLine reads a line into buf without its end of line, failing with
// ErrTooLarge past max bytes. A line longer than r's buffer is gathered
// in chunks, so that refusing one costs about max bytes, not twice that.
func readLine(r *bufio.Reader, buf []byte, max int64) ([]byte, error) {
	chunk, err := r.ReadSlice('\n')
	if int64(len(chunk)) > max+2 { // room for "\r\n"
		return buf, ErrTooLarge
	}
	if err != bufio.ErrBufferFull {
		return maxLine(trimEOL(append(buf, chunk...)), max, err)
	}
	g := gather{max: max + 2}
	defer g.release()
	for err == bufio.ErrBufferFull {
		if g.add(chunk) != nil {
			return buf, ErrTooLarge
		}
		chunk, err = r.ReadSlice('\n')
	}
	if g.add(chunk) != nil {
		return buf, ErrTooLarge
	}
	return maxLine(trimEOL(g.appendTo(buf)), max, err)
}

// maxLine refuses a line that is over max bytes once its end of line is
// gone (a line of max+1 or max+2 bytes passes the "\r\n" allowance).
func maxLine(line []byte, max int64, err error) ([]byte, error) {
	if int64(len(line)) > max {
		return line, ErrTooLarge
	}
	return line, err
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}

// handle dispatches one stdout line, held by buf: a message, or a batch of
// them. It reports whether it handed the line on to a call (see
// mux.dispatch), which then owns it.
func (p *proc) handle(line []byte, buf *[]byte) (handed bool) {
	t := bytes.TrimLeft(line, " \t\r")
	if len(bytes.TrimSpace(t)) == 0 {
		return false
	}
	var err error
	if t[0] == '[' {
		var batch []json.RawMessage // each a copy of its own
		if err = json.Unmarshal(line, &batch); err == nil {
			for _, m := range batch {
				if _, err = p.mux.dispatch(p.ctx, m, nil); err != nil {
					break
				}
			}
		}
	} else {
		handed, err = p.mux.dispatch(p.ctx, line, buf)
	}
	p.gmu.Lock()
	if err == nil {
		p.garbage = 0
		p.gmu.Unlock()
		return handed
	}
	p.garbage++
	first := p.sample == ""
	if first {
		p.sample = clip(string(line), sampleLen)
	}
	sample, garbage := p.sample, p.garbage
	p.gmu.Unlock()
	if first {
		p.log.Warn("mcp: server wrote a line that is not JSON-RPC to stdout; skipped", "line", sample, "error", err)
	} else {
		p.log.Debug("mcp: stdout line that is not JSON-RPC skipped", "line", clip(string(line), sampleLen))
	}
	if garbage >= maxGarbageLines {
		p.fatal(fmt.Errorf("%w: server %q wrote %d lines in a row that are not JSON-RPC to stdout, the first: %q",
			ErrProtocol, p.l.name, garbage, sample))
	}
	return false
}

// readStderr forwards stderr to the log line by line and keeps its tail.
func (p *proc) readStderr() {
	defer close(p.stderrDone)
	defer p.stderr.Close()
	r := bufio.NewReaderSize(p.stderr, stderrLineMax)
	for {
		line, err := r.ReadSlice('\n') // a longer line comes in pieces
		if s := string(trimEOL(line)); s != "" {
			p.tail.add(s)
			p.log.Info("mcp: server stderr", "line", s)
		}
		if err != nil && err != bufio.ErrBufferFull {
			return
		}
	}
}

// wait waits for the process's exit and reaps it, lets the readers finish
// what it wrote, then fails the calls still in flight.
func (p *proc) wait() {
	// Parked on the pidfd until the exit, rather than in a waitid that
	// holds a thread for as long as the server runs; then reaped at once.
	awaitExit(p.exit)
	_ = p.cmd.Wait() // the state says it all
	if p.exit != nil {
		_ = p.exit.Close()
	}
	t := time.NewTimer(pipeGrace)
	defer t.Stop()
	for _, done := range []chan struct{}{p.stdoutDone, p.stderrDone} {
		select {
		case <-done:
		case <-t.C:
			// Something the process started still holds the pipes.
			_, _ = p.stdout.Close(), p.stderr.Close()
			<-done
		}
	}
	st := p.cmd.ProcessState
	p.finish(st.ExitCode(), st.String())
}

// waitStream waits for the end of a host's stream, then fails the calls
// still in flight.
func (p *proc) waitStream() {
	<-p.stdoutDone
	p.finish(-1, "stream closed")
}

// finish fails the calls in flight of a process that ended (code and
// state say how) and releases what it held.
func (p *proc) finish(code int, state string) {
	if p.closing.Load() || p.broken.Load() {
		p.mux.fail(ErrClosed) // no-op: failed already, with the reason
	} else {
		p.gmu.Lock()
		sample := p.sample
		p.gmu.Unlock()
		p.log.Warn("mcp: server exited", "state", state)
		p.mux.fail(&ExitError{Server: p.l.name, Command: p.l.command, Code: code, State: state,
			Stderr: p.tail.String(), Stdout: sample})
	}
	p.cancel()
	_ = p.stdin.Close()
	close(p.gone)
}

// fatal breaks the connection: calls fail with err and the process is
// asked to stop (stop, at Close, finishes the job).
func (p *proc) fatal(err error) {
	if p.broken.Swap(true) {
		return
	}
	p.log.Warn("mcp: server connection broken", "error", err)
	p.mux.fail(err)
	_ = p.stdin.Close()
	if p.cmd == nil {
		return // closing a host's stream ends it
	}
	select {
	case <-p.gone:
	default:
		p.signalGroup(true)
	}
}

// stop ends the process: EOF on stdin, SIGTERM to its group, SIGKILL, each
// after a bounded wait (a done ctx skips to SIGKILL). Calls in flight fail
// with ErrClosed; the server requests being answered are not waited for.
// It is idempotent; concurrent callers wait for the first.
func (p *proc) stop(ctx context.Context) error {
	p.stopOnce.Do(func() { p.stopErr = p.shutdown(ctx) })
	return p.stopErr
}

func (p *proc) shutdown(ctx context.Context) error {
	p.closing.Store(true)
	p.cancel()
	p.mux.fail(ErrClosed)
	_ = p.stdin.Close()
	if p.cmd == nil {
		if !p.waitGone(ctx, stdinGrace) {
			return fmt.Errorf("mcp: server %q: the stream's reader did not return after Close", p.l.name)
		}
		return nil
	}
	if !p.waitGone(ctx, stdinGrace) {
		p.log.Debug("mcp: server still running after stdin closed; SIGTERM")
		p.signalGroup(true)
		if !p.waitGone(ctx, termGrace) {
			p.log.Warn("mcp: server still running after SIGTERM; SIGKILL")
			p.signalGroup(false)
			t := time.NewTimer(killWait)
			defer t.Stop()
			select {
			case <-p.gone:
			case <-t.C:
				return fmt.Errorf("mcp: server %q: process %d still running after SIGKILL", p.l.name, p.cmd.Process.Pid)
			}
		}
	}
	return nil
}

// waitGone waits up to d for the process to be reaped and its group to
// empty; false when d or ctx ran out first.
func (p *proc) waitGone(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.gone:
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
	tick := time.NewTicker(groupPoll)
	defer tick.Stop()
	for p.groupAlive() {
		select {
		case <-tick.C:
		case <-t.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// stderrTail keeps the last lines of stderr.
type stderrTail struct {
	mu    sync.Mutex
	lines [stderrTailLines]string
	next  int
	n     int
}

func (t *stderrTail) add(s string) {
	if len(s) > stderrTailBytes {
		s = s[len(s)-stderrTailBytes:]
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines[t.next] = s
	t.next = (t.next + 1) % stderrTailLines
	t.n = min(t.n+1, stderrTailLines)
}

// String returns the kept lines, oldest first, within stderrTailBytes.
func (t *stderrTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var keep []string
	size := 0
	for i := 1; i <= t.n; i++ {
		s := t.lines[(t.next-i+stderrTailLines)%stderrTailLines]
		if size+len(s)+1 > stderrTailBytes && len(keep) > 0 {
			break
		}
		size += len(s) + 1
		keep = append(keep, s)
	}
	for i, j := 0, len(keep)-1; i < j; i, j = i+1, j-1 {
		keep[i], keep[j] = keep[j], keep[i]
	}
	return strings.Join(keep, "\n")
}

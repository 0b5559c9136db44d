package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"git.rickub.com/bots-garden/mini-me/internal/jsonrpc"
)

// StreamTransport reaches a server over a stream the host opens: anything
// that carries newline-delimited JSON-RPC both ways, the framing of stdio.
// An in-process server over net.Pipe, an SSH channel, a socket the host
// dialled, a test double.
//
// Dial is called once at Connect, again when a server closes the stream on
// the server/discover probe (a legacy server that does not take it, as a
// stdio server that exits), and after the stream ends on its own when
// Restart allows it. Each call must return a new stream; the transport
// owns it from then on and closes it at Client.Close or when the
// connection breaks. Connect only reads a StreamTransport.
//
// The stream gets everything a stdio server gets, but the process: the
// era is detected the same way (see ProbeTimeout), a line
// above Options.MaxMessageSize or 10 lines in a row that are not JSON-RPC
// break the connection, batches are read, notifications reach the host's
// callbacks off the reader, and a modern server is subscribed to tool
// list changes. A stream that ends fails the calls in flight with an
// *ExitError whose State is "stream closed".
//
// Cancelling a call whose request is blocked in Write sets a write
// deadline when the stream has SetWriteDeadline (net.Conn, *os.File);
// otherwise the stream is closed, since a message cut short would leave
// the framing lost anyway. Close closes the stream and waits, within its
// bound, for the Read in progress to return: Close must unblock Read.
type StreamTransport struct {
	// Name names the server in logs and errors; empty means "stream".
	Name string
	// Dial opens a new stream to the server. It is required.
	Dial func(ctx context.Context) (io.ReadWriteCloser, error)
	// ProbeTimeout is how long Connect waits for the answer to the
	// server/discover probe before it sends initialize too, as for
	// CommandTransport; 0 means DefaultProbeTimeout.
	ProbeTimeout time.Duration
	// Restart says whether a stream that ended on its own is dialled
	// again, as for CommandTransport.
	Restart RestartPolicy
}

func (t *StreamTransport) connect(ctx context.Context, c *Client) (conn, error) {
	name := t.Name
	if name == "" {
		name = "stream"
	}
	switch {
	case t.Dial == nil:
		return nil, fmt.Errorf("mcp: server %q: StreamTransport needs Dial", name)
	case t.Restart.MaxRestarts < 0:
		return nil, fmt.Errorf("mcp: server %q: negative MaxRestarts", name)
	}
	l := &launch{name: name, command: "stream"}
	s := newStdioConn(c, name, t.ProbeTimeout, t.Restart)
	s.open = func(ctx context.Context) (*proc, error) {
		rwc, err := t.Dial(ctx)
		if err == nil && rwc == nil {
			err = errors.New("dial returned no stream")
		}
		if err != nil {
			return nil, fmt.Errorf("%w: server %q: %w", ErrUnreachable, name, err)
		}
		return startStream(l, rwc, c, s)
	}
	return s, s.first(ctx)
}

// startStream runs the protocol over a host's stream, as startProc does
// over a process's pipes.
func startStream(l *launch, rwc io.ReadWriteCloser, c *Client, s *stdioConn) (*proc, error) {
	ctx, cancel := context.WithCancel(context.Background())
	p := &proc{
		l: l, log: s.log, maxMsg: c.opts.MaxMessageSize, stdin: rwc, stdout: rwc,
		wsem: make(chan struct{}, 1), notice: s.notice, ctx: ctx, cancel: cancel,
		ready: make(chan struct{}), stdoutDone: make(chan struct{}), stderrDone: make(chan struct{}), gone: make(chan struct{}),
	}
	close(p.stderrDone)
	p.mux = newMux(c, func(ctx context.Context, msg jsonrpc.Response) error { return p.write(ctx, msg) }, s.notice, s.isModern)
	go p.readStdout()
	go p.waitStream()
	return p, nil
}

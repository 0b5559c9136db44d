package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"sync"

	"git.rickub.com/bots-garden/mini-me/internal/jsonrpc"
)

// mux matches responses to requests on transports where every message of
// the server arrives on one stream (stdio, HTTP+SSE). A reader goroutine
// calls dispatch; callers wait in await.
type mux struct {
	c       *Client
	reply   func(ctx context.Context, msg jsonrpc.Response) error
	notify  func(method string, params json.RawMessage) // must not block
	modern  func() bool
	mu      sync.Mutex
	pending map[int64]chan delivery
	redact  func(string) string // removes a token from server text, if set
	err     error               // set once the stream is gone
	answers handlers            // server requests being answered
}

// newMux makes a mux; notify receives the notifications, and must not
// block the reader (a notifyQueue's push).
func newMux(c *Client, reply func(context.Context, jsonrpc.Response) error, notify func(string, json.RawMessage), modern func() bool) *mux {
	return &mux{c: c, reply: reply, notify: notify, modern: modern, pending: map[int64]chan delivery{}}
}

// register makes room for the response to id.
func (m *mux) register(id int64) (chan delivery, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return nil, m.err
	}
	ch := deliveries.Get().(chan delivery)
	m.pending[id] = ch
	return ch, nil
}

// deliveries are the empty channels of calls that ended: a channel is put
// back only when nothing else can hold it, once its response was received
// or when forget took it from pending before the reader did.
var deliveries = sync.Pool{New: func() any { return make(chan delivery, 1) }}

// forget removes the call pending on id, and reports whether it was still
// there (the reader did not take its channel).
func (m *mux) forget(id int64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.pending[id]
	delete(m.pending, id)
	return ok
}

// delivery is a response as the reader hands it to its caller: the whole
// message, which the caller now owns and decodes once, straight into its
// result (see routeResponse), and the line buffer that holds it, if it
// came from lineBufs, for the caller to give back once decoded.
type delivery struct {
	data   []byte
	result bool    // the message has a result member that is not null
	buf    *[]byte // data's pooled holder, or nil
}

// lineBufs recycles the buffers that stdio lines are read into: the
// reader reads a line into one, hands it to the call it answers, and the
// call gives it back once it has decoded it.
var lineBufs = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledLine is the largest line buffer kept for another line.
const maxPooledLine = 4 << 20

// putLine gives a line buffer back, unless it is nil or too large to keep.
func putLine(b *[]byte) {
	if b != nil && cap(*b) <= maxPooledLine {
		*b = (*b)[:0]
		lineBufs.Put(b)
	}
}

// await waits for the response to r and decodes its result. When ctx
// ends, it fails with ctx's error, even if the stream broke meanwhile,
// unless the response had come.
func (m *mux) await(ctx context.Context, r *outgoing, ch chan delivery, result any) error {
	select {
	case rp, ok := <-ch:
		if !ok {
			if ctx.Err() != nil {
				// The stream broke as ctx ended: the caller gave up
				// first, whichever the select saw.
				return fmt.Errorf("mcp: %s: %w", r.method, ctx.Err())
			}
			m.mu.Lock()
			err := m.err
			m.mu.Unlock()
			return methodError(r.method, err)
		}
		deliveries.Put(ch)
		defer putLine(rp.buf)
		r.size = len(rp.data)
		return m.decode(r.method, rp, result)
	case <-ctx.Done():
		if m.forget(r.id) {
			deliveries.Put(ch)
			return fmt.Errorf("mcp: %s: %w", r.method, ctx.Err())
		}
		// The reader took the call's channel: the response is there, or
		// on its way, unless the stream failed. A response that came is
		// the call's outcome whenever ctx ended, as over Streamable HTTP:
		// the request ran, and its result may name a task to follow.
		rp, ok := <-ch
		if !ok {
			return fmt.Errorf("mcp: %s: %w", r.method, ctx.Err())
		}
		deliveries.Put(ch)
		defer putLine(rp.buf)
		r.size = len(rp.data)
		return m.decode(r.method, rp, result)
	}
}

// decode decodes a response delivered to a call of method into result:
// a JSON-RPC error as *RPCError, bytes that do not decode as ErrProtocol.
func (m *mux) decode(method string, rp delivery, result any) error {
	msg := jsonrpc.Message{Result: result}
	err := decodeMessage(rp.data, &msg)
	if err == nil {
		err = msg.Check()
	}
	if err != nil {
		return fmt.Errorf("%w: %s: malformed response: %w", ErrProtocol, method, err)
	}
	if msg.Error != nil {
		e := rpcError(method, msg.Error)
		if m.redact != nil {
			e.Message, e.Data = m.redact(e.Message), json.RawMessage(m.redact(string(e.Data)))
		}
		return e
	}
	if !rp.result {
		return fmt.Errorf("%w: %s: response has no result", ErrProtocol, method)
	}
	return nil
}

// dispatch handles one incoming message, data, which it owns: buf, if
// not nil, is the pooled holder of data's memory. It returns an error only
// for bytes that are not a JSON-RPC message, and reports whether it handed
// data on to a pending call, which then owns it (and buf); otherwise the
// caller may reuse it. A plain response to a pending call is only routed
// (see routeResponse): its caller decodes it, once, with no copy made.
func (m *mux) dispatch(ctx context.Context, data []byte, buf *[]byte) (handed bool, err error) {
	if id, result, ok := routeResponse(data); ok {
		if ch := m.take(id); ch != nil {
			ch <- delivery{data, result, buf}
			return true, nil
		}
		// No call waits for it: the full decoding below checks it, and
		// drops it.
	}
	// The message and its raw result in one allocation.
	in := &struct {
		msg jsonrpc.Message
		raw json.RawMessage
	}{}
	msg := &in.msg
	msg.Result = &in.raw
	if err := json.Unmarshal(data, msg); err != nil {
		return false, err
	}
	if err := msg.Check(); err != nil {
		return false, err
	}
	switch {
	case msg.IsResponse():
		var ch chan delivery
		if id, err := strconv.ParseInt(string(msg.ID), 10, 64); err == nil {
			ch = m.take(id)
		}
		if ch == nil {
			m.c.log.Debug("mcp: response to no pending request dropped", "id", msg.ID.String())
			return false, nil
		}
		ch <- delivery{data, len(in.raw) > 0 && string(in.raw) != "null", buf}
		return true, nil
	case msg.IsNotification():
		m.notify(msg.Method, msg.Params)
	case m.modern():
		m.c.ignoredRequest(msg.Method)
	default:
		m.serve(ctx, msg)
	}
	return false, nil
}

// serve answers a server request on a goroutine of its own or, with
// Options.MaxServerRequests answers in progress, at once with an error,
// written by the reader itself within notifyTimeout: a server that floods
// requests is slowed down, not given a goroutine each.
func (m *mux) serve(ctx context.Context, msg *jsonrpc.Message) {
	answer := func(ctx context.Context, res any, rerr *jsonrpc.Error) {
		if err := m.reply(ctx, jsonrpc.Response{JSONRPC: jsonrpc.Version, ID: msg.ID, Result: res, Error: rerr}); err != nil {
			m.c.log.Warn("mcp: answering a server request failed", "method", msg.Method, "error", err)
		}
	}
	if m.answers.run(m.c.opts.MaxServerRequests, func() {
		res, rerr := m.c.serverRequest(ctx, msg.Method, msg.Params)
		answer(ctx, res, rerr)
	}) {
		return
	}
	bctx, cancel := context.WithTimeout(ctx, notifyTimeout)
	defer cancel()
	answer(bctx, nil, m.c.busy(msg.Method))
}

// take removes and returns the channel of the call pending on id, nil if
// none.
func (m *mux) take(id int64) chan delivery {
	m.mu.Lock()
	defer m.mu.Unlock()
	ch := m.pending[id]
	delete(m.pending, id)
	return ch
}

// handlers runs the answers to server requests (the host's Elicit and
// Roots handlers among them), each on a goroutine of its own: a handler
// may wait for the user while the reader goes on delivering responses and
// the caller's context keeps its meaning. The zero value is ready to use.
type handlers struct {
	mu     sync.Mutex
	closed bool
	active int // answers running
	wg     sync.WaitGroup
}

// run starts f, unless wait has begun (a closing connection answers
// nothing more, and run reports true all the same). It reports false,
// starting nothing, when limit answers are running already: the caller
// then answers the request with an error (Client.busy).
func (g *handlers) run(limit int, f func()) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return true
	}
	if g.active >= limit {
		return false
	}
	g.active++
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		defer func() {
			g.mu.Lock()
			g.active--
			g.mu.Unlock()
		}()
		f()
	}()
	return true
}

// wait waits for the answers in progress until ctx is done: a handler that
// ignores its (cancelled) context is abandoned rather than left to hang
// Close.
func (g *handlers) wait(ctx context.Context, log *slog.Logger) {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	done := make(chan struct{})
	go func() {
		g.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		log.Warn("mcp: a server request handler did not return; abandoned")
	}
}

// fail ends every pending call with err; later calls fail at once.
func (m *mux) fail(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err == nil {
		m.err = err
	}
	for id, ch := range m.pending {
		close(ch)
		delete(m.pending, id)
	}
}

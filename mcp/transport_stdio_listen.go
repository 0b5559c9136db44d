package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"time"
)

const (
	// listenRetry is the wait before subscribing again to a server that
	// ended the subscription, doubled while it keeps ending them within
	// maxRestartBackoff, up to that.
	listenRetry = 500 * time.Millisecond
	// listenSendWait bounds how long subscribe waits for the first
	// request to be written.
	listenSendWait = 2 * time.Second
)

// stdioListen is the state of a stdio server's subscription; stdioConn.mu
// guards it.
type stdioListen struct {
	stop context.CancelFunc // ends the loop; nil until subscribe
	done chan struct{}      // closed when the loop has returned
	id   int64              // the listen request in flight, 0 if none
	end  context.CancelFunc // ends the wait for id (the server cancelled it)
}

// subscribe keeps a 2026-07-28 subscriptions/listen request open for tool
// list changes, on a goroutine that close stops. Its notifications arrive
// on stdout with the others. Stdio has no stream to close: close cancels
// the request with notifications/cancelled. After a restart, the new
// process is subscribed again and the host told to re-fetch, since
// nothing is replayed; the same happens, after listenRetry, when the
// server ends the subscription (its result, or notifications/cancelled
// naming it). A server that refuses it is left alone.
//
// subscribe returns once the first request is written (or after
// listenSendWait), so that the server has it before the calls that follow
// Connect.
func (s *stdioConn) subscribe(meta json.RawMessage) {
	s.mu.Lock()
	if s.closed || s.listen.stop != nil {
		s.mu.Unlock()
		return
	}
	ctx, stop := context.WithCancel(context.Background())
	done, sent := make(chan struct{}), make(chan struct{})
	s.listen.stop, s.listen.done = stop, done
	s.mu.Unlock()
	go func() {
		defer close(done)
		s.listenLoop(ctx, meta, sync.OnceFunc(func() { close(sent) }))
	}()
	t := time.NewTimer(listenSendWait)
	defer t.Stop()
	select {
	case <-sent:
	case <-t.C:
	}
}

// unsubscribe stops the subscription loop, which cancels its request on
// the way out, and waits for it until ctx is done.
func (s *stdioConn) unsubscribe(ctx context.Context) {
	s.mu.Lock()
	stop, done := s.listen.stop, s.listen.done
	s.mu.Unlock()
	if stop == nil {
		return
	}
	stop()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// listenLoop keeps the subscription; sent is called once the first
// request is written, or will not be.
func (s *stdioConn) listenLoop(ctx context.Context, meta json.RawMessage, sent func()) {
	defer sent()
	params := s.c.listenFilter(meta)
	var last *proc
	wait := listenRetry
	for again := false; ; again = true {
		p := s.listenProc(ctx)
		if p == nil {
			return
		}
		if p != last {
			wait = listenRetry
		} else { // the server ended the subscription: not at once
			if s.sleep(ctx, wait) != nil {
				return
			}
			wait = min(2*wait, maxRestartBackoff)
		}
		last = p
		began := time.Now()
		err := s.listenOn(ctx, p, &params, again, sent)
		if time.Since(began) >= maxRestartBackoff {
			wait = listenRetry
		}
		var rpc *RPCError
		switch {
		case ctx.Err() != nil:
			return
		case errors.As(err, &rpc):
			s.log.Debug("mcp: subscriptions/listen refused", "error", err)
			return
		case err != nil && !errors.Is(err, context.Canceled):
			s.log.Debug("mcp: subscription lost", "error", err)
		}
	}
}

// listenProc returns the current process once it is usable; a dead one is
// waited out until a restart replaces it. nil means ctx is done.
func (s *stdioConn) listenProc(ctx context.Context) *proc {
	for {
		s.mu.Lock()
		p, swapped := s.cur, s.swapped
		s.mu.Unlock()
		select {
		case <-p.ready:
		case <-ctx.Done():
			return nil
		}
		if p.alive() {
			return p
		}
		select {
		case <-swapped:
		case <-ctx.Done():
			return nil
		}
	}
}

// listenOn subscribes on p, calls sent, and waits until the subscription
// ends. again says it replaces one: the host is told to re-fetch once it
// is sent. A wait that the server cancelled ends with context.Canceled.
func (s *stdioConn) listenOn(ctx context.Context, p *proc, params *listenParams, again bool, sent func()) error {
	lctx, end := context.WithCancel(ctx)
	defer end()
	r := &outgoing{id: s.c.nextID.Add(1), method: "subscriptions/listen", params: params}
	ch, err := p.send(lctx, r)
	sent()
	if err != nil {
		return err
	}
	s.c.inForce()
	s.mu.Lock()
	s.listen.id, s.listen.end = r.id, end
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.listen.id, s.listen.end = 0, nil
		s.mu.Unlock()
	}()
	if again {
		s.notes.push("notifications/tools/list_changed", nil)
	}
	var res json.RawMessage
	err = p.mux.await(lctx, r, ch, &res)
	if ctx.Err() != nil {
		p.cancelRequest(r.id)
	}
	return err
}

// listenRequest sends r, a resource subscription's listen request, to the
// current process and waits until the subscription ends: its result, the
// process's end (a restart gets a new request), or ctx's, which the
// server is told of (notifications/cancelled).
func (s *stdioConn) listenRequest(ctx context.Context, r *outgoing, result any) error {
	p := s.listenProc(ctx)
	if p == nil {
		return ctx.Err()
	}
	ch, err := p.send(ctx, r)
	if err != nil {
		return err
	}
	err = p.mux.await(ctx, r, ch, result)
	if ctx.Err() != nil {
		p.cancelRequest(r.id)
	}
	return err
}

// notice takes a notification from a reader, without blocking: the
// server's end of the subscription ends its wait, the acknowledgement is
// only checked, and the rest go to the host through the queue.
func (s *stdioConn) notice(method string, params json.RawMessage) {
	switch method {
	case "notifications/subscriptions/acknowledged":
		if s.c.resourceSubs.owns(params) {
			return // a resource subscription, now in force
		}
		var ack struct {
			Notifications struct {
				ToolsListChanged bool `json:"toolsListChanged"`
			} `json:"notifications"`
		}
		if json.Unmarshal(params, &ack) != nil || !ack.Notifications.ToolsListChanged {
			s.log.Info("mcp: the server does not agree to send tool list changes")
		}
		return
	case "notifications/cancelled":
		var c struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		_ = json.Unmarshal(params, &c)
		id, err := strconv.ParseInt(string(c.RequestID), 10, 64)
		s.mu.Lock()
		ours := err == nil && id != 0 && id == s.listen.id
		if ours {
			s.listen.end()
		}
		s.mu.Unlock()
		if ours || err == nil && s.c.resourceSubs.cancelled(id) {
			return
		}
	}
	s.notes.push(method, params)
}

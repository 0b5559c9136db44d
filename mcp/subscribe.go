package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// ErrSubscriptionsUnsupported is returned by SubscribeResource when the
// server does not offer resource subscriptions.
var ErrSubscriptionsUnsupported = errors.New("mcp: resource subscriptions are not available")

// SubscribeResource asks the server to tell the client when the resource
// uri changes: each change calls Options.OnResourceUpdated. It needs a
// server that declares resources.subscribe. A legacy server is sent
// resources/subscribe, and the subscription lasts as long as the session:
// a lost legacy session, a restarted stdio server and Close all end it. A
// 2026-07-28 server gets a subscriptions/listen request of its own for uri
// (resourceSubscriptions: a stream over HTTP, a request left open over
// stdio, cancelled with notifications/cancelled), reopened when it drops
// or the server ends it, and on a restarted stdio server, until
// UnsubscribeResource or Close. SubscribeResource returns once the
// subscription is in force (the legacy server answered, or the 2026-07-28
// server acknowledged the stream), so a change made after it returns is
// told; if the server refuses the stream first, its error; if ctx ends
// first, ctx's error, the stream going on.
func (c *Client) SubscribeResource(ctx context.Context, uri string) error {
	if err := c.canSubscribe(); err != nil {
		return err
	}
	if c.era() == EraModern {
		return c.resourceSubs.start(c, uri).wait(ctx)
	}
	return c.subscription(ctx, "resources/subscribe", uri)
}

// UnsubscribeResource ends a subscription made by SubscribeResource.
func (c *Client) UnsubscribeResource(ctx context.Context, uri string) error {
	if err := c.canSubscribe(); err != nil {
		return err
	}
	if c.era() == EraModern {
		c.resourceSubs.end(uri)
		return nil
	}
	return c.subscription(ctx, "resources/unsubscribe", uri)
}

// canSubscribe says why resource subscriptions cannot be used, if they
// cannot.
func (c *Client) canSubscribe() error {
	caps := c.Capabilities()
	_, listens := c.conn.(listener)
	if caps.Resources == nil || !caps.Resources.Subscribe || c.era() == EraModern && !listens {
		return fmt.Errorf("%w (server %q, %s)", ErrSubscriptionsUnsupported, c.ServerInfo().Name, c.ProtocolVersion())
	}
	return nil
}

func (c *Client) subscription(ctx context.Context, method, uri string) error {
	r := c.request(method, uri, &readResourceParams{URI: uri})
	r.replay = true // asking twice is asking once
	var res json.RawMessage
	return c.call(ctx, r, &res)
}

// resourceStreams are a client's 2026-07-28 resource subscriptions: one
// listen stream per URI, each on a goroutine that Unsubscribe or Close
// stops. The zero value is ready to use.
type resourceStreams struct {
	mu   sync.Mutex
	subs map[string]*resourceSub // by URI
	ids  map[int64]listenTry     // by the listen request of its stream
	done bool                    // wait was called: no more streams
	wg   sync.WaitGroup
}

// listenTry is one listen request of a subscription; end ends the wait
// for it (the server cancelled it).
type listenTry struct {
	sub *resourceSub
	end context.CancelFunc
}

// listener is a connection that carries 2026-07-28 listen requests.
type listener interface {
	// listenRequest sends r and waits until the subscription ends: its
	// result, the connection's end or ctx's (the server is then told).
	listenRequest(ctx context.Context, r *outgoing, result any) error
}

func (h *httpConn) listenRequest(ctx context.Context, r *outgoing, result any) error {
	return h.post(ctx, r, result)
}

// resourceSub is one URI's stream.
type resourceSub struct {
	stop  context.CancelFunc
	acked chan struct{} // closed at the first acknowledgement
	gone  chan struct{} // closed when the loop ends; err says why
	err   error
	once  sync.Once
}

// wait waits until the subscription is acknowledged, refused, or ctx ends.
func (s *resourceSub) wait(ctx context.Context) error {
	select {
	case <-s.acked:
		return nil
	case <-s.gone:
		select {
		case <-s.acked:
			return nil
		default:
		}
		return s.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// start opens the stream for uri, unless it is open, and returns it.
func (r *resourceStreams) start(c *Client, uri string) *resourceSub {
	r.mu.Lock()
	defer r.mu.Unlock()
	if sub, ok := r.subs[uri]; ok {
		return sub
	}
	sub := &resourceSub{acked: make(chan struct{}), gone: make(chan struct{})}
	if r.done || c.life.Err() != nil {
		sub.err = ErrClosed
		close(sub.gone)
		return sub
	}
	if r.subs == nil {
		r.subs, r.ids = map[string]*resourceSub{}, map[int64]listenTry{}
	}
	ctx, stop := context.WithCancel(c.life)
	sub.stop = stop
	r.subs[uri] = sub
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer close(sub.gone)
		sub.err = r.listen(ctx, c, uri, sub)
		r.mu.Lock()
		if r.subs[uri] == sub { // a later SubscribeResource tries again
			delete(r.subs, uri)
		}
		r.mu.Unlock()
	}()
	return sub
}

// end closes the stream for uri.
func (r *resourceStreams) end(uri string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if sub, ok := r.subs[uri]; ok {
		sub.stop()
		delete(r.subs, uri)
	}
}

// listen keeps a stream for uri open until ctx ends or the server refuses
// it, reopening it with backoff when it drops; it returns why it ended.
func (r *resourceStreams) listen(ctx context.Context, c *Client, uri string, sub *resourceSub) error {
	conn := c.conn.(listener)
	p := listenParams{Meta: c.meta}
	p.Notifications.ResourceSubscriptions = []string{uri}
	var b backoff
	for {
		if err := sleep(ctx, b.wait); err != nil {
			return err
		}
		id := c.nextID.Add(1)
		lctx, end := context.WithCancel(ctx)
		r.mu.Lock()
		r.ids[id] = listenTry{sub, end}
		r.mu.Unlock()
		opened := time.Now()
		var res json.RawMessage
		err := conn.listenRequest(lctx, &outgoing{id: id, method: "subscriptions/listen", params: &p}, &res)
		end()
		r.mu.Lock()
		delete(r.ids, id)
		r.mu.Unlock()
		var rpc *RPCError
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.As(err, &rpc):
			c.log.Warn("mcp: resource subscription refused", "uri", clip(uri, 200), "error", err)
			return fmt.Errorf("mcp: subscribing to %s: %w", clip(uri, 200), err)
		}
		b.next(opened)
		c.log.Debug("mcp: resource subscription stream ended", "uri", clip(uri, 200), "error", err, "retry in", b.wait)
	}
}

// owns reports an acknowledgement of one of the streams, and marks that
// stream's subscription in force.
func (r *resourceStreams) owns(params json.RawMessage) bool {
	var p struct {
		Meta struct {
			ID json.RawMessage `json:"io.modelcontextprotocol/subscriptionId"`
		} `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	id, err := strconv.ParseInt(string(p.Meta.ID), 10, 64)
	if err != nil {
		return false
	}
	r.mu.Lock()
	try, ok := r.ids[id]
	r.mu.Unlock()
	if ok {
		try.sub.once.Do(func() { close(try.sub.acked) })
	}
	return ok
}

// cancelled ends the wait for the listen request id, if it is one of the
// streams' (the server cancelled it), and reports whether it was; the
// stream is then opened again.
func (r *resourceStreams) cancelled(id int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	try, ok := r.ids[id]
	if ok {
		try.end()
	}
	return ok
}

// wait waits for the streams' goroutines, which the client's end stops;
// no stream starts after it.
func (r *resourceStreams) wait() {
	r.mu.Lock()
	r.done = true
	r.mu.Unlock()
	r.wg.Wait()
}

// resourceUpdated hands a notifications/resources/updated to the host.
func (c *Client) resourceUpdated(params json.RawMessage) {
	if c.opts.OnResourceUpdated == nil {
		return
	}
	var p struct {
		URI string `json:"uri"`
	}
	if json.Unmarshal(params, &p) != nil || p.URI == "" {
		c.log.Warn("mcp: malformed resource update notification")
		return
	}
	c.opts.OnResourceUpdated(ResourceUpdate{Server: c.opts.ServerName, URI: p.URI})
}

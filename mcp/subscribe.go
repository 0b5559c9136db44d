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
// server does not offer resource subscriptions, or is a 2026-07-28 server
// over stdio, where this client does not implement them yet.
var ErrSubscriptionsUnsupported = errors.New("mcp: resource subscriptions are not available")

// SubscribeResource asks the server to tell the client when the resource
// uri changes: each change calls Options.OnResourceUpdated. It needs a
// server that declares resources.subscribe. A legacy server is sent
// resources/subscribe, and the subscription lasts as long as the session:
// a lost legacy session, a restarted stdio server and Close all end it. A
// 2026-07-28 server over HTTP gets a subscriptions/listen stream of its own
// for uri (resourceSubscriptions), reopened when it drops, until
// UnsubscribeResource or Close; the subscription is in force once the
// server acknowledges it, which SubscribeResource does not wait for.
func (c *Client) SubscribeResource(ctx context.Context, uri string) error {
	if err := c.canSubscribe(); err != nil {
		return err
	}
	if c.era() == EraModern {
		c.resourceSubs.start(c, uri)
		return nil
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
	_, overHTTP := c.conn.(*httpConn)
	if caps.Resources == nil || !caps.Resources.Subscribe || c.era() == EraModern && !overHTTP {
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
	stop map[string]context.CancelFunc // by URI
	ids  map[int64]bool                // the listen requests of the streams
	done bool                          // wait was called: no more streams
	wg   sync.WaitGroup
}

// start opens the stream for uri, unless it is open.
func (r *resourceStreams) start(c *Client, uri string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.stop[uri]; ok || r.done || c.life.Err() != nil {
		return
	}
	if r.stop == nil {
		r.stop, r.ids = map[string]context.CancelFunc{}, map[int64]bool{}
	}
	ctx, stop := context.WithCancel(c.life)
	r.stop[uri] = stop
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.listen(ctx, c, uri)
	}()
}

// end closes the stream for uri.
func (r *resourceStreams) end(uri string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if stop, ok := r.stop[uri]; ok {
		stop()
		delete(r.stop, uri)
	}
}

// listen keeps a stream for uri open until ctx ends or the server refuses
// it, reopening it with backoff when it drops.
func (r *resourceStreams) listen(ctx context.Context, c *Client, uri string) {
	h := c.conn.(*httpConn)
	p := listenParams{Meta: c.meta}
	p.Notifications.ResourceSubscriptions = []string{uri}
	var b backoff
	for {
		if sleep(ctx, b.wait) != nil {
			return
		}
		id := c.nextID.Add(1)
		r.mu.Lock()
		r.ids[id] = true
		r.mu.Unlock()
		opened := time.Now()
		var res json.RawMessage
		err := h.post(ctx, &outgoing{id: id, method: "subscriptions/listen", params: &p}, &res)
		r.mu.Lock()
		delete(r.ids, id)
		r.mu.Unlock()
		var rpc *RPCError
		switch {
		case ctx.Err() != nil:
			return
		case errors.As(err, &rpc):
			c.log.Warn("mcp: resource subscription refused", "uri", clip(uri, 200), "error", err)
			return
		}
		b.next(opened)
		c.log.Debug("mcp: resource subscription stream ended", "uri", clip(uri, 200), "error", err, "retry in", b.wait)
	}
}

// owns reports an acknowledgement of one of the streams.
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
	defer r.mu.Unlock()
	return r.ids[id]
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
	c.opts.OnResourceUpdated(p.URI)
}

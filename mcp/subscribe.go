package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// ErrSubscriptionsUnsupported is returned by SubscribeResource when the
// server does not offer resource subscriptions, or speaks the 2026-07-28
// revision, whose subscriptions (the resourceSubscriptions of
// subscriptions/listen) this client does not implement yet.
var ErrSubscriptionsUnsupported = errors.New("mcp: resource subscriptions are not available")

// SubscribeResource asks the server to tell the client when the resource
// uri changes: each change calls Options.OnResourceUpdated. It needs a
// legacy server that declares resources.subscribe. A subscription lasts
// as long as the session: a lost legacy session, a restarted stdio
// server and Close all end it.
func (c *Client) SubscribeResource(ctx context.Context, uri string) error {
	return c.subscription(ctx, "resources/subscribe", uri)
}

// UnsubscribeResource ends a subscription made by SubscribeResource.
func (c *Client) UnsubscribeResource(ctx context.Context, uri string) error {
	return c.subscription(ctx, "resources/unsubscribe", uri)
}

func (c *Client) subscription(ctx context.Context, method, uri string) error {
	caps := c.Capabilities()
	if c.era() == EraModern || caps.Resources == nil || !caps.Resources.Subscribe {
		return fmt.Errorf("%w (server %q, %s)", ErrSubscriptionsUnsupported, c.ServerInfo().Name, c.ProtocolVersion())
	}
	r := c.request(method, uri, &readResourceParams{URI: uri})
	r.replay = true // asking twice is asking once
	var res json.RawMessage
	return c.call(ctx, r, &res)
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

// SubscribeResource subscribes to the resource uri on the server that
// ReadResource would read it from (see Client.SubscribeResource); a URI no
// server listed or matches gives ErrUnknownResource and is sent nowhere.
// Changes reach ToolsetOptions.OnResourceUpdated. Close ends every
// subscription with its server's session.
func (t *Toolset) SubscribeResource(ctx context.Context, uri string) error {
	return t.subscription(ctx, uri, (*Client).SubscribeResource)
}

// UnsubscribeResource ends a subscription made by SubscribeResource.
func (t *Toolset) UnsubscribeResource(ctx context.Context, uri string) error {
	return t.subscription(ctx, uri, (*Client).UnsubscribeResource)
}

func (t *Toolset) subscription(ctx context.Context, uri string, do func(*Client, context.Context, string) error) error {
	srv, err := t.resourceServer(uri)
	if err != nil {
		return err
	}
	if err := do(srv.client, ctx, uri); err != nil {
		return fmt.Errorf("mcp: resource %s (server %q): %w", clip(uri, 200), srv.cfg.Name, err)
	}
	return nil
}

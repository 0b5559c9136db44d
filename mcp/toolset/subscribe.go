package toolset

import (
	"context"
	"fmt"

	"git.rickub.com/bots-garden/mini-me/internal/textclip"
	"git.rickub.com/bots-garden/mini-me/mcp"
)

// SubscribeResource subscribes to the resource uri on the server that
// ReadResource would read it from (see Client.SubscribeResource); a URI no
// server listed or matches gives ErrUnknownResource and is sent nowhere.
// Changes reach Options.OnResourceUpdated. Close ends every
// subscription with its server's session.
func (t *Toolset) SubscribeResource(ctx context.Context, uri string) error {
	return t.subscription(ctx, "", uri, (*mcp.Client).SubscribeResource)
}

// SubscribeResourceOn subscribes to uri on server, chosen as
// ReadResourceFrom chooses it, when several serve the URI.
func (t *Toolset) SubscribeResourceOn(ctx context.Context, server, uri string) error {
	return t.subscription(ctx, server, uri, (*mcp.Client).SubscribeResource)
}

// UnsubscribeResource ends a subscription made by SubscribeResource.
func (t *Toolset) UnsubscribeResource(ctx context.Context, uri string) error {
	return t.subscription(ctx, "", uri, (*mcp.Client).UnsubscribeResource)
}

// UnsubscribeResourceOn ends a subscription made by SubscribeResourceOn.
func (t *Toolset) UnsubscribeResourceOn(ctx context.Context, server, uri string) error {
	return t.subscription(ctx, server, uri, (*mcp.Client).UnsubscribeResource)
}

func (t *Toolset) subscription(ctx context.Context, server, uri string, do func(*mcp.Client, context.Context, string) error) error {
	srv, err := t.resourceServer(server, uri)
	if err != nil {
		return err
	}
	if err := do(srv.client, ctx, uri); err != nil {
		return fmt.Errorf("toolset: resource %s (server %q): %w", textclip.Clip(uri, 200), srv.cfg.Name, err)
	}
	return nil
}

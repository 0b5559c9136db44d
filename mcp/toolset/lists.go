package toolset

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"git.rickub.com/bots-garden/mini-me/internal/textclip"
	"git.rickub.com/bots-garden/mini-me/mcp"
)

// capList is what a Toolset keeps of one capability (prompts; resources
// with their templates) on one server: T is one listing.
type capList[T any] struct {
	kick  chan struct{} // a refresh is due; capacity 1 coalesces bursts
	first capListing[T] // the listing made on connect

	// Guarded by Toolset.mu.
	items    T
	warnings []Warning
	fresh    time.Time // when items expire (2026-07-28 ttlMs); zero: never
}

// capListing is one listing of a capability, after its allowlist, or why
// it failed.
type capListing[T any] struct {
	items    T
	warnings []Warning
	fresh    time.Time
	err      error
}

func newCapList[T any]() capList[T] { return capList[T]{kick: make(chan struct{}, 1)} }

// due asks the capability's refresh loop to list again.
func (l *capList[T]) due() {
	select {
	case l.kick <- struct{}{}:
	default: // a refresh is already due
	}
}

// capability describes one catalogue view beside the tools: how to list
// it on a server and how to rebuild the Toolset's view from the servers'
// listings.
type capability[T any] struct {
	what   string      // "prompts", for messages
	failed WarningKind // the kind of a failed listing
	of     func(*tsServer) *capList[T]
	// offered reports a server that declares the capability.
	offered func(mcp.ServerCapabilities) bool
	list    func(ctx context.Context, s *tsServer) capListing[T]
	// applied records a server's new listing in its status. t.mu is held.
	applied func(s *tsServer, items T)
	// rebuild recomputes the Toolset's view. t.mu is held.
	rebuild func(t *Toolset)
}

// connect makes the first listing of a server that offers the capability.
func (c *capability[T]) connect(ctx context.Context, s *tsServer) {
	if c.offered(s.client.Capabilities()) {
		c.of(s).first = c.list(ctx, s)
	}
}

// start applies the listings made on connect, builds the view and starts
// a refresh loop for each server that offers the capability.
func (c *capability[T]) start(t *Toolset) {
	t.mu.Lock()
	for _, s := range t.servers {
		if s.client != nil {
			c.apply(t, s, c.of(s).first)
		}
	}
	c.rebuild(t)
	t.mu.Unlock()
	for _, s := range t.servers {
		c.watchServer(t, s)
	}
}

// added applies the first listing of a server added by Toolset.Add and
// rebuilds the view. t.mu is held; watchServer follows.
func (c *capability[T]) added(t *Toolset, s *tsServer) {
	c.apply(t, s, c.of(s).first)
	c.rebuild(t)
}

// watchServer starts the refresh loop of a server that offers the
// capability.
func (c *capability[T]) watchServer(t *Toolset, s *tsServer) {
	if s.client != nil && c.offered(s.client.Capabilities()) {
		t.loops.Add(1)
		go c.watch(t, s)
	}
}

// apply makes a listing the server's, or records why it failed, keeping
// the previous listing. t.mu is held.
func (c *capability[T]) apply(t *Toolset, s *tsServer, l capListing[T]) {
	cl := c.of(s)
	if l.err != nil {
		w := Warning{Server: s.cfg.Name, Kind: c.failed, Message: fmt.Sprintf("listing %s failed: %v", c.what, l.err)}
		t.logNew(cl.warnings, []Warning{w})
		cl.warnings = []Warning{w}
		return
	}
	t.logNew(cl.warnings, l.warnings)
	cl.items, cl.warnings, cl.fresh = l.items, l.warnings, l.fresh
	c.applied(s, l.items)
}

// expired asks for a listing again of each server whose listing has
// outlived its ttlMs: the fresh one shows in a later call. As for Tools,
// the lifetime is looked at only when the view is used. t.mu is held.
func (c *capability[T]) expired(t *Toolset) {
	now := time.Now()
	for _, s := range t.servers {
		if cl := c.of(s); !cl.fresh.IsZero() && now.After(cl.fresh) {
			cl.due()
		}
	}
}

// watch lists the capability again each time the server says it changed,
// until Close.
func (c *capability[T]) watch(t *Toolset, s *tsServer) {
	t.follow(s, c.of(s).kick, func() {
		ctx, cancel := context.WithTimeout(t.life, s.connectTimeout)
		l := c.list(ctx, s)
		cancel()
		t.mu.Lock()
		if !t.closed && !s.removed() {
			c.apply(t, s, l)
			c.rebuild(t)
		}
		t.mu.Unlock()
	})
}

// notOffered reports a server that does not know a listing method though
// it declares the capability (a skills server serves resources/read
// only): it lists nothing, which is not a failure.
func notOffered(err error) bool {
	var rpc *mcp.RPCError
	return errors.As(err, &rpc) && rpc.Code == mcp.CodeMethodNotFound
}

// allowed keeps the items an allowlist names (all when allow is nil) and
// warns, with kind missing, of each name it lists that no item has.
func allowed[T any](server string, allow []string, items []T, key func(*T) string, missing WarningKind, what string) ([]T, []Warning) {
	if allow == nil {
		return items, nil
	}
	var kept []T
	found := make(map[string]bool, len(allow))
	for i := range items {
		if k := key(&items[i]); slices.Contains(allow, k) {
			kept = append(kept, items[i])
			found[k] = true
		}
	}
	var warns []Warning
	for _, name := range allow {
		if !found[name] {
			warns = append(warns, Warning{Server: server, Kind: missing,
				Message: fmt.Sprintf("allowlisted %s %q is not offered by the server", what, name)})
		}
	}
	return kept, warns
}

// distinct drops the items with no key or a key seen before, warning of
// each with kind invalid.
func distinct[T any](server string, items []T, key func(*T) string, invalid WarningKind, what string) ([]T, []Warning) {
	var warns []Warning
	seen := make(map[string]bool, len(items))
	kept := items[:0:0]
	for i := range items {
		k := key(&items[i])
		switch {
		case k == "":
			warns = append(warns, Warning{Server: server, Kind: invalid, Message: what + " without a name left out"})
		case seen[k]:
			warns = append(warns, Warning{Server: server, Kind: invalid, Message: fmt.Sprintf("%s %q listed twice; the first is kept", what, textclip.Clip(k, 120))})
		default:
			seen[k] = true
			kept = append(kept, items[i])
		}
	}
	return kept, warns
}

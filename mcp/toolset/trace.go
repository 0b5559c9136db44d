package toolset

import "context"

// Trace is a set of hooks that watch a Toolset's discovery of its servers,
// as mcp.ClientTrace watches a client's requests. Attach it to the context
// given to Discover or Add with WithTrace; the requests of a server's
// discovery run with the context DiscoverStart returned, so a span started
// there is the parent of the client's request spans.
//
// Every field may be nil. Hooks run synchronously on the goroutine that
// connects the server; they must be fast and must not block. They may run
// at the same time for different servers.
type Trace struct {
	// DiscoverStart is called when the Toolset begins to connect to a
	// server; the context it returns (nil: unchanged) is the one the
	// server's discovery goes on with and the one DiscoverDone gets.
	DiscoverStart func(ctx context.Context, server string) context.Context
	// DiscoverDone is called once for every DiscoverStart, when the server
	// is ready or skipped (res.Stage says which).
	DiscoverDone func(ctx context.Context, server string, res *DiscoverProgress)
}

type traceKey struct{}

// WithTrace returns a copy of ctx whose discoveries report to t. A Trace
// already in ctx is called too: its hooks first.
func WithTrace(ctx context.Context, t *Trace) context.Context {
	if outer := ContextTrace(ctx); outer != nil {
		t = &Trace{
			DiscoverStart: func(ctx context.Context, server string) context.Context {
				if outer.DiscoverStart != nil {
					ctx = keep(ctx, outer.DiscoverStart(ctx, server))
				}
				if t.DiscoverStart != nil {
					ctx = keep(ctx, t.DiscoverStart(ctx, server))
				}
				return ctx
			},
			DiscoverDone: func(ctx context.Context, server string, res *DiscoverProgress) {
				if outer.DiscoverDone != nil {
					outer.DiscoverDone(ctx, server, res)
				}
				if t.DiscoverDone != nil {
					t.DiscoverDone(ctx, server, res)
				}
			},
		}
	}
	return context.WithValue(ctx, traceKey{}, t)
}

// ContextTrace returns the Trace of ctx, or nil.
func ContextTrace(ctx context.Context) *Trace {
	t, _ := ctx.Value(traceKey{}).(*Trace)
	return t
}

func keep(ctx, next context.Context) context.Context {
	if next == nil {
		return ctx
	}
	return next
}

// traceDiscover reports the start of one server's discovery to the trace
// of ctx, if any, and returns the context discovery goes on with and the
// func that reports its end.
func traceDiscover(ctx context.Context, server string) (context.Context, func(*DiscoverProgress)) {
	t := ContextTrace(ctx)
	if t == nil {
		return ctx, nil
	}
	if t.DiscoverStart != nil {
		ctx = keep(ctx, t.DiscoverStart(ctx, server))
	}
	return ctx, func(p *DiscoverProgress) {
		if t.DiscoverDone != nil {
			t.DiscoverDone(ctx, server, p)
		}
	}
}

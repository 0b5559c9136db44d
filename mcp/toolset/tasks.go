package toolset

import (
	"context"
	"fmt"

	"git.rickub.com/bots-garden/mini-me/mcp"
)

// AwaitTask follows a task of the named server, such as one a TaskStatus
// named before the host restarted, until it ends (see mcp.Client.AwaitTask).
// A server the Toolset does not use gives ErrUnknownServer. The result's
// Name is empty: a task's id does not say which tool created it (a host
// that needs it keeps it beside the id). Errors never quote the id, which
// may act as a bearer token.
func (t *Toolset) AwaitTask(ctx context.Context, server, taskID string) (*ToolResult, error) {
	t.mu.RLock()
	closed := t.closed
	var s *tsServer
	for _, cand := range t.servers {
		if cand.cfg.Name == server && cand.client != nil {
			s = cand
			break
		}
	}
	if s != nil && !closed {
		s.calls.Add(1) // as Call does, before Remove can wait
		defer s.calls.Done()
	}
	t.mu.RUnlock()
	switch {
	case closed:
		return nil, fmt.Errorf("toolset: await task (server %q): %w", server, mcp.ErrClosed)
	case s == nil:
		return nil, fmt.Errorf("%w: %q", ErrUnknownServer, server)
	}
	res, err := s.client.AwaitTask(namedObserver(ctx, server), taskID)
	if err != nil {
		return nil, fmt.Errorf("toolset: await task (server %q): %w", server, err)
	}
	return &ToolResult{Server: server, Result: res}, nil
}

// namedObserver makes the task observer of ctx, if any, see the server's
// name in each TaskStatus.
func namedObserver(ctx context.Context, server string) context.Context {
	fn := mcp.ContextTaskObserver(ctx)
	if fn == nil {
		return ctx
	}
	return mcp.WithTaskObserver(ctx, func(s mcp.TaskStatus) {
		s.Server = server
		fn(s)
	})
}

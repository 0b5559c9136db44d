package toolset

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/apps"
)

// AppServer is one server of a Toolset as an MCP App's views reach it
// (package mcp/apps, whose Server interface it implements): the same
// connection the model's calls use, with every tool the server listed,
// those whose visibility keeps them from the model included. A view must
// reach no other server, so an AppServer never routes to one.
//
// The Toolset's own views of the tools (Tools, Tool, Call) are the
// model's: they leave out every tool whose visibility lacks "model"
// (apps.ForModel), which only its server's views may call, through here.
type AppServer struct {
	t *Toolset
	s *tsServer
}

// AppServer returns the server named name (ignoring case), or false when
// the Toolset has no such server or it was skipped.
func (t *Toolset) AppServer(name string) (*AppServer, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	i := slices.IndexFunc(t.servers, func(s *tsServer) bool { return strings.EqualFold(s.cfg.Name, name) })
	if i < 0 || t.servers[i].client == nil {
		return nil, false
	}
	return &AppServer{t, t.servers[i]}, true
}

// ListTools returns the server's tools as it last listed them (no request
// is sent), under their names on the server.
func (a *AppServer) ListTools(context.Context) ([]mcp.Tool, error) {
	a.t.mu.RLock()
	defer a.t.mu.RUnlock()
	out := make([]mcp.Tool, len(a.s.tools))
	for i, st := range a.s.tools {
		out[i] = st.Tool
	}
	return out, nil
}

// CallTool calls the tool the server lists as name (its own name, not the
// Toolset's); a name it does not list gives ErrUnknownTool.
func (a *AppServer) CallTool(ctx context.Context, name string, args any) (*mcp.CallToolResult, error) {
	if err := a.enter(); err != nil {
		return nil, fmt.Errorf("toolset: app call %s (server %q): %w", name, a.s.cfg.Name, err)
	}
	defer a.s.calls.Done()
	a.t.mu.RLock()
	listed := slices.ContainsFunc(a.s.tools, func(st Tool) bool { return st.Tool.Name == name })
	a.t.mu.RUnlock()
	if !listed {
		return nil, fmt.Errorf("%w: %q on server %q", ErrUnknownTool, name, a.s.cfg.Name)
	}
	return a.s.client.CallTool(namedObserver(ctx, a.s.cfg.Name), name, args)
}

// ListResources lists the server's resources.
func (a *AppServer) ListResources(ctx context.Context) ([]mcp.Resource, error) {
	if err := a.enter(); err != nil {
		return nil, err
	}
	defer a.s.calls.Done()
	return a.s.client.ListResources(ctx)
}

// ReadResource reads a resource of the server.
func (a *AppServer) ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	if err := a.enter(); err != nil {
		return nil, err
	}
	defer a.s.calls.Done()
	return a.s.client.ReadResource(ctx, uri)
}

// enter counts a call in flight, which Remove and Close wait for; it
// fails once the Toolset is closed or the server removed.
func (a *AppServer) enter() error {
	a.t.mu.RLock()
	defer a.t.mu.RUnlock()
	if a.t.closed {
		return mcp.ErrClosed
	}
	select {
	case <-a.s.gone:
		return fmt.Errorf("%w: %q (removed)", ErrUnknownServer, a.s.cfg.Name)
	default:
	}
	a.s.calls.Add(1)
	return nil
}

var _ apps.Server = (*AppServer)(nil)

// forModel reports whether a tool of a server belongs in the model's
// catalogue (see AppServer).
func forModel(st Tool) bool { return apps.ForModel(st.Tool) }

package toolset

import (
	"context"
	"fmt"

	"git.rickub.com/bots-garden/mini-me/internal/textclip"
	"git.rickub.com/bots-garden/mini-me/mcp"
)

// CompletePrompt suggests values for the argument arg of the prompt the
// Toolset names name (see mcp.Client.Complete). A server that does not
// declare completions is not asked: the completion is empty.
func (t *Toolset) CompletePrompt(ctx context.Context, name string, arg mcp.CompletionArgument) (*mcp.Completion, error) {
	t.mu.RLock()
	r, ok := t.prompts.index[name]
	var original string
	if ok {
		original = t.prompts.all[r.pos].Prompt.Name
	}
	t.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownPrompt, name)
	}
	return askCompletion(ctx, r.srv, mcp.CompletionRef{Type: "ref/prompt", Name: original}, arg)
}

// CompleteResource suggests values for the variable arg of the resource
// template uriTemplate of server, as ResourceTemplates lists it (see
// mcp.Client.Complete). A template the Toolset does not list gives
// ErrUnknownResource; a server that does not declare completions is not
// asked: the completion is empty.
func (t *Toolset) CompleteResource(ctx context.Context, server, uriTemplate string, arg mcp.CompletionArgument) (*mcp.Completion, error) {
	t.mu.RLock()
	var srv *tsServer
	for i, tm := range t.resources.templates {
		if tm.Server == server && tm.Template.URITemplate == uriTemplate {
			srv = t.resources.matchers[i].srv
			break
		}
	}
	t.mu.RUnlock()
	if srv == nil {
		return nil, fmt.Errorf("%w: template %q of server %q", ErrUnknownResource, textclip.Clip(uriTemplate, 200), server)
	}
	return askCompletion(ctx, srv, mcp.CompletionRef{Type: "ref/resource", URI: uriTemplate}, arg)
}

// askCompletion asks a server of the Toolset for a completion, if it offers
// them.
func askCompletion(ctx context.Context, s *tsServer, ref mcp.CompletionRef, arg mcp.CompletionArgument) (*mcp.Completion, error) {
	if s.client.Capabilities().Completions == nil {
		return &mcp.Completion{}, nil
	}
	c, err := s.client.Complete(ctx, ref, arg)
	if err != nil {
		return nil, fmt.Errorf("toolset: completing %s (server %q): %w", arg.Name, s.cfg.Name, err)
	}
	return c, nil
}

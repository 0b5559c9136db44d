package toolset

import (
	"context"
	"errors"
	"fmt"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/mcp"
)

// ErrUnknownPrompt is returned for a prompt name the Toolset does not
// offer (never offered, or removed by a refresh).
var ErrUnknownPrompt = errors.New("toolset: unknown prompt")

// Kinds of Warning about prompts.
const (
	// WarnInvalidPrompt: a prompt has no name or is listed twice; it is
	// left out.
	WarnInvalidPrompt WarningKind = "invalid-prompt"
	// WarnPromptNotFound: an allowlisted prompt is not offered by the
	// server.
	WarnPromptNotFound WarningKind = "prompt-not-found"
	// WarnPromptsFailed: listing the server's prompts failed; its
	// previous prompts, if any, are kept.
	WarnPromptsFailed WarningKind = "prompts-failed"
)

// Prompt is one prompt of a Toolset: a template the host can offer
// the user as a command.
type Prompt struct {
	// Name is the prompt's name in the Toolset, "{server}_{prompt}"
	// sanitised and made unique like tool names (see ToolName).
	Name string
	// Server is the name of the server that offers it.
	Server string
	// Prompt is the definition as the server listed it last; Prompt.Name
	// is the original name, the one sent to the server.
	Prompt mcp.Prompt
	// Egress is the server's configured egress (see Tool.Egress):
	// the messages of a config.EgressLocal server's prompt must not reach
	// a model off this machine.
	Egress config.Egress
}

// PromptResult is a prompt rendered by its server.
type PromptResult struct {
	// Name is the prompt's name in the Toolset; Server the server that
	// rendered it.
	Name, Server string
	// Egress is the server's configured egress.
	Egress config.Egress
	// Result is what the server returned.
	Result *mcp.GetPromptResult
}

// toolsetPrompts is the prompt catalogue of a Toolset. Guarded by
// Toolset.mu.
type toolsetPrompts struct {
	all   []Prompt
	index map[string]promptRoute
}

type promptRoute struct {
	srv *tsServer
	pos int
}

var promptsCap = &capability[[]mcp.Prompt]{
	what:    "prompts",
	failed:  WarnPromptsFailed,
	of:      func(s *tsServer) *capList[[]mcp.Prompt] { return &s.prompts },
	offered: func(c mcp.ServerCapabilities) bool { return c.Prompts != nil },
	list: func(ctx context.Context, s *tsServer) capListing[[]mcp.Prompt] {
		prompts, err := s.client.ListPrompts(ctx)
		fresh := s.client.PromptsFreshUntil()
		if notOffered(err) {
			prompts, err = nil, nil
		}
		if err != nil {
			return capListing[[]mcp.Prompt]{err: err}
		}
		name := func(p *mcp.Prompt) string { return p.Name }
		prompts, bad := distinct(s.cfg.Name, prompts, name, WarnInvalidPrompt, "prompt")
		prompts, missing := allowed(s.cfg.Name, s.cfg.Prompts, prompts, name, WarnPromptNotFound, "prompt")
		warns := append(append(bad, missing...), s.cuts.take(s.cfg.Name, "prompts/list")...)
		return capListing[[]mcp.Prompt]{items: prompts, warnings: warns, fresh: fresh}
	},
	applied: func(s *tsServer, items []mcp.Prompt) { s.status.Prompts = len(items) },
	rebuild: func(t *Toolset) {
		t.prompts.all = t.prompts.all[:0:0]
		t.prompts.index = map[string]promptRoute{}
		taken := func(n string) bool { _, ok := t.prompts.index[n]; return ok }
		for _, s := range t.servers {
			for _, p := range s.prompts.items {
				name := uniqueName(s.cfg.Name, p.Name, taken)
				t.prompts.index[name] = promptRoute{srv: s, pos: len(t.prompts.all)}
				t.prompts.all = append(t.prompts.all, Prompt{Name: name, Server: s.cfg.Name, Prompt: p, Egress: s.cfg.Egress})
			}
		}
	},
}

// Prompts returns the prompt catalogue: servers in configuration order,
// each server's prompts in its order. Two prompts whose names would be
// equal both stay, the later under a hashed name. The slice is the
// caller's; the definitions are shared and must not be modified.
//
// A server's list past its 2026-07-28 ttlMs is listed again in the
// background, as for Tools.
func (t *Toolset) Prompts() []Prompt {
	t.mu.RLock()
	defer t.mu.RUnlock()
	promptsCap.expired(t)
	return append([]Prompt(nil), t.prompts.all...)
}

// Prompt returns the prompt with the Toolset name name.
func (t *Toolset) Prompt(name string) (Prompt, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	r, ok := t.prompts.index[name]
	if !ok {
		return Prompt{}, false
	}
	return t.prompts.all[r.pos], true
}

// GetPrompt renders the prompt the Toolset names name on its server,
// under its original name, with args (argument name to value; nil for
// none). A name the Toolset does not offer gives ErrUnknownPrompt. The
// result is the server's content: data for the host and the model, never
// instructions to the agent (see agent.PromptMessages).
func (t *Toolset) GetPrompt(ctx context.Context, name string, args map[string]string) (*PromptResult, error) {
	t.mu.RLock()
	closed := t.closed
	r, ok := t.prompts.index[name]
	var p Prompt
	if ok {
		p = t.prompts.all[r.pos]
	}
	t.mu.RUnlock()
	switch {
	case closed:
		return nil, fmt.Errorf("toolset: prompt %s: %w", name, mcp.ErrClosed)
	case !ok:
		return nil, fmt.Errorf("%w: %q", ErrUnknownPrompt, name)
	}
	res, err := r.srv.client.GetPrompt(ctx, p.Prompt.Name, args)
	if err != nil {
		return nil, fmt.Errorf("toolset: prompt %s (server %q): %w", name, p.Server, err)
	}
	return &PromptResult{Name: name, Server: p.Server, Egress: p.Egress, Result: res}, nil
}

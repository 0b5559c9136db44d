package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/openai"
	"git.rickub.com/bots-garden/mini-me/agent/render"
	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// host answers what the servers ask of the chat: a completion by its model
// (sampling), after the same approvals as tool calls, with the answer shown
// before it goes back; a form or a URL (elicitation), on the terminal; and
// the folders /roots lists.
type host struct {
	sampler  atomic.Pointer[agent.Sampler] // nil until the model is known
	elicitor agent.Elicitor

	mu    sync.Mutex
	roots []mcp.Root            // what /roots shares, from mcp.roots at the start
	own   map[string][]mcp.Root // servers with roots of their own in the file
}

// newHost asks its questions on term, and starts from the roots of cfg:
// /roots edits the list of mcp.roots; a server with its own roots key
// keeps those.
func newHost(term *permission.Terminal, cfg *config.Config) *host {
	h := &host{elicitor: agent.Elicitor{Ask: term.Elicit}, roots: fileRoots(cfg.Roots), own: map[string][]mcp.Root{}}
	for _, s := range cfg.Servers {
		// Server.Roots is the server's own key, else mcp.roots, else nil.
		if s.Roots != nil && (cfg.Roots == nil || !slices.Equal(s.Roots, cfg.Roots)) {
			h.own[s.Name] = fileRoots(s.Roots)
		}
	}
	return h
}

// fileRoots are the roots of the file URIs of a configuration.
func fileRoots(uris []string) []mcp.Root {
	roots := make([]mcp.Root, len(uris))
	for i, u := range uris {
		roots[i] = mcp.Root{URI: u, Name: path.Base(u)}
	}
	return roots
}

// serverRoots answers a server's roots/list (toolset.Options.Roots): its
// own roots from the file, else the list /roots edits.
func (h *host) serverRoots(ctx context.Context, server string) ([]mcp.Root, error) {
	if own, ok := h.own[server]; ok {
		return slices.Clone(own), nil
	}
	return h.listRoots(ctx)
}

// options are the client options that route the servers' requests here.
func (h *host) options() mcp.Options {
	return mcp.Options{Sample: h.sample, SampleTools: true, Elicit: h.elicitor.Elicit, ElicitURL: true}
}

// answerWith makes the model answer the servers' sampling requests, asking
// policy first.
func (h *host) answerWith(model *openai.Model, policy *permission.Policy, servers []config.Server) {
	if model == nil { // without a model, sampling is refused
		h.sampler.Store(nil)
		return
	}
	h.sampler.Store(&agent.Sampler{Model: model, ModelName: model.Model, Policy: policy, Servers: servers})
}

func (h *host) sample(ctx context.Context, req *mcp.SampleRequest) (*mcp.SampleResult, error) {
	s := h.sampler.Load()
	if s == nil {
		return nil, fmt.Errorf("%w: the chat has no model yet", mcp.ErrRefused)
	}
	return s.Sample(ctx, req)
}

func (h *host) listRoots(context.Context) ([]mcp.Root, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]mcp.Root(nil), h.roots...), nil
}

// rootsCommand runs /roots, /roots add <folder> and /roots remove <N>, and
// tells the servers of a change.
func (c *chat) rootsCommand(args string) {
	verb, arg, _ := strings.Cut(strings.TrimSpace(args), " ")
	arg = strings.TrimSpace(arg)
	h := c.host
	h.mu.Lock()
	changed := false
	switch verb {
	case "":
	case "add":
		abs, err := filepath.Abs(arg)
		var info os.FileInfo
		if err == nil {
			info, err = os.Stat(abs)
		}
		switch {
		case arg == "":
			fmt.Fprintln(c.out, "usage: /roots add <folder>")
		case err != nil:
			fmt.Fprintf(c.out, "(not added: %s)\n", render.Clean(err.Error(), 200))
		case !info.IsDir():
			fmt.Fprintln(c.out, "(not added: not a folder)")
		default:
			h.roots = append(h.roots, mcp.Root{URI: (&url.URL{Scheme: "file", Path: abs}).String(), Name: filepath.Base(abs)})
			changed = true
		}
	case "remove":
		n, err := strconv.Atoi(arg)
		if err != nil || n < 1 || n > len(h.roots) {
			fmt.Fprintln(c.out, "usage: /roots remove <N>, N as /roots lists them")
			break
		}
		h.roots = append(h.roots[:n-1], h.roots[n:]...)
		changed = true
	default:
		fmt.Fprintln(c.out, "usage: /roots, /roots add <folder>, /roots remove <N>")
	}
	roots := append([]mcp.Root(nil), h.roots...)
	h.mu.Unlock()
	if len(roots) == 0 {
		fmt.Fprintln(c.out, "(no roots: servers see no folder of yours; /roots add <folder> shares one)")
	}
	for i, r := range roots {
		fmt.Fprintf(c.out, "%3d  %s\n", i+1, render.Clean(r.URI, 300))
	}
	for _, s := range c.cfg.Servers {
		if own, ok := h.own[s.Name]; ok {
			fmt.Fprintf(c.out, "(%s sees its own roots from the configuration instead: %d)\n", render.Clean(s.Name, 40), len(own))
		}
	}
	if changed {
		ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
		defer cancel()
		if err := c.tools.NotifyRootsChanged(ctx); err != nil {
			fmt.Fprintf(c.out, "(telling the servers failed: %s)\n", render.Clean(err.Error(), 300))
		}
	}
}

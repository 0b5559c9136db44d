package toolset

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/internal/textclip"
	"git.rickub.com/bots-garden/mini-me/mcp"
)

// ErrUnknownResource is returned by Toolset.ReadResource for a URI that
// no server listed and no server's template matches: it is sent nowhere.
var ErrUnknownResource = errors.New("toolset: unknown resource")

// Kinds of Warning about resources.
const (
	// WarnInvalidResource: a resource or template has no URI, is listed
	// twice, has a template that does not parse, or has a URI an earlier
	// server already lists; it is left out.
	WarnInvalidResource WarningKind = "invalid-resource"
	// WarnResourceNotFound: an allowlisted resource URI or URI template
	// is listed by the server neither as a resource nor as a template.
	WarnResourceNotFound WarningKind = "resource-not-found"
	// WarnResourcesFailed: listing the server's resources or templates
	// failed; its previous ones, if any, are kept.
	WarnResourcesFailed WarningKind = "resources-failed"
)

// Resource is one resource of a Toolset: context the user can
// attach to a message.
type Resource struct {
	// Name is the resource's name in the Toolset, "{server}_{name}"
	// sanitised and made unique like tool names: a short handle for a
	// host's menu. ReadResource takes the URI.
	Name string
	// Server is the name of the server that lists it.
	Server string
	// Resource is the entry as the server listed it last.
	Resource mcp.Resource
	// Egress is the server's configured egress (see Tool.Egress).
	Egress config.Egress
}

// ResourceTemplate is one resource template of a Toolset: a
// family of URIs its server reads.
type ResourceTemplate struct {
	// Server is the name of the server that lists it.
	Server string
	// Template is the entry as the server listed it last.
	Template mcp.ResourceTemplate
	// Variables are the template's variable names, in order.
	Variables []string
	// Egress is the server's configured egress.
	Egress config.Egress
}

// ResourceResult is a resource read by its server.
type ResourceResult struct {
	// URI is the URI read; Server the server that read it.
	URI, Server string
	// Egress is the server's configured egress.
	Egress config.Egress
	// Result is what the server returned.
	Result *mcp.ReadResourceResult
}

// resourceSet is one listing of a server's resources and templates.
type resourceSet struct {
	resources []mcp.Resource
	templates []listedTemplate
}

type listedTemplate struct {
	def mcp.ResourceTemplate
	re  *uriTemplate
}

// toolsetResources is the resource catalogue of a Toolset. Guarded by
// Toolset.mu.
type toolsetResources struct {
	all       []Resource
	templates []ResourceTemplate
	byURI     map[string]*tsServer
	matchers  []templateRoute // in the order of templates
	warnings  []Warning       // URIs left out for an earlier server's
}

type templateRoute struct {
	srv *tsServer
	re  *uriTemplate
}

var resourcesCap = &capability[resourceSet]{
	what:    "resources",
	failed:  WarnResourcesFailed,
	of:      func(s *tsServer) *capList[resourceSet] { return &s.resources },
	offered: func(c mcp.ServerCapabilities) bool { return c.Resources != nil },
	list:    listResources,
	applied: func(s *tsServer, set resourceSet) {
		s.status.Resources, s.status.ResourceTemplates = len(set.resources), len(set.templates)
	},
	rebuild: func(t *Toolset) {
		rs := &t.resources
		rs.all, rs.templates, rs.matchers, rs.warnings = nil, nil, nil, nil
		rs.byURI = map[string]*tsServer{}
		names := map[string]bool{}
		taken := func(n string) bool { return names[n] }
		for _, s := range t.servers {
			for _, r := range s.resources.items.resources {
				if first, dup := rs.byURI[r.URI]; dup {
					rs.warnings = append(rs.warnings, Warning{Server: s.cfg.Name, Kind: WarnInvalidResource,
						Message: fmt.Sprintf("resource %q is also listed by server %q, which reads it; left out", textclip.Clip(r.URI, 120), first.cfg.Name)})
					continue
				}
				rs.byURI[r.URI] = s
				name := uniqueName(s.cfg.Name, r.Name, taken)
				names[name] = true
				rs.all = append(rs.all, Resource{Name: name, Server: s.cfg.Name, Resource: r, Egress: s.cfg.Egress})
			}
			for _, lt := range s.resources.items.templates {
				rs.templates = append(rs.templates, ResourceTemplate{Server: s.cfg.Name, Template: lt.def,
					Variables: lt.re.vars, Egress: s.cfg.Egress})
				rs.matchers = append(rs.matchers, templateRoute{srv: s, re: lt.re})
			}
		}
	},
}

// listResources lists a server's resources and templates, drops the
// unusable ones and applies the allowlist, which names both.
func listResources(ctx context.Context, s *tsServer) capListing[resourceSet] {
	res, err := s.client.ListResources(ctx)
	fresh := s.client.ResourcesFreshUntil()
	if notOffered(err) {
		res, err = nil, nil
	}
	if err != nil {
		return capListing[resourceSet]{err: err}
	}
	tmpls, err := s.client.ListResourceTemplates(ctx)
	cuts := s.cuts.take(s.cfg.Name, "resources/list", "resources/templates/list") // taken even when templates failed
	if notOffered(err) {
		tmpls, err = nil, nil // templates are optional
	}
	if err != nil {
		return capListing[resourceSet]{err: fmt.Errorf("resources/templates/list: %w", err)}
	}
	name := s.cfg.Name
	res, warns := distinct(name, res, func(r *mcp.Resource) string { return r.URI }, WarnInvalidResource, "resource")
	tmpls, w := distinct(name, tmpls, func(r *mcp.ResourceTemplate) string { return r.URITemplate }, WarnInvalidResource, "resource template")
	warns = append(warns, w...)
	warns = append(warns, cuts...)
	if allow := s.cfg.Resources; allow != nil {
		found := make(map[string]bool, len(allow))
		res = slices.DeleteFunc(res, func(r mcp.Resource) bool { return !listed(allow, r.URI, found) })
		tmpls = slices.DeleteFunc(tmpls, func(r mcp.ResourceTemplate) bool { return !listed(allow, r.URITemplate, found) })
		for _, a := range allow {
			if !found[a] {
				warns = append(warns, Warning{Server: name, Kind: WarnResourceNotFound,
					Message: fmt.Sprintf("allowlisted resource %q is listed by the server neither as a resource nor as a template", a)})
			}
		}
	}
	set := resourceSet{resources: res}
	for _, tm := range tmpls {
		re, err := compileTemplate(tm.URITemplate)
		if err != nil {
			warns = append(warns, Warning{Server: name, Kind: WarnInvalidResource, Message: err.Error() + "; template left out"})
			continue
		}
		set.templates = append(set.templates, listedTemplate{def: tm, re: re})
	}
	return capListing[resourceSet]{items: set, warnings: warns, fresh: fresh}
}

// listed reports whether allow lists k, and records it in found.
func listed(allow []string, k string, found map[string]bool) bool {
	if slices.Contains(allow, k) {
		found[k] = true
		return true
	}
	return false
}

// Resources returns the resource catalogue: servers in configuration
// order, each server's resources in its order. A URI listed by two
// servers is the first server's. The slice is the caller's; the entries
// are shared and must not be modified. A server's list past its
// 2026-07-28 ttlMs is listed again in the background, as for Tools.
func (t *Toolset) Resources() []Resource {
	t.mu.RLock()
	defer t.mu.RUnlock()
	resourcesCap.expired(t)
	return append([]Resource(nil), t.resources.all...)
}

// ResourceTemplates returns the resource templates of every server, in
// configuration order.
func (t *Toolset) ResourceTemplates() []ResourceTemplate {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return append([]ResourceTemplate(nil), t.resources.templates...)
}

// ReadResource reads the resource uri from the server that lists it, or
// else from the first server, in configuration order, one of whose
// templates matches it. A URI no server lists or matches gives
// ErrUnknownResource and is sent to no server: a URI from a model, a
// prompt or a user cannot make one server read what another named.
func (t *Toolset) ReadResource(ctx context.Context, uri string) (*ResourceResult, error) {
	return t.ReadResourceFrom(ctx, "", uri)
}

// ReadResourceFrom reads uri from server, when several serve it (their
// templates match it): server must list it or have a template that
// matches it, or the error is ErrUnknownResource (ErrUnknownServer for a
// server the Toolset does not hold). An empty server is ReadResource's
// choice.
func (t *Toolset) ReadResourceFrom(ctx context.Context, server, uri string) (*ResourceResult, error) {
	srv, err := t.resourceServer(server, uri)
	if err != nil {
		return nil, err
	}
	res, err := srv.client.ReadResource(ctx, uri)
	if err != nil {
		return nil, fmt.Errorf("toolset: resource %s (server %q): %w", textclip.Clip(uri, 200), srv.cfg.Name, err)
	}
	return &ResourceResult{URI: uri, Server: srv.cfg.Name, Egress: srv.cfg.Egress, Result: res}, nil
}

// resourceServer is the server that reads uri: server, if it lists uri or
// has a template that matches it; with no server named, the one that
// lists it, or else the first one of whose templates matches it.
func (t *Toolset) resourceServer(server, uri string) (*tsServer, error) {
	t.mu.RLock()
	closed := t.closed
	var srv *tsServer
	known := server == ""
	if server == "" {
		srv = t.resources.byURI[uri]
	}
	for _, m := range t.resources.matchers {
		if srv == nil && (server == "" || m.srv.cfg.Name == server) && m.re.match(uri) {
			srv = m.srv
		}
	}
	for _, s := range t.servers {
		if s.cfg.Name != server {
			continue
		}
		known = true
		for _, r := range s.resources.items.resources {
			if r.URI == uri {
				srv = s
			}
		}
	}
	t.mu.RUnlock()
	switch {
	case closed:
		return nil, fmt.Errorf("toolset: resource %s: %w", textclip.Clip(uri, 200), mcp.ErrClosed)
	case !known:
		return nil, fmt.Errorf("%w: %q", ErrUnknownServer, textclip.Clip(server, 64))
	case srv == nil:
		return nil, fmt.Errorf("%w: %q", ErrUnknownResource, textclip.Clip(uri, 200))
	}
	return srv, nil
}

// Text renders the contents read for a model that reads text only (see
// mcp.ReadResourceResult.Text).
func (r *ResourceResult) Text() string { return r.Result.Text() }

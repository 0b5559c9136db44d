package mcptest

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"git.rickub.com/bots-garden/mini-me/internal/jsonrpc"
)

// Catalog serves prompts, resources and resource templates beside the
// tools. Configure it before Start; change it while the server runs with
// Server.SetCatalog.
type Catalog struct {
	// Prompts are listed in order; prompts/get renders the one named.
	Prompts []Prompt
	// Resources are listed in order; resources/read returns the one whose
	// URI is asked.
	Resources []Resource
	// Templates are the resource templates listed (each a JSON object
	// with uriTemplate and name). A read of a URI that is not a listed
	// resource but starts with a template's text up to its first "{" is
	// answered with the URI as text.
	Templates []json.RawMessage
	// PageSize > 0 paginates every list.
	PageSize int
	// TTL is the lifetime (ttlMs) given with every page; 0 gives none.
	TTL time.Duration
	// Complete, when set, declares completions and answers
	// completion/complete: ref is the prompt name or the template, arg
	// the argument's name, value what is typed so far.
	Complete func(ref, arg, value string) []string

	mu    sync.Mutex
	reads []string
	subs  []string // "+uri" and "-uri", in order
}

// Prompt is a prompt the server offers.
type Prompt struct {
	// Def is the prompt as listed; its "name" is the prompt's name.
	Def json.RawMessage
	// Messages are the rendered messages (a JSON array of
	// PromptMessage); "{arg}" in them is replaced by each argument's
	// value.
	Messages json.RawMessage
}

// Resource is a resource the server offers.
type Resource struct {
	// Def is the resource as listed; its "uri" is the resource's URI.
	Def json.RawMessage
	// Contents is the "contents" array resources/read returns.
	Contents json.RawMessage
}

// Reads returns the URIs read so far, in order.
func (c *Catalog) Reads() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.reads...)
}

// Subscriptions returns the subscription requests so far, in order: "+uri"
// for resources/subscribe, "-uri" for resources/unsubscribe.
func (c *Catalog) Subscriptions() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.subs...)
}

// SetCatalog replaces what the Catalog serves and tells the modern clients
// listening (prompts and resources list_changed); it returns how many
// streams it reached. Legacy clients are told by a tool that sends the
// notifications on its stream.
func (s *Server) SetCatalog(prompts []Prompt, resources []Resource, templates []json.RawMessage) int {
	s.Catalog.mu.Lock()
	s.Catalog.Prompts, s.Catalog.Resources, s.Catalog.Templates = prompts, resources, templates
	s.Catalog.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notifyListeners("notifications/prompts/list_changed")
	return s.notifyListeners("notifications/resources/list_changed")
}

// capabilities adds what the catalogue declares.
func (c *Catalog) capabilities(caps map[string]any) {
	caps["prompts"] = map[string]any{"listChanged": true}
	caps["resources"] = map[string]any{"listChanged": true, "subscribe": true}
	if c.Complete != nil {
		caps["completions"] = map[string]any{}
	}
}

// handle answers the catalogue's methods; ok is false for any other.
func (c *Catalog) handle(method string, params json.RawMessage) (res any, rerr *jsonrpc.Error, ok bool) {
	var p struct {
		Cursor    *string           `json:"cursor"`
		Name      string            `json:"name"`
		URI       string            `json:"uri"`
		Arguments map[string]string `json:"arguments"`
		Ref       struct {
			Name string `json:"name"`
			URI  string `json:"uri"`
		} `json:"ref"`
		Argument struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"argument"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}, true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch method {
	case "prompts/list":
		res, rerr = c.page("prompts", defsOf(c.Prompts, func(p Prompt) json.RawMessage { return p.Def }), p.Cursor, c.PageSize)
	case "prompts/get":
		for _, pr := range c.Prompts {
			if nameOf(pr.Def, "name") == p.Name {
				msgs := string(pr.Messages)
				for k, v := range p.Arguments {
					b, _ := json.Marshal(v)
					msgs = strings.ReplaceAll(msgs, "{"+k+"}", string(b[1:len(b)-1]))
				}
				return map[string]any{"messages": json.RawMessage(msgs)}, nil, true
			}
		}
		rerr = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown prompt " + p.Name}
	case "resources/list":
		res, rerr = c.page("resources", defsOf(c.Resources, func(r Resource) json.RawMessage { return r.Def }), p.Cursor, c.PageSize)
	case "resources/templates/list":
		res, rerr = c.page("resourceTemplates", c.Templates, p.Cursor, c.PageSize)
	case "resources/read":
		c.reads = append(c.reads, p.URI)
		res, rerr = c.read(p.URI)
	case "resources/subscribe", "resources/unsubscribe":
		sign := "+"
		if method == "resources/unsubscribe" {
			sign = "-"
		}
		c.subs = append(c.subs, sign+p.URI)
		res = struct{}{}
	case "completion/complete":
		if c.Complete == nil {
			return nil, nil, false
		}
		ref := p.Ref.Name
		if ref == "" {
			ref = p.Ref.URI
		}
		values := c.Complete(ref, p.Argument.Name, p.Argument.Value)
		if values == nil {
			values = []string{}
		}
		res = map[string]any{"completion": map[string]any{"values": values, "total": len(values), "hasMore": false}}
	default:
		return nil, nil, false
	}
	return res, rerr, true
}

// read answers resources/read. c.mu is held.
func (c *Catalog) read(uri string) (any, *jsonrpc.Error) {
	for _, r := range c.Resources {
		if nameOf(r.Def, "uri") == uri {
			return map[string]any{"contents": r.Contents}, nil
		}
	}
	for _, t := range c.Templates {
		prefix, _, _ := strings.Cut(nameOf(t, "uriTemplate"), "{")
		if strings.HasPrefix(uri, prefix) {
			return map[string]any{"contents": []any{map[string]any{"uri": uri, "mimeType": "text/plain", "text": uri}}}, nil
		}
	}
	return nil, &jsonrpc.Error{Code: -32002, Message: "resource not found"}
}

// page returns one page of a listing under key, pages of size (0: all)
// named by cursors "c{start}", with the catalogue's TTL.
func (c *Catalog) page(key string, defs []json.RawMessage, cursor *string, size int) (any, *jsonrpc.Error) {
	start := 0
	if cursor != nil {
		if _, err := fmt.Sscanf(*cursor, "c%d", &start); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad cursor"}
		}
	}
	end := len(defs)
	if size > 0 && start+size < end {
		end = start + size
	}
	out := append([]json.RawMessage{}, defs[min(start, end):end]...)
	res := map[string]any{key: out}
	if c.TTL > 0 {
		res["ttlMs"] = c.TTL.Milliseconds()
	}
	if end < len(defs) {
		res["nextCursor"] = fmt.Sprintf("c%d", end)
	}
	return res, nil
}

// defsOf returns the definition of each item.
func defsOf[T any](items []T, def func(T) json.RawMessage) []json.RawMessage {
	out := make([]json.RawMessage, len(items))
	for i, it := range items {
		out[i] = def(it)
	}
	return out
}

// nameOf reads one string field of a JSON object.
func nameOf(def json.RawMessage, field string) string {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(def, &m)
	var v string
	_ = json.Unmarshal(m[field], &v)
	return v
}

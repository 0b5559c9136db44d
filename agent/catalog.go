package agent

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/apps"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// tool is one tool offered to the model in a turn.
type tool struct {
	name        string // as the model knows it
	server      string // FuncServer for a Func
	original    string // the name on its server
	title       string
	description string
	inputSchema []byte
	schema      *toolSchema
	annotations permission.Annotations
	changed     bool
	fn          *Func // nil for an MCP tool
	skill       bool  // SkillTool
	search      bool  // ToolSearchTool
	task        mcp.TaskUse
	view        string // the ui:// URI of its MCP App view, if any
}

// catalog is the tools of one turn.
type catalog struct {
	tools  []*tool
	byName map[string]*tool
	defs   []ToolDef
	size   int // bytes of the definitions, for the context budget
	// all is the whole catalogue, searched through ToolSearchTool, when
	// the model is offered only part of it (see Agent.ToolSearch); else nil.
	all *catalog
	// searchable are the tools ToolSearchTool finds, searchableSize the
	// bytes of their definitions, servers their servers (see index).
	searchable     []*tool
	searchableSize int
	servers        []string
}

// catalog gathers the tools offered this turn: the Funcs, then the
// source's tools, less those of local-only servers when the model is not
// local. The whole catalogue is the Agent's last one while it would be
// built the same (see catalogCache); narrowed for search, the run's last
// one while the run loads no tool.
func (r *run) catalog() *catalog {
	skill := r.skillTool()
	var src []toolset.Tool
	if r.a.Tools != nil {
		src = r.a.Tools.Tools()
	}
	for i := range src { // by index: a Tool is large to copy
		if src[i].Egress == config.EgressLocal {
			r.egress[src[i].Server] = config.EgressLocal // sticks for the run, even if the tools go
		}
	}
	b := r.a.catalogs.get(r, src, skill)
	if b == nil {
		b = r.buildCatalog(src, skill)
		r.a.catalogs.put(b)
	}
	for _, w := range b.warnings {
		r.warnOnce(w.key, w.kind, w.msg)
	}
	if !r.searching(b.c) {
		return b.c
	}
	if loaded := r.loaded.toolCount(); r.narrowed == nil || r.narrowed.all != b.c || r.narrowedAt != loaded {
		r.narrowed, r.narrowedAt = r.narrow(b.c), loaded
	}
	return r.narrowed
}

// buildCatalog builds the whole catalogue of r from the source's tools
// src and the skill tool (nil if none); r.egress has src's local-only
// servers already.
func (r *run) buildCatalog(src []toolset.Tool, skill *tool) *builtCatalog {
	b := &builtCatalog{funcs: slices.Clone(r.a.Funcs), src: slices.Clone(src), local: r.local, c: &catalog{byName: map[string]*tool{}}}
	if skill != nil {
		b.skill, b.hasSkill = skill.description, true
	}
	if !r.local {
		b.localServers = localServers(r.egress)
	}
	warn := func(key string, kind WarningKind, msg string) {
		b.warnings = append(b.warnings, catalogWarning{key, kind, msg})
	}
	c := b.c
	for _, f := range r.a.Funcs {
		c.add(&tool{name: f.name, server: FuncServer, original: f.name, description: f.description,
			inputSchema: f.inputSchema, schema: f.schema, fn: f})
	}
	if skill != nil {
		c.add(skill)
	}
	for _, st := range src {
		if !apps.ForModel(st.Tool) {
			continue // an MCP App's own tool: its views call it, never the model
		}
		if r.egress[st.Server] == config.EgressLocal && !r.local {
			warn("withheld:"+st.Server, WarnToolsWithheld, fmt.Sprintf(
				"the tools of server %q are not offered: the server is local-only (egress: local) and the model is not on this machine", st.Server))
			continue
		}
		if prev, taken := c.byName[st.Name]; taken {
			warn("conflict:"+st.Name, WarnToolConflict, fmt.Sprintf(
				"tool %q of server %q is not offered: its name is taken by a tool of %q", st.Tool.Name, st.Server, prev.server))
			continue
		}
		ts := r.a.schemas.get(st.Tool.InputSchema)
		if ts.err != nil {
			warn("schema:"+st.Name, WarnSchema, fmt.Sprintf(
				"tool %q: its input schema cannot be used for validation, arguments are only checked to be an object: %v", st.Name, ts.err))
		}
		if len(ts.fixes) > 0 {
			warn("types:"+st.Name, WarnSchema, fmt.Sprintf(
				"tool %q: its input schema uses types that are not JSON Schema types, or a root that is not an object; the model is shown, and arguments are validated against, the schema with %s",
				st.Name, strings.Join(ts.fixes, ", ")))
		}
		if ts.cut {
			warn("cut:"+st.Name, WarnSchema, fmt.Sprintf(
				"tool %q: its input schema is too large or too deeply nested to show in full to the model; parts are shown as the empty schema", st.Name))
		}
		t := mcpTool(st, ts)
		if ui, err := apps.ToolMeta(st.Tool); err != nil {
			warn("view:"+st.Name, WarnAppView, fmt.Sprintf("tool %q: its MCP App view is not shown: %v", st.Name, err))
		} else {
			t.view = ui.ResourceURI
		}
		c.add(t)
	}
	c.index()
	return b
}

// catalogCache keeps the whole catalogue an Agent built last, for the
// next model calls of its runs: building one over hundreds of tools costs
// far more than a turn of the loop. It is used again only while every
// input of the build is the same: the Funcs, the skill tool's
// description, whether the model is local, the servers the run holds
// local-only, and every field of the source's tools that the catalogue
// reads, compared by value (a ToolSource such as *toolset.Toolset gives a
// fresh copy of its list at each call, whose strings and schemas are
// mostly the same memory, so that the comparison is cheap). A changed
// tool, such as after a list_changed notification, is a new build. A
// catalogue is never changed once built, so runs share it; it is safe for
// concurrent use.
type catalogCache struct {
	mu   sync.Mutex
	last *builtCatalog
}

// builtCatalog is a whole catalogue and what it was built from.
type builtCatalog struct {
	funcs        []*Func
	skill        string // the skill tool's description, if hasSkill
	hasSkill     bool
	src          []toolset.Tool
	local        bool
	localServers []string // the servers held local-only, sorted, when !local
	c            *catalog
	warnings     []catalogWarning // given at each run's use
}

type catalogWarning struct {
	key  string
	kind WarningKind
	msg  string
}

func (cc *catalogCache) put(b *builtCatalog) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.last = b
}

// get returns the last catalogue if run r would build it the same from
// src and skill, else nil.
func (cc *catalogCache) get(r *run, src []toolset.Tool, skill *tool) *builtCatalog {
	cc.mu.Lock()
	b := cc.last
	cc.mu.Unlock()
	if b == nil || b.local != r.local || b.hasSkill != (skill != nil) || skill != nil && skill.description != b.skill ||
		!slices.Equal(b.funcs, r.a.Funcs) || !sameTools(b.src, src) {
		return nil
	}
	if !r.local && !slices.Equal(b.localServers, localServers(r.egress)) {
		return nil
	}
	return b
}

// localServers lists the servers egress holds local-only, sorted.
func localServers(egress map[string]config.Egress) []string {
	var out []string
	for s, e := range egress {
		if e == config.EgressLocal {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// sameTools reports whether a and b hold the same tools, in the same
// order, in every field a catalogue reads.
func sameTools(a, b []toolset.Tool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if x.Name != y.Name || x.Server != y.Server || x.Changed != y.Changed || x.Egress != y.Egress || x.Task != y.Task ||
			x.Tool.Name != y.Tool.Name || x.Tool.Title != y.Tool.Title || x.Tool.Description != y.Tool.Description ||
			!bytes.Equal(x.Tool.InputSchema, y.Tool.InputSchema) || !bytes.Equal(x.Tool.Meta, y.Tool.Meta) ||
			x.Tool.Annotations != y.Tool.Annotations && !reflect.DeepEqual(x.Tool.Annotations, y.Tool.Annotations) {
			return false
		}
	}
	return true
}

func mcpTool(st toolset.Tool, ts *toolSchema) *tool {
	t := &tool{
		name:        st.Name,
		server:      st.Server,
		original:    st.Tool.Name,
		title:       st.Tool.Title,
		description: st.Tool.Description,
		inputSchema: st.Tool.InputSchema,
		schema:      ts,
		changed:     st.Changed,
		task:        st.Task,
	}
	if a := st.Tool.Annotations; a != nil && t.title == "" {
		t.title = a.Title
	}
	t.annotations = permissionAnnotations(st.Tool.Annotations)
	return t
}

func (c *catalog) add(t *tool) {
	c.tools = append(c.tools, t)
	c.byName[t.name] = t
	c.defs = append(c.defs, ToolDef{Name: t.name, Description: t.description, Parameters: t.schema.projected})
	c.size += t.defSize()
}

// defSize is about the bytes of t's definition in a request.
func (t *tool) defSize() int {
	return len(t.name) + len(t.description) + len(t.schema.projected) + 30 // the JSON around them
}

// checkChoice rejects a tool choice that names a tool not offered.
func (c *catalog) checkChoice(choice ToolChoice) error {
	if choice.named() && c.byName[string(choice)] == nil {
		return fmt.Errorf("agent: Agent.ToolChoice names tool %q, which is not offered", string(choice))
	}
	return nil
}

// request builds the permission request for a call of t.
func (t *tool) request(args []byte) permission.Request {
	return permission.Request{
		Server:       t.server,
		Tool:         t.original,
		PrefixedName: t.name,
		Title:        t.title,
		Description:  t.description,
		InputSchema:  t.inputSchema,
		Arguments:    args,
		Annotations:  t.annotations,
		Changed:      t.changed,
	}
}

// changeAcks remembers the changed tool definitions a policy has allowed a
// call of. The Toolset marks a tool Changed for as long as its definition
// differs from the one first seen; passing that on at every call would make
// the policy ask about every call of the tool forever. Once a call of the
// new definition is allowed, later calls of that same definition go to the
// policy unmarked (the policy still notices any further change itself).
// It grows by one entry per changed definition allowed.
type changeAcks struct {
	mu   sync.Mutex
	seen map[[sha256.Size]byte]bool
}

func definitionKey(req *permission.Request) [sha256.Size]byte {
	h := sha256.New()
	for _, s := range []string{req.Server, req.Tool, req.Title, req.Description, string(req.InputSchema), req.Annotations.String()} {
		fmt.Fprintf(h, "%d:%s", len(s), s)
	}
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

func (c *changeAcks) acknowledged(req *permission.Request) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen[definitionKey(req)]
}

func (c *changeAcks) acknowledge(req *permission.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[[sha256.Size]byte]bool{}
	}
	c.seen[definitionKey(req)] = true
}

package agent

import (
	"crypto/sha256"
	"fmt"
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
}

// catalog gathers the tools offered this turn: the Funcs, then the
// source's tools, less those of local-only servers when the model is not
// local.
func (r *run) catalog() *catalog {
	c := &catalog{byName: map[string]*tool{}}
	for _, f := range r.a.Funcs {
		c.add(&tool{name: f.name, server: FuncServer, original: f.name, description: f.description,
			inputSchema: f.inputSchema, schema: f.schema, fn: f})
	}
	if t := r.skillTool(); t != nil {
		c.add(t)
	}
	if r.a.Tools == nil {
		return c
	}
	for _, st := range r.a.Tools.Tools() {
		if !apps.ForModel(st.Tool) {
			continue // an MCP App's own tool: its views call it, never the model
		}
		if st.Egress == config.EgressLocal {
			r.egress[st.Server] = st.Egress // sticks for the run, even if the tools go
		}
		if r.egress[st.Server] == config.EgressLocal && !r.local {
			r.warnOnce("withheld:"+st.Server, WarnToolsWithheld, fmt.Sprintf(
				"the tools of server %q are not offered: the server is local-only (egress: local) and the model is not on this machine", st.Server))
			continue
		}
		if prev, taken := c.byName[st.Name]; taken {
			r.warnOnce("conflict:"+st.Name, WarnToolConflict, fmt.Sprintf(
				"tool %q of server %q is not offered: its name is taken by a tool of %q", st.Tool.Name, st.Server, prev.server))
			continue
		}
		ts := r.a.schemas.get(st.Tool.InputSchema)
		if ts.err != nil {
			r.warnOnce("schema:"+st.Name, WarnSchema, fmt.Sprintf(
				"tool %q: its input schema cannot be used for validation, arguments are only checked to be an object: %v", st.Name, ts.err))
		}
		if len(ts.fixes) > 0 {
			r.warnOnce("types:"+st.Name, WarnSchema, fmt.Sprintf(
				"tool %q: its input schema uses types that are not JSON Schema types, or a root that is not an object; the model is shown, and arguments are validated against, the schema with %s",
				st.Name, strings.Join(ts.fixes, ", ")))
		}
		if ts.cut {
			r.warnOnce("cut:"+st.Name, WarnSchema, fmt.Sprintf(
				"tool %q: its input schema is too large or too deeply nested to show in full to the model; parts are shown as the empty schema", st.Name))
		}
		t := mcpTool(st, ts)
		if ui, err := apps.ToolMeta(st.Tool); err != nil {
			r.warnOnce("view:"+st.Name, WarnAppView, fmt.Sprintf("tool %q: its MCP App view is not shown: %v", st.Name, err))
		} else {
			t.view = ui.ResourceURI
		}
		c.add(t)
	}
	if r.searching(c) {
		return r.narrow(c)
	}
	return c
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

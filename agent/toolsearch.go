package agent

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode"

	"git.rickub.com/bots-garden/mini-me/permission"
)

// ToolSearchTool is the name of the built-in tool through which the model
// finds and loads the tools of a large catalogue (see Agent.ToolSearch).
const ToolSearchTool = "search_tools"

// ToolSearchMode says when the model is given ToolSearchTool in place of
// the catalogue's tool definitions.
type ToolSearchMode int

const (
	// ToolSearchAuto, the zero value, searches when the catalogue's MCP
	// tools number more than DefaultToolSearchTools, or their definitions
	// take more than DefaultToolSearchTokens estimated tokens.
	ToolSearchAuto ToolSearchMode = iota
	// ToolSearchOn always searches, when there are MCP tools.
	ToolSearchOn
	// ToolSearchOff never searches: every definition is sent.
	ToolSearchOff
)

// Thresholds of ToolSearchAuto, and the bounds of one search.
const (
	DefaultToolSearchTools  = 40
	DefaultToolSearchTokens = 10_000
	// DefaultToolSearchResults is how many tools a search loads when the
	// model gives no limit; MaxToolSearchResults is the most it may ask.
	DefaultToolSearchResults = 5
	MaxToolSearchResults     = 10
)

const toolSearchSchema = `{"type":"object","properties":{` +
	`"query":{"type":"string","description":"keywords for what the tool must do, such as: create issue"},` +
	`"server":{"type":"string","description":"only tools of this server"},` +
	`"limit":{"type":"integer","minimum":1,"maximum":10,"description":"how many tools to load, 5 if left out"}},` +
	`"required":["query"]}`

var toolSearchToolSchema = compileSchema(json.RawMessage(toolSearchSchema))

// searching reports whether the run gives the model ToolSearchTool for
// the MCP tools of c.
func (r *run) searching(c *catalog) bool {
	var n, size int
	for _, t := range c.tools {
		if t.searchable() {
			n++
			size += t.defSize()
		}
	}
	switch r.a.ToolSearch {
	case ToolSearchOn:
		return n > 0
	case ToolSearchOff:
		return false
	}
	return n > DefaultToolSearchTools || estimateTokens(size) > DefaultToolSearchTokens
}

// narrow returns the catalogue offered when searching all: the Funcs, the
// skill tool, the pinned tools, the tools loaded so far in the run, in
// all's order, then ToolSearchTool. all stays the catalogue searched.
func (r *run) narrow(all *catalog) *catalog {
	c := &catalog{byName: map[string]*tool{}, all: all}
	n := 0
	for _, t := range all.tools {
		if t.searchable() {
			n++
		}
		if !t.searchable() || r.loaded.toolLoaded(t.name) || slices.Contains(r.a.PinnedTools, t.name) ||
			string(r.a.ToolChoice) == t.name {
			c.add(t)
		}
	}
	c.add(&tool{name: ToolSearchTool, server: BuiltinServer, original: ToolSearchTool, search: true,
		description: fmt.Sprintf("Find the tools you need among the %d tools of the connected servers, by keywords, and load them: "+
			"the tools found become callable from your next turn on. Servers: %s.", n, strings.Join(all.servers(), ", ")),
		inputSchema: []byte(toolSearchSchema), schema: toolSearchToolSchema,
		annotations: permission.Annotations{ReadOnlyHint: ptr(true), OpenWorldHint: ptr(false)}})
	return c
}

// searchable reports whether t is an MCP tool, which ToolSearchTool
// finds: Funcs and the skill tool are always offered.
func (t *tool) searchable() bool { return t.fn == nil && !t.skill }

// servers lists the MCP servers of c's tools, in order.
func (c *catalog) servers() []string {
	var out []string
	for _, t := range c.tools {
		if t.searchable() && !slices.Contains(out, t.server) {
			out = append(out, t.server)
		}
	}
	return out
}

// searchTools runs a call of ToolSearchTool on all: it loads the best
// matching tools for the rest of the run and describes them.
func (r *run) searchTools(all *catalog, args []byte) string {
	var a struct {
		Query  string `json:"query"`
		Server string `json:"server"`
		Limit  int    `json:"limit"`
	}
	_ = json.Unmarshal(args, &a) // validated against toolSearchSchema
	if a.Limit <= 0 {
		a.Limit = DefaultToolSearchResults
	}
	var docs []*tool
	for _, t := range all.tools {
		if t.searchable() && (a.Server == "" || t.server == a.Server) {
			docs = append(docs, t)
		}
	}
	found := r.a.search.rankTools(docs, a.Query, min(a.Limit, MaxToolSearchResults))
	if len(found) == 0 {
		return fmt.Sprintf("No tool matches %q. Try other keywords, or another server: %s.", clip(a.Query, 100), strings.Join(all.servers(), ", "))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d tools loaded; call them from your next turn on:\n", len(found))
	for _, t := range found {
		r.loaded.loadTool(t.name)
		fmt.Fprintf(&b, "\n%s (server %s): %s\nparameters: %s\n", t.name, t.server, clip(t.description, 500), t.schema.projected)
	}
	return b.String()
}

// searchIndex keeps, for each tool a search has read, the words of its
// name, description and parameter names, so that a search over a large
// catalogue tokenises each tool once, at the first search that reads it,
// rather than at every search. An entry is by the tool's name, and made
// again when its description or parameters change. The zero value is
// ready to use; it is safe for concurrent use.
type searchIndex struct {
	mu sync.Mutex
	m  map[string]*searchDoc
}

// maxIndexedTools bounds a searchIndex: past it, it starts afresh.
const maxIndexedTools = 100_000

// searchDoc is one tool as a search reads it: its distinct words, sorted,
// how many times each occurs, and how many words it has in all.
type searchDoc struct {
	description, params string // what the words were read from, with the name
	words               []string
	counts              []int
	length              int
}

func newSearchDoc(t *tool) *searchDoc {
	ws := words(t.name + " " + t.description + " " + t.schema.params)
	d := &searchDoc{description: t.description, params: t.schema.params, length: len(ws)}
	slices.Sort(ws)
	for i, w := range ws {
		if i > 0 && w == ws[i-1] {
			d.counts[len(d.counts)-1]++
			continue
		}
		d.words, d.counts = append(d.words, w), append(d.counts, 1)
	}
	return d
}

// count returns how many times w occurs in d.
func (d *searchDoc) count(w string) int {
	if i, ok := slices.BinarySearch(d.words, w); ok {
		return d.counts[i]
	}
	return 0
}

// docs returns the entries of ts, making those it lacks.
func (x *searchIndex) docs(ts []*tool) []*searchDoc {
	out := make([]*searchDoc, len(ts))
	x.mu.Lock()
	defer x.mu.Unlock()
	for i, t := range ts {
		d := x.m[t.name]
		if d == nil || d.description != t.description || d.params != t.schema.params {
			d = newSearchDoc(t)
			if x.m == nil || len(x.m) >= maxIndexedTools {
				x.m = map[string]*searchDoc{}
			}
			x.m[t.name] = d
		}
		out[i] = d
	}
	return out
}

// rankTools returns the at most n tools of docs that best match query,
// by BM25 over the words of their names, descriptions and parameter
// names; a tool matching no word is left out, ties keep docs' order.
func (x *searchIndex) rankTools(docs []*tool, query string, n int) []*tool {
	const k1, b = 1.2, 0.75
	terms := words(query)
	entries := x.docs(docs)
	total := 0
	for _, d := range entries {
		total += d.length
	}
	// tfs[i*len(terms)+j] is how many times docs[i] has terms[j]; df[j]
	// how many docs have terms[j].
	tfs, df := make([]int, len(entries)*len(terms)), make([]int, len(terms))
	for i, d := range entries {
		for j, w := range terms {
			if tf := d.count(w); tf > 0 {
				tfs[i*len(terms)+j] = tf
				df[j]++
			}
		}
	}
	avg := float64(total) / float64(max(len(docs), 1))
	type scored struct {
		i     int
		score float64
	}
	var hits []scored
	for i, d := range entries {
		s := 0.0
		for j := range terms {
			tf := float64(tfs[i*len(terms)+j])
			if tf == 0 {
				continue
			}
			idf := math.Log(1 + (float64(len(docs))-float64(df[j])+0.5)/(float64(df[j])+0.5))
			s += idf * tf * (k1 + 1) / (tf + k1*(1-b+b*float64(d.length)/max(avg, 1)))
		}
		if s > 0 {
			hits = append(hits, scored{i, s})
		}
	}
	slices.SortStableFunc(hits, func(x, y scored) int {
		switch {
		case x.score > y.score:
			return -1
		case x.score < y.score:
			return 1
		}
		return 0
	})
	out := make([]*tool, 0, min(n, len(hits)))
	for _, h := range hits[:min(n, len(hits))] {
		out = append(out, docs[h.i])
	}
	return out
}

// words splits s into lower-case words at every character that is not a
// letter or digit, and where camelCase changes case, with a final s cut
// off; words of a letter and "the", "of", ... are left out.
func words(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if w := strings.ToLower(string(cur)); len(cur) > 1 && !stopWords[w] {
			if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
				w = w[:len(w)-1] // plurals: issues and issue match
			}
			out = append(out, w)
		}
		cur = cur[:0]
	}
	var prev rune
	for _, c := range s {
		switch {
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			flush()
		case unicode.IsUpper(c) && unicode.IsLower(prev):
			flush()
			cur = append(cur, c)
		default:
			cur = append(cur, c)
		}
		prev = c
	}
	flush()
	return out
}

var stopWords = map[string]bool{"the": true, "an": true, "of": true, "to": true, "and": true, "or": true, "in": true, "on": true,
	"for": true, "is": true, "it": true, "by": true, "with": true, "from": true, "this": true, "that": true}

// paramNames lists the top-level property names of a projected schema.
func paramNames(schema []byte) []string {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(schema, &s)
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

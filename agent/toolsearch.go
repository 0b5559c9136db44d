package agent

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

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
	n, size := len(c.searchable), c.searchableSize
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
	loaded := r.loaded.toolCount() > 0
	for _, t := range all.tools {
		if !t.searchable() || loaded && r.loaded.toolLoaded(t.name) || slices.Contains(r.a.PinnedTools, t.name) ||
			string(r.a.ToolChoice) == t.name {
			c.add(t)
		}
	}
	c.add(&tool{name: ToolSearchTool, server: BuiltinServer, original: ToolSearchTool, search: true,
		description: fmt.Sprintf("Find the tools you need among the %d tools of the connected servers, by keywords, and load them: "+
			"the tools found become callable from your next turn on. Servers: %s.", len(all.searchable), strings.Join(all.servers, ", ")),
		inputSchema: []byte(toolSearchSchema), schema: toolSearchToolSchema,
		annotations: permission.Annotations{ReadOnlyHint: ptr(true), OpenWorldHint: ptr(false)}})
	return c
}

// searchable reports whether t is an MCP tool, which ToolSearchTool
// finds: Funcs and the skill tool are always offered.
func (t *tool) searchable() bool { return t.fn == nil && !t.skill }

// index records what a search of c reads: its searchable tools, their
// definitions' size and their servers, in order. c is complete.
func (c *catalog) index() {
	for _, t := range c.tools {
		if !t.searchable() {
			continue
		}
		c.searchable = append(c.searchable, t)
		c.searchableSize += t.defSize()
		if !slices.Contains(c.servers, t.server) {
			c.servers = append(c.servers, t.server)
		}
	}
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
	found := r.a.search.inverted(all.searchable).rank(a.Query, a.Server, min(a.Limit, MaxToolSearchResults))
	if len(found) == 0 {
		return fmt.Sprintf("No tool matches %q. Try other keywords, or another server: %s.", clip(a.Query, 100), strings.Join(all.servers, ", "))
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
// again when its description or parameters change. It also keeps the
// inverted index (each word's tools) of the last tool list searched, so
// that a query over the same list reads only the tools that have its
// words. The zero value is ready to use; it is safe for concurrent use.
type searchIndex struct {
	mu   sync.Mutex
	m    map[string]*searchDoc
	last *invertedIndex
}

// maxIndexedTools bounds a searchIndex: past it, it starts afresh.
const maxIndexedTools = 100_000

// searchDoc is one tool as a search reads it: its distinct words, sorted,
// in how many of its three parts (name, description, parameter names)
// each occurs, and how many words it has in all; and the distinct words
// of its name and of its name on its server, sorted, for name matches.
//
// A word counts once per part, however often the part repeats it: a
// description that says "create issue" fifty times matches "create
// issue" no better than one that says it once, and its length counts
// against it (BM25's length normalisation).
type searchDoc struct {
	description, params, original string // what the words were read from, with the name
	words                         []string
	counts                        []int
	length                        int
	nameWords, originalWords      []string
}

func newSearchDoc(t *tool) *searchDoc {
	ws := make([]string, 0, (len(t.name)+len(t.description)+len(t.schema.params))/6+1)
	d := &searchDoc{description: t.description, params: t.schema.params, original: t.original}
	for i, part := range []string{t.name, t.description, t.schema.params} {
		n := len(ws)
		ws = appendWords(ws, part)
		d.length += len(ws) - n
		slices.Sort(ws[n:])
		ws = ws[:n+len(slices.Compact(ws[n:]))] // each word once per part
		if i == 0 {
			d.nameWords = slices.Clone(ws)
		}
	}
	d.counts = make([]int, 0, len(ws))
	slices.Sort(ws)
	d.words = ws[:0] // the distinct words, in place
	for _, w := range ws {
		if len(d.words) > 0 && w == d.words[len(d.words)-1] {
			d.counts[len(d.counts)-1]++
			continue
		}
		d.words, d.counts = append(d.words, w), append(d.counts, 1)
	}
	d.originalWords = wordSet(t.original)
	return d
}

// wordSet returns the distinct words of s, sorted.
func wordSet(s string) []string {
	ws := words(s)
	slices.Sort(ws)
	return slices.Compact(ws)
}

// docs returns the entries of ts, making those it lacks.
func (x *searchIndex) docs(ts []*tool) []*searchDoc {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.docsLocked(ts)
}

func (x *searchIndex) docsLocked(ts []*tool) []*searchDoc {
	out := make([]*searchDoc, len(ts))
	for i, t := range ts {
		d := x.m[t.name]
		if d == nil || d.description != t.description || d.params != t.schema.params || d.original != t.original {
			d = newSearchDoc(t)
			if x.m == nil || len(x.m) >= maxIndexedTools {
				x.m = make(map[string]*searchDoc, len(ts))
			}
			x.m[t.name] = d
		}
		out[i] = d
	}
	return out
}

// invertedIndex is a list of tools by word: for each word, the tools that
// have it, in the list's order, and how many times. Once made it is only
// read. A catalogue's tools are not changed once it is built, so the
// same *tool values are the same words.
type invertedIndex struct {
	tools    []*tool
	docs     []*searchDoc
	lengths  []int   // the words of each tool
	serverOf []int32 // the server of each tool, numbered from 0 in the list's order
	names    []nameShape
	postings map[string][]posting
	all      docStats
	servers  map[string]docStats
}

type posting struct{ doc, tf int32 }

// nameShape is the size of a tool's name and of its name on its server,
// in bytes and in distinct words: a query of another size cannot name the
// tool (nameMatch), so a search reads no more of it. The index keeps them
// side by side, as reading each hit's tool would be slow (a cache miss each).
type nameShape struct {
	name, original           int32
	nameWords, originalWords int32
}

// mayName reports whether a query of n bytes and w distinct words may
// name the tool.
func (s nameShape) mayName(n, w int) bool {
	return int(s.name) == n || int(s.original) == n || int(s.nameWords) == w || int(s.originalWords) == w
}

// docStats are the tool count and the words of some tools, for BM25, and
// the number of their server (in an invertedIndex's servers).
type docStats struct {
	n, total int
	id       int32
}

// inverted returns the inverted index of ts: the last one made, if it was
// made of the same tools, else a new one.
func (x *searchIndex) inverted(ts []*tool) *invertedIndex {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.last != nil && slices.Equal(x.last.tools, ts) {
		return x.last
	}
	docs := x.docsLocked(ts)
	ix := &invertedIndex{tools: slices.Clone(ts), docs: docs, lengths: make([]int, len(ts)), serverOf: make([]int32, len(ts)), names: make([]nameShape, len(ts)),
		postings: make(map[string][]posting, len(ts)), servers: map[string]docStats{}}
	for i, d := range docs {
		ix.lengths[i] = d.length
		ix.names[i] = nameShape{int32(len(ts[i].name)), int32(len(ts[i].original)), int32(len(d.nameWords)), int32(len(d.originalWords))}
		for j, w := range d.words {
			ix.postings[w] = append(ix.postings[w], posting{int32(i), int32(d.counts[j])})
		}
		st, seen := ix.servers[ts[i].server]
		if !seen {
			st.id = int32(len(ix.servers))
		}
		ix.serverOf[i] = st.id
		st.n++
		st.total += d.length
		ix.servers[ts[i].server] = st
		ix.all.n++
		ix.all.total += d.length
	}
	x.last = ix
	return ix
}

// rankTools returns the at most n tools of docs that best match query,
// as rank orders them.
func (x *searchIndex) rankTools(docs []*tool, query string, n int) []*tool {
	return x.inverted(docs).rank(query, "", n)
}

// Name matches, the first key of a search's order: a tool whose name is
// the query comes before any tool that only mentions its words.
const (
	nameMatchNone     = iota
	nameMatchWords    // the query's words are the words of the name, or of the name on its server
	nameMatchOriginal // the query is the name on its server, case aside
	nameMatchExact    // the query is the name, case aside
)

// rank returns the at most n tools of ix (those of server only, unless
// server is "") that match query: first by how closely the query names
// them (nameMatch*), then by BM25 over the words of their names,
// descriptions and parameter names (each word once per part, see
// searchDoc), then in the list's order; a tool matching no word is left
// out. While tools of other servers match, no server takes more than
// half the places, rounded up: one server's tools, however many and
// however worded, cannot push every other server's out of a search.
func (ix *invertedIndex) rank(query, server string, n int) []*tool {
	const k1, b = 1.2, 0.75
	terms := words(query)
	st := ix.all
	if server != "" {
		st = ix.servers[server]
	}
	if st.n == 0 || len(terms) == 0 || n <= 0 {
		return []*tool{}
	}
	avg := float64(st.total) / float64(max(st.n, 1))
	scores := make([]float64, len(ix.tools))
	var hits []int32 // the tools scored, as first scored
	for _, w := range terms {
		ps := ix.postings[w]
		df := len(ps)
		if server != "" {
			df = 0
			for _, p := range ps {
				if ix.tools[p.doc].server == server {
					df++
				}
			}
		}
		if df == 0 {
			continue
		}
		idf := math.Log(1 + (float64(st.n)-float64(df)+0.5)/(float64(df)+0.5))
		for _, p := range ps {
			if server != "" && ix.tools[p.doc].server != server {
				continue
			}
			tf := float64(p.tf)
			if scores[p.doc] == 0 {
				hits = append(hits, p.doc)
			}
			scores[p.doc] += idf * tf * (k1 + 1) / (tf + k1*(1-b+b*float64(ix.lengths[p.doc])/max(avg, 1)))
		}
	}
	q, qset := strings.TrimSpace(query), wordSet(query)
	var match map[int32]int // the tools the query names, rarely any
	for _, h := range hits {
		if !ix.names[h].mayName(len(q), len(qset)) {
			continue
		}
		if m := nameMatch(q, qset, ix.tools[h], ix.docs[h]); m != nameMatchNone {
			if match == nil {
				match = map[int32]int{}
			}
			match[h] = m
		}
	}
	better := func(i, j int32) bool {
		if match != nil && match[i] != match[j] {
			return match[i] > match[j]
		}
		return scores[i] > scores[j] || scores[i] == scores[j] && i < j
	}
	// Each server's n best: no server takes more than n places.
	best := make([][]int32, len(ix.servers))
	for _, h := range hits {
		srv := ix.serverOf[h]
		best[srv] = insertBest(best[srv], h, n, better)
	}
	var cands []int32
	for _, hs := range best {
		cands = append(cands, hs...)
	}
	slices.SortFunc(cands, func(i, j int32) int {
		switch {
		case better(i, j):
			return -1
		case better(j, i):
			return 1
		}
		return 0 // i == j: better orders distinct tools strictly
	})
	out := make([]*tool, 0, min(n, len(cands)))
	for _, h := range pickSpread(cands, n, (n+1)/2, ix.serverOf) {
		out = append(out, ix.tools[h])
	}
	return out
}

// insertBest inserts h into best, the at most n best so far in order,
// and returns it.
func insertBest(best []int32, h int32, n int, better func(i, j int32) bool) []int32 {
	if len(best) == n && !better(h, best[n-1]) {
		return best
	}
	if len(best) < n {
		best = append(best, h)
	}
	k := len(best) - 1
	for ; k > 0 && better(h, best[k-1]); k-- {
		best[k] = best[k-1]
	}
	best[k] = h
	return best
}

// pickSpread picks n of cands, best first, taking at most perServer of
// one server's while others remain, then filling any place left with the
// best of those passed over; the picks keep cands' order.
func pickSpread(cands []int32, n, perServer int, serverOf []int32) []int32 {
	taken := map[int32]int{}
	picked := make([]bool, len(cands))
	count := 0
	for i, h := range cands {
		if count < n && taken[serverOf[h]] < perServer {
			picked[i] = true
			taken[serverOf[h]]++
			count++
		}
	}
	for i := range cands {
		if count < n && !picked[i] {
			picked[i] = true
			count++
		}
	}
	out := make([]int32, 0, count)
	for i, h := range cands {
		if picked[i] {
			out = append(out, h)
		}
	}
	return out
}

// nameMatch says how closely the query q, whose distinct words are qset,
// names t (doc is its searchDoc): one of the nameMatch constants. rank
// asks only about tools of the query's shape (nameShape.mayName): a
// change of case that changes a name's length in bytes, as a few letters
// outside ASCII do, then names the tool only if the words still match.
func nameMatch(q string, qset []string, t *tool, doc *searchDoc) int {
	switch {
	case strings.EqualFold(q, t.name):
		return nameMatchExact
	case t.original != "" && strings.EqualFold(q, t.original):
		return nameMatchOriginal
	case slices.Equal(qset, doc.nameWords) || len(doc.originalWords) > 0 && slices.Equal(qset, doc.originalWords):
		return nameMatchWords
	}
	return nameMatchNone
}

// words splits s into lower-case words at every character that is not a
// letter or digit, and where camelCase changes case, with a final s cut
// off; words of a letter and "the", "of", ... are left out.
func words(s string) []string { return appendWords(nil, s) }

// appendWords appends the words of s to out; out is made for s, if nil.
func appendWords(out []string, s string) []string {
	start, n := 0, 0 // the current word is s[start:i], of n characters
	flush := func(i int) {
		if n > 1 {
			if w := strings.ToLower(s[start:i]); !isStopWord(w) {
				if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
					w = w[:len(w)-1] // plurals: issues and issue match
				}
				if out == nil {
					out = make([]string, 0, len(s)/6+1) // about a word per 6 bytes of prose: one allocation
				}
				out = append(out, w)
			}
		}
		start, n = i, 0
	}
	var prev rune
	for i, c := range s {
		switch {
		case !isWordRune(c):
			flush(i)
		case isUpper(c) && isLower(prev):
			flush(i)
			fallthrough
		default:
			if n == 0 {
				start = i
			}
			n++
		}
		prev = c
	}
	flush(len(s))
	return out
}

// isWordRune, isUpper and isLower are unicode.IsLetter || unicode.IsDigit,
// unicode.IsUpper and unicode.IsLower, without a call for ASCII.
func isWordRune(c rune) bool {
	if c < utf8.RuneSelf {
		return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
	}
	return unicode.IsLetter(c) || unicode.IsDigit(c)
}

func isUpper(c rune) bool {
	if c < utf8.RuneSelf {
		return 'A' <= c && c <= 'Z'
	}
	return unicode.IsUpper(c)
}

func isLower(c rune) bool {
	if c < utf8.RuneSelf {
		return 'a' <= c && c <= 'z'
	}
	return unicode.IsLower(c)
}

// isStopWord reports the words a search leaves out: "the", "of", ...
func isStopWord(w string) bool {
	switch w {
	case "the", "an", "of", "to", "and", "or", "in", "on", "for", "is", "it", "by", "with", "from", "this", "that":
		return true
	}
	return false
}

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

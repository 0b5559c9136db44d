package agent

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRankTools(t *testing.T) {
	mk := func(name, desc, schema string) *tool {
		return &tool{name: name, description: desc, schema: compileSchema(json.RawMessage(schema))}
	}
	docs := []*tool{
		mk("github_list_issues", "List the issues of a repository.", `{"type":"object","properties":{"repo":{"type":"string"}}}`),
		mk("github_createIssue", "Open a new issue.", `{"type":"object","properties":{"title":{"type":"string"}}}`),
		mk("fs_read_file", "Read a file.", `{"type":"object","properties":{"path":{"type":"string"}}}`),
		mk("fs_write_file", "Write a file.", `{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}}}`),
		mk("slack_post", "Post a message to a channel.", `{"type":"object","properties":{"channel":{"type":"string"},"text":{"type":"string"}}}`),
	}
	var x searchIndex
	rankTools := x.rankTools
	names := func(ts []*tool) []string {
		var out []string
		for _, t := range ts {
			out = append(out, t.name)
		}
		return out
	}
	assert.Equal(t, []string{"github_createIssue", "github_list_issues"}, names(rankTools(docs, "create issue", 5)), "camelCase split; the better match first")
	assert.Equal(t, []string{"fs_read_file", "fs_write_file"}, names(rankTools(docs, "FILE", 5)), "ties keep the catalogue's order")
	assert.Equal(t, []string{"slack_post"}, names(rankTools(docs, "channel", 5)), "parameter names count")
	assert.Equal(t, []string{"fs_read_file"}, names(rankTools(docs, "file path", 1)), "bounded")
	assert.Empty(t, rankTools(docs, "the a of", 5), "stop words match nothing")
	assert.Empty(t, rankTools(nil, "file", 5))
	for range 20 {
		assert.Equal(t, names(rankTools(docs, "write read file content", 5)), names(rankTools(docs, "write read file content", 5)), "deterministic")
	}
}

// Issue 35 #7: a word repeated in a part of a tool counts once there, and
// lengthens the tool: repeating a query's word does not outrank a tool
// that says it once.
func TestRankToolsRepeatsSaturate(t *testing.T) {
	mk := func(name, desc string) *tool {
		return &tool{name: name, description: desc, schema: compileSchema(json.RawMessage(`{"type":"object"}`))}
	}
	spam := mk("a_spam", strings.Repeat("issue tracker ", 100))
	honest := mk("b_tracker", "Open an issue in the tracker.")
	var x searchIndex
	assert.Equal(t, []*tool{honest, spam}, x.rankTools([]*tool{spam, honest}, "issue tracker", 5))
}

// The index reads a tool again when its description or parameters
// change, and keeps what it read otherwise.
func TestSearchIndexFollowsChanges(t *testing.T) {
	var x searchIndex
	schema := compileSchema(json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`))
	tl := &tool{name: "fs_read", description: "Read a file.", schema: schema}
	first := x.docs([]*tool{tl})[0]
	assert.Same(t, first, x.docs([]*tool{tl})[0], "an unchanged tool is not read again")
	assert.Equal(t, []*tool{tl}, x.rankTools([]*tool{tl}, "file", 5))

	changed := &tool{name: "fs_read", description: "Read a document.", schema: schema}
	assert.Equal(t, []*tool{changed}, x.rankTools([]*tool{changed}, "document", 5), "the new description is searched")
	assert.Empty(t, x.rankTools([]*tool{changed}, "file", 5), "the old one is not")

	params := &tool{name: "fs_read", description: "Read a document.", schema: compileSchema(json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"}}}`))}
	assert.Equal(t, []*tool{params}, x.rankTools([]*tool{params}, "url", 5), "new parameters are searched")
	assert.Empty(t, x.rankTools([]*tool{params}, "path", 5))
}

// The inverted index ranks as a straightforward ranking that reads every
// tool at every query, on a generated catalogue and random queries (150), with
// and without a server.
func TestRankToolsMatchesReference(t *testing.T) {
	vocab := []string{"create", "list", "issues", "issue", "file", "files", "readFile", "write", "page", "pages", "invoice",
		"export", "import", "the", "of", "a", "user", "users", "groupMember", "calendar", "event", "x", "ß", "Été", "42", "7"}
	rng := rand.New(rand.NewPCG(29, 2))
	phrase := func(n int) string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = vocab[rng.IntN(len(vocab))]
		}
		return strings.Join(ws, []string{" ", "_", ", ", "-"}[rng.IntN(4)])
	}
	servers := []string{"gh", "fs", "cal"}
	var docs []*tool
	for i := range 600 {
		params := `{"type":"object","properties":{"` + phrase(1) + `":{"type":"string"},"` + phrase(1) + `":{}}}`
		original := phrase(1 + rng.IntN(2)) // a query may name it
		docs = append(docs, &tool{name: fmt.Sprintf("t%d_%s", i, original), original: original, server: servers[rng.IntN(len(servers))],
			description: phrase(rng.IntN(12)), schema: compileSchema(json.RawMessage(params))})
	}
	var x searchIndex
	for range 150 {
		query, limit := phrase(1+rng.IntN(4)), 1+rng.IntN(MaxToolSearchResults)
		require.Equal(t, referenceRank(docs, query, limit), x.rankTools(docs, query, limit), "query %q, limit %d", query, limit)
		server := servers[rng.IntN(len(servers))]
		var of []*tool
		for _, d := range docs {
			if d.server == server {
				of = append(of, d)
			}
		}
		require.Equal(t, referenceRank(of, query, limit), x.inverted(docs).rank(query, server, limit), "query %q, server %s, limit %d", query, server, limit)
	}
	assert.Empty(t, x.inverted(docs).rank("issue", "nowhere", 5), "a server without tools")
}

// referenceRank is a search's ranking done the slow way: BM25 over docs,
// read whole at each call, a word counted once per part of a tool; sorted
// stably by name match, then score; then at most half the places, rounded
// up, to one server while others have matches, the places left to the
// best of those passed over.
func referenceRank(docs []*tool, query string, n int) []*tool {
	const k1, b = 1.2, 0.75
	terms := referenceWords(query)
	tfs := make([]map[string]int, len(docs))
	lengths := make([]int, len(docs))
	total := 0
	df := map[string]int{}
	for i, d := range docs {
		tfs[i] = map[string]int{}
		for _, part := range []string{d.name, d.description, d.schema.params} {
			ws := referenceWords(part)
			lengths[i] += len(ws)
			seen := map[string]bool{}
			for _, w := range ws {
				if !seen[w] {
					seen[w] = true
					tfs[i][w]++
				}
			}
		}
		total += lengths[i]
		for w := range tfs[i] {
			df[w]++
		}
	}
	avg := float64(total) / float64(max(len(docs), 1))
	sameWords := func(x, y string) bool {
		set := func(s string) map[string]bool {
			m := map[string]bool{}
			for _, w := range referenceWords(s) {
				m[w] = true
			}
			return m
		}
		return y != "" && maps.Equal(set(x), set(y))
	}
	q := strings.TrimSpace(query)
	type scored struct {
		t     *tool
		match int
		score float64
	}
	var hits []scored
	for i, d := range docs {
		s := 0.0
		for _, w := range terms {
			if tfs[i][w] == 0 {
				continue
			}
			tf := float64(tfs[i][w])
			idf := math.Log(1 + (float64(len(docs))-float64(df[w])+0.5)/(float64(df[w])+0.5))
			s += idf * tf * (k1 + 1) / (tf + k1*(1-b+b*float64(lengths[i])/max(avg, 1)))
		}
		if s == 0 {
			continue
		}
		match := 0
		switch {
		case strings.EqualFold(q, d.name):
			match = 3
		case d.original != "" && strings.EqualFold(q, d.original):
			match = 2
		case sameWords(query, d.name) || sameWords(query, d.original):
			match = 1
		}
		hits = append(hits, scored{d, match, s})
	}
	slices.SortStableFunc(hits, func(x, y scored) int {
		return cmp.Or(cmp.Compare(y.match, x.match), cmp.Compare(y.score, x.score))
	})
	picked := make([]bool, len(hits))
	taken := map[string]int{}
	count := 0
	for i, h := range hits {
		if count < n && taken[h.t.server] < (n+1)/2 {
			picked[i], count = true, count+1
			taken[h.t.server]++
		}
	}
	for i := range hits {
		if count < n && !picked[i] {
			picked[i], count = true, count+1
		}
	}
	out := []*tool{}
	for i, h := range hits {
		if picked[i] {
			out = append(out, h.t)
		}
	}
	return out
}

var referenceStopWords = map[string]bool{"the": true, "an": true, "of": true, "to": true, "and": true, "or": true, "in": true, "on": true,
	"for": true, "is": true, "it": true, "by": true, "with": true, "from": true, "this": true, "that": true}

// referenceWords is words, a rune at a time, with the stop words of a map.
func referenceWords(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if w := strings.ToLower(string(cur)); len(cur) > 1 && !referenceStopWords[w] {
			if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
				w = w[:len(w)-1]
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

func TestWordsMatchesReference(t *testing.T) {
	parts := []string{"a", "B", "ab", "Issues", "class", "readFile", "HTTPServer", "the", "THE", "x1", "42", "é", "É", "ßs", "İ", "ǅ",
		"日本", "\xff", "\xe2\x82", "\ufffd", " ", "_", "-", ".", "s", "ss", "\u0300",
		"of", "an", "With", "from", "This", "that", "and", "OR", "in", "on", "to", "is", "it", "by", "for", "withs", "ands"}
	rng := rand.New(rand.NewPCG(29, 3))
	for range 20_000 {
		var b strings.Builder
		for range rng.IntN(8) {
			if rng.IntN(4) == 0 { // any code point, ASCII half the time
				b.WriteRune(rune(rng.IntN([]int{utf8.RuneSelf, unicode.MaxRune + 1}[rng.IntN(2)])))
				continue
			}
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		require.Equal(t, referenceWords(b.String()), words(b.String()), "%q", b.String())
	}
}

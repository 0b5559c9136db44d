package config

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// decoder walks the yaml.Node tree and collects every problem with its
// position, instead of stopping at the first one as yaml.v3's strict
// decoding does.
type decoder struct {
	file     string
	problems []Problem
}

func (d *decoder) report(n *yaml.Node, field, format string, args ...any) {
	d.problems = append(d.problems, Problem{
		File:    d.file,
		Line:    n.Line,
		Column:  n.Column,
		Field:   field,
		Message: fmt.Sprintf(format, args...),
	})
}

// entry is one key/value pair of a mapping.
type entry struct {
	name     string
	key, val *yaml.Node
}

// is reports whether n is of the wanted kind, reporting it otherwise. Every
// value goes through is, so aliases are rejected everywhere.
func (d *decoder) is(n *yaml.Node, kind yaml.Kind, field, want string) bool {
	switch {
	case n.Kind == yaml.AliasNode:
		// Refusing aliases keeps the walk linear in the size of the file:
		// expanding them lets a small file describe a huge configuration.
		d.report(n, field, "aliases (*%s) are not supported; write the value out", n.Value)
	case isNull(n):
		d.report(n, field, "missing value (want %s)", want)
	case n.Kind == kind:
		return true
	default:
		d.report(n, field, "want %s, got %s", want, describe(n))
	}
	return false
}

// entries returns the pairs of mapping n in file order, reporting keys that
// are not strings, merge keys and duplicate keys.
func (d *decoder) entries(n *yaml.Node, field, want string) ([]entry, bool) {
	if !d.is(n, yaml.MappingNode, field, want) {
		return nil, false
	}
	out := make([]entry, 0, len(n.Content)/2)
	first := make(map[string]int, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch {
		case k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge":
			d.report(k, field, "merge keys (<<) are not supported; write the keys out")
			continue
		case k.Kind != yaml.ScalarNode || !isText(k):
			d.report(k, field, "want a string key, got %s", describe(k))
			continue
		}
		if line, dup := first[k.Value]; dup {
			d.report(k, join(field, k.Value), "duplicate key (first set at line %d)", line)
			continue
		}
		first[k.Value] = k.Line
		out = append(out, entry{name: k.Value, key: k, val: v})
	}
	return out, true
}

// fields returns the pairs of mapping n by key, reporting unknown keys.
func (d *decoder) fields(n *yaml.Node, field string, known []string) (map[string]entry, bool) {
	es, ok := d.entries(n, field, "a mapping")
	if !ok {
		return nil, false
	}
	out := make(map[string]entry, len(es))
	for _, e := range es {
		if !slices.Contains(known, e.name) {
			d.report(e.key, join(field, e.name), "unknown key %s%s", quote(e.name), hint(field, e.name, known))
			continue
		}
		out[e.name] = e
	}
	return out, true
}

// str returns the text of scalar n. Numbers and booleans are taken as
// written, so args: [--port, 8080] keeps "8080".
func (d *decoder) str(n *yaml.Node, field string) (string, bool) {
	return d.text(n, field, "a string")
}

// text is str with the wanted value described for messages.
func (d *decoder) text(n *yaml.Node, field, want string) (string, bool) {
	if !d.is(n, yaml.ScalarNode, field, want) {
		return "", false
	}
	if !isText(n) {
		d.report(n, field, "want %s, got %s", want, describe(n))
		return "", false
	}
	return n.Value, true
}

// required is str for values that must not be empty.
func (d *decoder) required(n *yaml.Node, field string) (string, bool) {
	s, ok := d.str(n, field)
	if ok && s == "" {
		d.report(n, field, "must not be empty")
		return "", false
	}
	return s, ok
}

func (d *decoder) boolean(n *yaml.Node, field string) bool {
	if !d.is(n, yaml.ScalarNode, field, "true or false") {
		return false
	}
	if n.ShortTag() == "!!bool" {
		switch strings.ToLower(n.Value) {
		case "true":
			return true
		case "false":
			return false
		}
	}
	d.report(n, field, "want true or false, got %s", quote(n.Value))
	return false
}

func (d *decoder) duration(n *yaml.Node, field string) time.Duration {
	s, ok := d.required(n, field)
	if !ok {
		return 0
	}
	v, err := time.ParseDuration(s)
	switch {
	case err != nil:
		d.report(n, field, "bad duration %s (want a Go duration such as 30s or 1m30s)", quote(s))
	case v <= 0:
		d.report(n, field, "duration %s must be positive", quote(s))
	}
	return v
}

// list decodes sequence n of strings, calling each with every string item
// and its path field[i]. It reports whether n is a sequence.
func (d *decoder) list(n *yaml.Node, field string, each func(s, at string, item *yaml.Node)) bool {
	if !d.is(n, yaml.SequenceNode, field, "a list of strings") {
		return false
	}
	for i, item := range n.Content {
		at := fmt.Sprintf("%s[%d]", field, i)
		if s, ok := d.str(item, at); ok {
			each(s, at, item)
		}
	}
	return true
}

// oneOf returns the value of n when it is one of allowed, reporting it as an
// unknown what otherwise.
func oneOf[T ~string](d *decoder, n *yaml.Node, field, what string, allowed ...T) T {
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = string(a)
	}
	want := names[len(names)-1]
	if len(names) > 1 {
		want = strings.Join(names[:len(names)-1], ", ") + " or " + want
	}
	s, ok := d.text(n, field, want)
	if !ok {
		return ""
	}
	for _, a := range allowed {
		if s == string(a) {
			return a
		}
	}
	d.report(n, field, "unknown %s %s (want %s)", what, quote(s), want)
	return ""
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// isText reports whether scalar n is plain data: a string, a number, a
// boolean or a timestamp, but not null, binary or a custom tag.
func isText(n *yaml.Node) bool {
	switch n.ShortTag() {
	case "!!str", "!!int", "!!float", "!!bool", "!!timestamp":
		return true
	}
	return false
}

// describe names the kind of n for "want X, got Y" messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	switch tag := n.ShortTag(); tag {
	case "!!null":
		return "nothing"
	case "!!str":
		return "a string"
	case "!!int", "!!float":
		return "a number"
	case "!!bool":
		return "a boolean"
	default:
		return "a value tagged " + quote(tag)
	}
}

// maxQuoted bounds how much of a value a message repeats.
const maxQuoted = 40

// quote quotes s for a message, shortened to maxQuoted characters.
func quote(s string) string {
	if utf8.RuneCountInString(s) <= maxQuoted {
		return fmt.Sprintf("%q", s)
	}
	r := []rune(s)
	return fmt.Sprintf("%q...", string(r[:maxQuoted]))
}

// join appends key to the path field: as .key when key is a plain word,
// as ["key"] otherwise so the path stays unambiguous.
func join(field, key string) string {
	if key == "" || strings.IndexFunc(key, func(r rune) bool { return !isWordRune(r) }) >= 0 {
		return field + "[" + quote(key) + "]"
	}
	if field == "" {
		return key
	}
	return field + "." + key
}

func isWordRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-'
}

// hint suggests a fix for the unknown key at field.
func hint(field, key string, known []string) string {
	norm := normalize(key)
	switch norm {
	case "token", "apikey", "password", "secret":
		return " (secrets do not belong in this file: put the token in an environment variable and name it with auth.tokenEnv)"
	}
	if field == "" && slices.Contains(mcpKeys, key) {
		return " (put it under mcp:)"
	}
	// Suggest the closest known key, if it is close: same letters once case,
	// _ and - are ignored, or a typo or two away in a longer key.
	best, bestDist := "", 3
	for _, k := range known {
		dist := distance(norm, normalize(k))
		if dist < bestDist && (dist == 0 || len(norm) > 3) {
			best, bestDist = k, dist
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", best)
}

// distance is the Levenshtein distance between a and b, in bytes.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// normalize folds case and drops _ and -, so that token_env, TokenEnv and
// tokenenv all match tokenEnv.
func normalize(s string) string {
	return strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(s))
}

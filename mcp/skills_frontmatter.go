package mcp

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// maxFrontmatterDepth bounds the nesting of a frontmatter.
const maxFrontmatterDepth = 32

// splitFrontmatter splits a SKILL.md into its YAML frontmatter and its
// body: a leading BOM is dropped, CRLF read as LF, the first line must be
// "---" and the YAML ends at the next line that is "---" (trailing blanks
// allowed).
func splitFrontmatter(data []byte) (yamlText, body string, err error) {
	if !utf8.Valid(data) {
		return "", "", errors.New("SKILL.md is not UTF-8")
	}
	s := strings.ReplaceAll(strings.TrimPrefix(string(data), "\uFEFF"), "\r\n", "\n")
	rest, ok := strings.CutPrefix(s, "---\n")
	if !ok {
		return "", "", errors.New("SKILL.md does not start with a --- line")
	}
	for off := 0; off <= len(rest); {
		end := strings.IndexByte(rest[off:], '\n')
		line := rest[off:]
		if end >= 0 {
			line = rest[off : off+end]
		}
		if strings.TrimRight(line, " \t") == "---" {
			b := ""
			if end >= 0 {
				b = rest[off+end+1:]
			}
			return rest[:off], b, nil
		}
		if end < 0 {
			break
		}
		off += end + 1
	}
	return "", "", errors.New("SKILL.md frontmatter has no closing --- line")
}

// ParseFrontmatter reads the frontmatter of a SKILL.md into its JSON
// rendering, typed as YAML 1.2 types it: what a server puts in a skill
// entry. Anchors, aliases, merge keys, custom tags and non-finite numbers
// have no JSON form and are refused.
func ParseFrontmatter(data []byte) (json.RawMessage, error) {
	text, _, err := splitFrontmatter(data)
	if err != nil {
		return nil, err
	}
	v, err := frontmatterValue(text)
	if err != nil {
		return nil, err
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, errors.New("SKILL.md frontmatter is not a mapping")
	}
	return json.Marshal(plainJSON(v))
}

// plainJSON turns the numbers of a frontmatter value back into JSON
// numbers, for encoding.
func plainJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = plainJSON(e)
		}
	case []any:
		for i, e := range x {
			x[i] = plainJSON(e)
		}
	case *big.Rat:
		if x.IsInt() {
			return json.Number(x.Num().String())
		}
		f, _ := x.Float64()
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
	}
	return v
}

// frontmatterValue decodes YAML text into JSON-like values: maps, slices,
// strings, bools, nil, and *big.Rat for numbers.
func frontmatterValue(text string) (any, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return nil, fmt.Errorf("SKILL.md frontmatter: %w", err)
	}
	if len(doc.Content) == 0 {
		return nil, errors.New("SKILL.md frontmatter is empty")
	}
	return yamlValue(doc.Content[0], 0)
}

func yamlValue(n *yaml.Node, depth int) (any, error) {
	if depth > maxFrontmatterDepth {
		return nil, errors.New("SKILL.md frontmatter is nested too deeply")
	}
	if n.Anchor != "" || n.Kind == yaml.AliasNode {
		return nil, fmt.Errorf("SKILL.md frontmatter line %d: anchors and aliases are not supported", n.Line)
	}
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode || k.Tag == "!!merge" {
				return nil, fmt.Errorf("SKILL.md frontmatter line %d: unsupported key", k.Line)
			}
			if _, dup := m[k.Value]; dup {
				return nil, fmt.Errorf("SKILL.md frontmatter line %d: duplicate key %q", k.Line, clip(k.Value, 40))
			}
			v, err := yamlValue(n.Content[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			m[k.Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		l := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := yamlValue(c, depth+1)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		return l, nil
	case yaml.ScalarNode:
		return yamlScalar(n)
	}
	return nil, fmt.Errorf("SKILL.md frontmatter line %d: unsupported YAML", n.Line)
}

func yamlScalar(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!str", "!!timestamp":
		return n.Value, nil // a timestamp has no JSON type: kept as written
	case "!!bool":
		var b bool
		err := n.Decode(&b)
		return b, err
	case "!!null":
		return nil, nil
	case "!!int":
		var i big.Int
		if _, ok := i.SetString(strings.ReplaceAll(n.Value, "_", ""), 0); ok {
			return new(big.Rat).SetInt(&i), nil
		}
		var v int64
		if err := n.Decode(&v); err != nil {
			return nil, fmt.Errorf("SKILL.md frontmatter line %d: integer %q", n.Line, clip(n.Value, 40))
		}
		return new(big.Rat).SetInt64(v), nil
	case "!!float":
		// The decimal as written is exact; a float64 is not (2.1).
		if r, ok := new(big.Rat).SetString(strings.ReplaceAll(n.Value, "_", "")); ok {
			return r, nil
		}
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, err
		}
		r := new(big.Rat)
		if r.SetFloat64(f) == nil { // NaN or ±Inf
			return nil, fmt.Errorf("SKILL.md frontmatter line %d: %q has no JSON form", n.Line, n.Value)
		}
		return r, nil
	}
	return nil, fmt.Errorf("SKILL.md frontmatter line %d: tag %s is not supported", n.Line, n.ShortTag())
}

// jsonValue decodes a JSON value into the same shapes as yamlValue.
func jsonValue(raw []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return ratNumbers(v), nil
}

func ratNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = ratNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = ratNumbers(e)
		}
	case json.Number:
		if r, ok := new(big.Rat).SetString(string(x)); ok {
			return r
		}
	}
	return v
}

// compareFrontmatter compares the entry's frontmatter with the one in
// data, field by field, without coercion (2.1 and "2.1" differ, a missing
// key and a null differ); it returns one line per difference, none when
// they are equal.
func compareFrontmatter(entry json.RawMessage, data []byte) []string {
	text, _, err := splitFrontmatter(data)
	if err != nil {
		return []string{err.Error()}
	}
	file, err := frontmatterValue(text)
	if err != nil {
		return []string{err.Error()}
	}
	want, err := jsonValue(entry)
	if err != nil {
		return []string{"entry frontmatter: " + err.Error()}
	}
	var diffs []string
	diffValues("", want, file, &diffs)
	const most = 10
	if len(diffs) > most {
		diffs = append(diffs[:most], fmt.Sprintf("and %d more", len(diffs)-most))
	}
	return diffs
}

func diffValues(path string, a, b any, out *[]string) {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := make([]string, 0, len(x)+len(y))
		for k := range x {
			keys = append(keys, k)
		}
		for k := range y {
			if _, ok := x[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := k
			if path != "" {
				p = path + "." + k
			}
			xv, inX := x[k]
			yv, inY := y[k]
			switch {
			case !inY:
				*out = append(*out, p+": missing in the file")
			case !inX:
				*out = append(*out, p+": not in the entry")
			default:
				diffValues(p, xv, yv, out)
			}
		}
		return
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			break
		}
		for i := range x {
			diffValues(fmt.Sprintf("%s[%d]", path, i), x[i], y[i], out)
		}
		return
	case *big.Rat:
		if y, ok := b.(*big.Rat); ok && x.Cmp(y) == 0 {
			return
		}
	default:
		if a == b {
			return
		}
	}
	*out = append(*out, fmt.Sprintf("%s: entry %s, file %s", cmp.Or(path, "(root)"), shown(a), shown(b)))
}

// shown renders a value of a difference, clipped: the file may be hostile.
func shown(v any) string {
	if r, ok := v.(*big.Rat); ok {
		return r.RatString()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return clip(string(b), 60)
}

package mcp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// headerParam is a tool argument mirrored into an Mcp-Param-{Name} header
// (x-mcp-header, 2026-07-28). It is computed once, when tools are listed.
type headerParam struct {
	name string   // header suffix as the schema spells it
	path []string // properties path from the root of the arguments
}

// maxSafeInteger is the largest integer a header may carry (±(2^53−1)).
const maxSafeInteger = 1<<53 - 1

// toolHeaders validates the x-mcp-header annotations of a tool's input
// schema and returns the header parameters, sorted by path. A tool whose
// annotations are invalid must not be offered: the error says why.
func toolHeaders(schema json.RawMessage) ([]headerParam, error) {
	if !bytes.Contains(schema, []byte(`"x-mcp-header"`)) {
		return nil, nil
	}
	var root any
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	w := headerWalker{seen: map[string]bool{}}
	w.walk(root, nil, true)
	if w.err != nil {
		return nil, w.err
	}
	sort.Slice(w.params, func(i, j int) bool {
		return strings.Join(w.params[i].path, "\x00") < strings.Join(w.params[j].path, "\x00")
	})
	return w.params, nil
}

type headerWalker struct {
	params []headerParam
	seen   map[string]bool // lower-cased names
	err    error
}

// walk visits every schema node; reachable says the node is reached from
// the root through "properties" keys only.
func (w *headerWalker) walk(node any, path []string, reachable bool) {
	if w.err != nil {
		return
	}
	switch n := node.(type) {
	case []any:
		for _, e := range n {
			w.walk(e, path, false)
		}
	case map[string]any:
		if v, ok := n["x-mcp-header"]; ok {
			w.check(n, v, path, reachable)
		}
		keys := make([]string, 0, len(n))
		for k := range n {
			keys = append(keys, k)
		}
		sort.Strings(keys) // deterministic first error
		for _, k := range keys {
			switch k {
			case "const", "default", "enum", "examples":
				continue // data, not schemas
			}
			if k == "properties" && reachable {
				if props, ok := n[k].(map[string]any); ok {
					names := make([]string, 0, len(props))
					for p := range props {
						names = append(names, p)
					}
					sort.Strings(names)
					for _, p := range names {
						w.walk(props[p], append(path[:len(path):len(path)], p), true)
					}
					continue
				}
			}
			w.walk(n[k], path, false)
		}
	}
}

func (w *headerWalker) check(prop map[string]any, v any, path []string, reachable bool) {
	where := "/" + strings.Join(path, "/")
	name, ok := v.(string)
	switch {
	case !ok:
		w.err = fmt.Errorf("x-mcp-header at %s is not a string", where)
	case name == "":
		w.err = fmt.Errorf("x-mcp-header at %s is empty", where)
	case !isToken(name):
		w.err = fmt.Errorf("x-mcp-header %q at %s is not an HTTP token", name, where)
	case !reachable || len(path) == 0:
		w.err = fmt.Errorf("x-mcp-header %q at %s is not on a property reached through properties only", name, where)
	case w.seen[strings.ToLower(name)]:
		w.err = fmt.Errorf("x-mcp-header %q at %s is not unique", name, where)
	case !headerType(prop["type"]):
		w.err = fmt.Errorf("x-mcp-header %q at %s: property type must be string, integer or boolean", name, where)
	default:
		w.seen[strings.ToLower(name)] = true
		w.params = append(w.params, headerParam{name: name, path: path})
	}
}

// headerType accepts string, integer or boolean, alone or with "null".
func headerType(t any) bool {
	prim := func(s any) bool { return s == "string" || s == "integer" || s == "boolean" }
	switch t := t.(type) {
	case string:
		return prim(t)
	case []any:
		n := 0
		for _, e := range t {
			switch {
			case e == "null":
			case prim(e):
				n++
			default:
				return false
			}
		}
		return n == 1
	}
	return false
}

// isToken reports whether s is an RFC 9110 token.
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			continue
		}
		if !strings.ContainsRune("!#$%&'*+-.^_`|~", rune(c)) {
			return false
		}
	}
	return s != ""
}

// paramHeaders extracts the header values of params from the serialized
// arguments, so headers always agree with the body.
func paramHeaders(params []headerParam, args json.RawMessage) ([]header, error) {
	out := make([]header, 0, len(params))
	for _, p := range params {
		raw, ok := lookup(args, p.path)
		if !ok || bytes.Equal(raw, []byte("null")) {
			continue
		}
		v, err := headerScalar(raw)
		if err != nil {
			return nil, fmt.Errorf("argument %s (header Mcp-Param-%s): %w", strings.Join(p.path, "."), p.name, err)
		}
		out = append(out, header{"Mcp-Param-" + p.name, encodeHeaderValue(v)})
	}
	return out, nil
}

// lookup finds the value at a properties path in a JSON object.
func lookup(doc json.RawMessage, path []string) (json.RawMessage, bool) {
	cur := doc
	for _, k := range path {
		var obj map[string]json.RawMessage
		if json.Unmarshal(cur, &obj) != nil {
			return nil, false
		}
		v, ok := obj[k]
		if !ok {
			return nil, false
		}
		cur = v
	}
	return cur, true
}

// headerScalar converts a JSON string, integer or boolean to header text.
func headerScalar(raw json.RawMessage) (string, error) {
	switch raw[0] {
	case '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	case 't', 'f':
		return string(raw), nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var n json.Number
	if err := d.Decode(&n); err != nil {
		return "", fmt.Errorf("value %s is not a string, integer or boolean", clip(string(raw), 40))
	}
	i, err := n.Int64()
	if err != nil {
		return "", fmt.Errorf("value %s is not an integer", n)
	}
	if i > maxSafeInteger || i < -maxSafeInteger {
		return "", fmt.Errorf("integer %d is outside ±(2^53-1)", i)
	}
	return n.String(), nil
}

// encodeHeaderValue returns v as is when it is safe in a header, else in
// the =?base64?…?= form: non-ASCII, control characters, leading or trailing
// white space, and values that look like the sentinel themselves.
func encodeHeaderValue(v string) string {
	if !headerSafe(v) {
		return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?="
	}
	return v
}

func headerSafe(v string) bool {
	if strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?=") {
		return false
	}
	if v != strings.Trim(v, " \t") {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if (c < 0x21 || c > 0x7e) && c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}

package agent

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
)

// Limits of the schema projection: parts nested deeper than
// maxSchemaDepth, or beyond the size budget, are replaced by the empty
// schema. The budget lets references expand a schema up to four times its
// size, and at least to minSchemaBudget bytes; a projection still over
// maxProjectedSchema (one huge value) is the empty object schema.
const (
	maxSchemaDepth     = 32
	minSchemaBudget    = 64 << 10
	maxProjectedSchema = 512 << 10
)

// projectSchema returns the schema shown to the model for a tool whose
// input schema is raw: a conservative subset of JSON Schema that the
// grammar and template code of local servers (llama-server's
// json-schema-to-grammar, Ollama's tool templates) accepts.
//
//   - Local references ($ref "#/$defs/x", "#/definitions/x", any JSON
//     pointer into the schema) are inlined, and $defs dropped; a recursive
//     reference, a remote one or one that leads nowhere becomes the empty
//     schema.
//   - Only these keywords are kept: type, properties, required, items,
//     prefixItems, additionalProperties, enum, const, anyOf, oneOf, allOf,
//     minimum, maximum, minItems, maxItems, minLength, maxLength, default,
//     description, and format when it is date, time, date-time or uuid.
//     Everything else ($schema, $id, $comment, title, examples, pattern,
//     other formats, not, if/then/else, patternProperties, dependencies,
//     unevaluated*, vendor extensions, ...) is dropped. A dropped pattern or
//     format is mentioned in the description instead, so the model still
//     learns of it.
//   - "null" is removed from types, enums, anyOf and oneOf: optional fields
//     the model leaves out need no null, and a null it sends anyway for an
//     optional field is dropped before validation. An anyOf, oneOf or allOf
//     left with one branch is merged into its parent.
//   - The root is an object schema with properties, as OpenAI-compatible
//     servers require.
//
// Validation still uses the tool's own schema. Invalid JSON gives the
// schema of an object with no declared properties. cut reports that parts
// were left out to respect the limits.
func projectSchema(raw []byte) (projected []byte, cut bool) {
	root, err := decodeJSON(raw)
	if err != nil {
		root = nil
	}
	p := projector{root: root, budget: max(4*len(raw), minSchemaBudget)}
	out, ok := p.project(root, 0).(*jsonObject)
	if !ok {
		out = newObject()
	}
	if _, ok := out.get("type"); !ok {
		out.set("type", "object")
	}
	if _, ok := out.get("properties"); !ok {
		out.set("properties", newObject())
	}
	if b := encodeJSON(out); len(b) <= maxProjectedSchema {
		return b, p.cut
	}
	return []byte(`{"type":"object","properties":{}}`), true
}

type projector struct {
	root   any
	refs   []string // references being inlined, to stop recursion
	budget int      // bytes the projection may take
	size   int      // bytes taken so far, roughly
	cut    bool     // something was left out
}

// keptFormats are the formats llama-server turns into grammar rules.
var keptFormats = map[string]bool{"date": true, "time": true, "date-time": true, "uuid": true}

func (p *projector) project(v any, depth int) any {
	o, ok := v.(*jsonObject)
	if !ok {
		if _, isBool := v.(bool); isBool {
			return v // true and false are schemas too
		}
		return newObject()
	}
	if depth > maxSchemaDepth || p.size > p.budget {
		p.cut = true
		return newObject()
	}
	p.size += 2
	if ref, ok := o.vals["$ref"].(string); ok {
		return p.inline(o, ref, depth)
	}
	out := newObject()
	var hints []string
	for _, k := range o.keys {
		val := o.vals[k]
		p.size += len(k) + 4
		switch k {
		case "type":
			if t, ok := withoutNullType(val); ok {
				out.set(k, t)
			}
		case "properties":
			if props, ok := val.(*jsonObject); ok {
				po := newObject()
				for _, name := range props.keys {
					po.set(name, p.project(props.vals[name], depth+1))
				}
				out.set(k, po)
			}
		case "items", "additionalProperties":
			if arr, ok := val.([]any); ok { // draft-07 tuple items
				out.set(k, p.projectAll(arr, depth))
			} else {
				out.set(k, p.project(val, depth+1))
			}
		case "prefixItems":
			if arr, ok := val.([]any); ok {
				out.set(k, p.projectAll(arr, depth))
			}
		case "anyOf", "oneOf", "allOf":
			if arr, ok := val.([]any); ok {
				out.set(k, p.projectAll(withoutNullSchemas(arr), depth))
			}
		case "enum":
			if arr, ok := val.([]any); ok {
				p.size += weight(arr)
				out.set(k, withoutNulls(arr))
			}
		case "required", "const", "default", "description",
			"minimum", "maximum", "minItems", "maxItems", "minLength", "maxLength":
			p.size += weight(val)
			out.set(k, val)
		case "format":
			if f, ok := val.(string); ok && keptFormats[f] {
				out.set(k, f)
			} else if ok {
				hints = append(hints, "format: "+f)
			}
		case "pattern":
			if s, ok := val.(string); ok {
				hints = append(hints, "pattern: "+s)
			}
		}
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		p.simplify(out, k)
	}
	if len(hints) > 0 {
		desc, _ := out.vals["description"].(string)
		if desc != "" {
			desc += " "
		}
		out.set("description", desc+"("+strings.Join(hints, "; ")+")")
	}
	return out
}

// weight is about the size of v encoded.
func weight(v any) int {
	switch t := v.(type) {
	case string:
		return len(t) + 2
	case json.Number:
		return len(t)
	case []any:
		n := 2
		for _, e := range t {
			n += weight(e) + 1
		}
		return n
	case *jsonObject:
		n := 2
		for _, k := range t.keys {
			n += len(k) + 4 + weight(t.vals[k])
		}
		return n
	}
	return 5 // true, false, null
}

func (p *projector) projectAll(arr []any, depth int) []any {
	out := make([]any, len(arr))
	for i, e := range arr {
		out[i] = p.project(e, depth+1)
	}
	return out
}

// inline replaces a reference by the schema it names, projected; the
// keywords beside $ref apply too, and win.
func (p *projector) inline(o *jsonObject, ref string, depth int) any {
	var target *jsonObject
	if strings.HasPrefix(ref, "#") && !p.inlining(ref) {
		target, _ = pointer(p.root, ref[1:]).(*jsonObject)
	}
	var out *jsonObject
	if target != nil {
		p.refs = append(p.refs, ref)
		out, _ = p.project(target, depth+1).(*jsonObject)
		p.refs = p.refs[:len(p.refs)-1]
	}
	if out == nil {
		out = newObject()
	}
	siblings := newObject()
	for _, k := range o.keys {
		if k != "$ref" {
			siblings.set(k, o.vals[k])
		}
	}
	if len(siblings.keys) > 0 {
		projected, _ := p.project(siblings, depth+1).(*jsonObject)
		for _, k := range projected.keys {
			out.set(k, projected.vals[k])
		}
	}
	return out
}

func (p *projector) inlining(ref string) bool {
	for _, r := range p.refs {
		if r == ref {
			return true
		}
	}
	return false
}

// simplify merges into out the single branch left in out[k] (anyOf,
// oneOf, allOf) once null branches are gone; out's own keywords win.
func (p *projector) simplify(out *jsonObject, k string) {
	arr, ok := out.vals[k].([]any)
	if !ok {
		return
	}
	switch len(arr) {
	case 0:
		out.del(k)
	case 1:
		out.del(k)
		if branch, ok := arr[0].(*jsonObject); ok {
			for _, bk := range branch.keys {
				if _, taken := out.vals[bk]; !taken {
					out.set(bk, branch.vals[bk])
				}
			}
		}
	}
}

// withoutNullSchemas drops the branches that only allow null.
func withoutNullSchemas(arr []any) []any {
	var kept []any
	for _, b := range arr {
		if o, ok := b.(*jsonObject); !ok || o.vals["type"] != "null" {
			kept = append(kept, b)
		}
	}
	return kept
}

// withoutNullType removes "null" from a type; a type that was only null
// is dropped.
func withoutNullType(t any) (any, bool) {
	switch v := t.(type) {
	case string:
		return v, v != "null"
	case []any:
		kept := withoutNulls(v)
		var types []any
		for _, e := range kept {
			if s, ok := e.(string); ok && s != "null" {
				types = append(types, s)
			}
		}
		switch len(types) {
		case 0:
			return nil, false
		case 1:
			return types[0], true
		}
		return types, true
	}
	return nil, false
}

func withoutNulls(arr []any) []any {
	out := make([]any, 0, len(arr))
	for _, e := range arr {
		if e != nil {
			out = append(out, e)
		}
	}
	return out
}

// pointer follows a JSON pointer (RFC 6901, as a URI fragment) from root;
// it returns nil when the pointer leads nowhere.
func pointer(root any, frag string) any {
	frag, err := url.PathUnescape(frag)
	if err != nil {
		return nil
	}
	if frag == "" {
		return root
	}
	if !strings.HasPrefix(frag, "/") {
		return nil // an anchor, not a pointer
	}
	cur := root
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch c := cur.(type) {
		case *jsonObject:
			cur = c.vals[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	return cur
}

package agent

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// typeAliases maps the type names tool authors write by mistake
// (programming-language names, capitals, stray spaces, once lower-cased
// and trimmed) to JSON Schema types. llama-server cannot turn a schema
// with any other type into a grammar, and rejects every request that
// carries the tool.
var typeAliases = map[string]string{
	"string": "string", "str": "string",
	"number": "number", "float": "number", "float32": "number", "float64": "number", "double": "number", "decimal": "number",
	"integer": "integer", "int": "integer", "int32": "integer", "int64": "integer", "long": "integer",
	"boolean": "boolean", "bool": "boolean",
	"object": "object", "array": "array", "null": "null",
}

// Keywords whose value is a schema, a map of schemas, or a list of schemas:
// where fixTypes looks for types.
var (
	schemaKeywords = []string{"items", "additionalProperties", "additionalItems", "not", "if", "then", "else",
		"contains", "propertyNames", "unevaluatedItems", "unevaluatedProperties"}
	schemaMapKeywords  = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
	schemaListKeywords = []string{"prefixItems", "anyOf", "oneOf", "allOf", "items"}
)

// fixTypes rewrites, in place, the types of the schema v that are not JSON
// Schema types: an alias in typeAliases becomes its type, anything else is
// dropped (a "type" left with no valid name is removed, which allows any
// value). It returns what it changed, one line per distinct change, such
// as `"float" → "number"`, in the order met.
func fixTypes(v any) []string {
	var fixes []string
	note := func(s string) {
		if !slices.Contains(fixes, s) {
			fixes = append(fixes, s)
		}
	}
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		o, ok := v.(*jsonObject)
		if !ok || depth > maxSchemaDepth {
			return
		}
		if t, ok := o.vals["type"]; ok {
			if fixed, keep := fixType(t, note); keep {
				o.set("type", fixed)
			} else {
				o.del("type")
			}
		}
		for _, k := range schemaKeywords {
			walk(o.vals[k], depth+1)
		}
		for _, k := range schemaMapKeywords {
			if m, ok := o.vals[k].(*jsonObject); ok {
				for _, name := range m.keys {
					walk(m.vals[name], depth+1)
				}
			}
		}
		for _, k := range schemaListKeywords {
			if arr, ok := o.vals[k].([]any); ok {
				for _, e := range arr {
					walk(e, depth+1)
				}
			}
		}
	}
	walk(v, 0)
	return fixes
}

// fixType fixes one "type" value: a name or a list of names. keep is false
// when nothing valid is left.
func fixType(t any, note func(string)) (fixed any, keep bool) {
	one := func(name string) (string, bool) {
		canon, ok := typeAliases[strings.ToLower(strings.TrimSpace(name))]
		switch {
		case !ok:
			note(fmt.Sprintf("%s dropped", quote(name)))
		case canon != name:
			note(fmt.Sprintf("%s → %q", quote(name), canon))
		}
		return canon, ok
	}
	switch v := t.(type) {
	case string:
		return one(v)
	case []any:
		var names []any
		for _, e := range v {
			s, isString := e.(string)
			if !isString {
				note(fmt.Sprintf("%s dropped", encodeJSON(e)))
				continue
			}
			if canon, ok := one(s); ok && !slices.Contains(names, any(canon)) {
				names = append(names, canon)
			}
		}
		return names, len(names) > 0
	}
	note(fmt.Sprintf("%s dropped", encodeJSON(t)))
	return nil, false
}

func quote(s string) string {
	b, _ := json.Marshal(clip(s, 40))
	return string(b)
}

// fixRoot makes the schema v an object schema when its type does not
// allow an object: tool arguments are always an object, and
// OpenAI-compatible servers reject a tool whose parameters are not. The
// root is then replaced by an object schema with no declared properties
// that keeps the description, and fixRoot returns what it changed, such
// as `root "string" → "object"`; else "". A root type listing "object"
// among other types than null becomes "object".
func fixRoot(v any) string {
	o, ok := v.(*jsonObject)
	if !ok {
		return ""
	}
	t, ok := o.vals["type"]
	if !ok || t == "object" {
		return ""
	}
	note := fmt.Sprintf("root %s → %q", encodeJSON(t), "object")
	if names, ok := t.([]any); ok && slices.Contains(names, any("object")) {
		if len(withoutNullNames(names)) == 1 {
			return "" // ["object","null"]: the projection drops null
		}
		o.set("type", "object")
		return note
	}
	desc, hasDesc := o.vals["description"]
	o.keys, o.vals = nil, map[string]any{}
	o.set("type", "object")
	if hasDesc {
		o.set("description", desc)
	}
	o.set("properties", newObject())
	return note
}

func withoutNullNames(names []any) []any {
	return slices.DeleteFunc(slices.Clone(names), func(n any) bool { return n == "null" })
}

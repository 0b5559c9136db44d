package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// toolSchema is a tool's input schema made ready for use: the projection
// shown to the model, and the original, resolved for validation.
type toolSchema struct {
	projected json.RawMessage
	cut       bool // the projection left parts out (see projectSchema)
	// fixes lists the types that were not JSON Schema types, and what
	// became of them (see fixTypes), then a root type that was not
	// "object" (see fixRoot); both the projection and validation use the
	// fixed schema.
	fixes []string
	// resolved validates arguments; nil when the schema cannot be used,
	// and err says why. loose is the same schema without the root's
	// required list: it checks the members one at a time, to report every
	// problem of a call (see problems).
	resolved, loose *jsonschema.Resolved
	err             error
	required        []string // the root's required properties
	// params are the names of the projection's top-level properties,
	// sorted, joined by spaces: what a tool search reads of the schema,
	// decoded once rather than at every search.
	params string
}

// supportedDrafts are the $schema values jsonschema-go validates; a schema
// that names another draft is validated under 2020-12 rules, which agree
// with every draft since 6 on the keywords tools use.
var supportedDrafts = map[string]bool{
	"": true,
	"http://json-schema.org/draft-07/schema#":      true,
	"https://json-schema.org/draft-07/schema#":     true,
	"https://json-schema.org/draft/2020-12/schema": true,
}

func compileSchema(raw json.RawMessage) *toolSchema {
	ts := &toolSchema{}
	if root, err := decodeJSON(raw); err == nil {
		ts.fixes = fixTypes(root)
		if note := fixRoot(root); note != "" {
			ts.fixes = append(ts.fixes, note)
		}
		if len(ts.fixes) > 0 {
			raw = encodeJSON(root)
		}
	}
	ts.projected, ts.cut = projectSchema(raw)
	ts.params = strings.Join(paramNames(ts.projected), " ")
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		ts.err = fmt.Errorf("agent: input schema: %w", err)
		return ts
	}
	if !supportedDrafts[s.Schema] {
		s.Schema = ""
	}
	resolved, err := s.Resolve(nil)
	if err != nil {
		ts.err = fmt.Errorf("agent: input schema: %w", err)
		return ts
	}
	ts.resolved, ts.required = resolved, s.Required
	var loose jsonschema.Schema
	if json.Unmarshal(raw, &loose) == nil {
		loose.Schema, loose.Required = s.Schema, nil
		ts.loose, _ = loose.Resolve(nil) // left nil on an error: problems then tells err alone
	}
	return ts
}

// checkArgs turns the arguments the model sent into those sent to the tool.
// Empty arguments and null stand for {}; what repairArgs repairs is
// repaired; null members that the schema does not require are dropped
// (small models send null for optional fields they leave out). repairs
// says what was changed. problem is what to tell the model when the
// arguments are not acceptable: arguments that only a repair would make
// acceptable, but that the schema rejects once repaired, are told as
// sent. key identifies the call's arguments for repeat detection (object
// keys sorted).
func (ts *toolSchema) checkArgs(args string) (clean json.RawMessage, key string, repairs []string, problem string) {
	trimmed := bytes.TrimSpace([]byte(args))
	if len(trimmed) == 0 || string(trimmed) == "null" {
		trimmed = []byte("{}")
	}
	trimmed, repairs = repairArgs(trimmed)
	var members map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &members); err != nil || members == nil {
		if json.Valid(trimmed) {
			return nil, "", nil, "the arguments must be a JSON object"
		}
		return nil, "", nil, "the arguments are not valid JSON: " + clip(args, 500)
	}
	var dropped []string
	for name, v := range members {
		if string(v) == "null" && !slices.Contains(ts.required, name) {
			delete(members, name)
			dropped = append(dropped, name)
		}
	}
	clean = json.RawMessage(trimmed)
	if len(dropped) > 0 {
		clean, _ = json.Marshal(members) // raw members re-encode as they are
		slices.Sort(dropped)
		for _, name := range dropped {
			repairs = append(repairs, fmt.Sprintf("null dropped for optional %s", quote(name)))
		}
	}
	var instance any
	if err := json.Unmarshal(clean, &instance); err != nil {
		return nil, "", nil, "the arguments are not valid JSON: " + clip(args, 500)
	}
	if ts.resolved != nil {
		if err := ts.resolved.Validate(instance); err != nil {
			if len(repairs) > 0 && !isObject(args) {
				return nil, "", nil, "the arguments are not a valid JSON object: " + clip(args, 500)
			}
			return nil, "", nil, ts.problems(instance, err)
		}
	}
	canon, _ := json.Marshal(instance) // maps marshal with sorted keys
	return compact(clean), string(canon), repairs, ""
}

// maxProblems bounds the problems of one call told to the model.
const maxProblems = 8

// problems tells every problem of the arguments instance, which failed
// validation with err: the required members missing, then each member
// that fails on its own, in name order, at most maxProblems. A problem no
// single member shows (such as one between members) is told as err.
func (ts *toolSchema) problems(instance any, err error) string {
	members, _ := instance.(map[string]any)
	var list []string
	for _, name := range ts.required {
		if _, ok := members[name]; !ok && members != nil {
			list = append(list, fmt.Sprintf("missing required property %q", clip(name, 100)))
		}
	}
	if ts.loose != nil {
		names := slices.Sorted(maps.Keys(members))
		for _, name := range names {
			if err := ts.loose.Validate(map[string]any{name: members[name]}); err != nil {
				list = append(list, clip(strings.TrimPrefix(err.Error(), "validating root: "), 300))
			}
		}
	}
	if len(list) == 0 {
		return "the arguments do not match the tool's input schema: " + clip(err.Error(), 1000)
	}
	n := len(list)
	text := strings.Join(list[:min(n, maxProblems)], "; ")
	if n > maxProblems {
		text += fmt.Sprintf("; and %d more", n-maxProblems)
	}
	if n == 1 {
		return "the arguments do not match the tool's input schema: " + text
	}
	return fmt.Sprintf("the arguments do not match the tool's input schema (%d problems): %s", n, text)
}

func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// schemaCache holds compiled schemas by their text, so a tool's schema is
// compiled once, not once per turn. It is bounded: when full it starts
// over, which only costs recompiling.
type schemaCache struct {
	mu sync.Mutex
	m  map[string]*toolSchema
}

const maxCachedSchemas = 1024

func (c *schemaCache) get(raw json.RawMessage) *toolSchema {
	c.mu.Lock()
	ts, ok := c.m[string(raw)]
	c.mu.Unlock()
	if ok {
		return ts
	}
	ts = compileSchema(raw)
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCachedSchemas {
		c.m = map[string]*toolSchema{}
	}
	c.m[string(raw)] = ts
	c.mu.Unlock()
	return ts
}

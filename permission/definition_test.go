package permission

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDefinitionMatches(t *testing.T) {
	base := Request{
		Server: "s", Tool: "t", PrefixedName: "s_t",
		Title: "T", Description: "D",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","maximum":9007199254740993}}}`),
		Arguments:   json.RawMessage(`{"n":1}`),
		Annotations: Annotations{ReadOnlyHint: ptr(true)},
	}
	def := definitionOf(&base, fingerprintOf(&base, base.InputSchema))
	same := func(mod func(*Request)) bool {
		r := base
		mod(&r)
		return def.matches(&r, fingerprintOf(&r, r.InputSchema))
	}
	// Not part of the definition, or the same definition written differently.
	assert.True(t, same(func(r *Request) { r.Arguments = json.RawMessage(`{"n":2}`) }), "arguments")
	assert.True(t, same(func(r *Request) { r.Changed = true }), "Changed")
	assert.True(t, same(func(r *Request) { r.PrefixedName = "other" }), "prefixed name")
	assert.True(t, same(func(r *Request) {
		r.InputSchema = json.RawMessage("{\n \"properties\": {\"n\": {\"maximum\": 9007199254740993, \"type\": \"integer\"}},\n \"type\": \"object\"\n}")
	}), "schema rewritten")
	// Changes.
	assert.False(t, same(func(r *Request) { r.Title = "T2" }), "title")
	assert.False(t, same(func(r *Request) { r.Description = "D2" }), "description")
	assert.False(t, same(func(r *Request) {
		r.InputSchema = json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","maximum":9007199254740992}}}`)
	}), "a number beyond float64 precision")
	assert.False(t, same(func(r *Request) { r.InputSchema = nil }), "schema removed")
	assert.False(t, same(func(r *Request) { r.Annotations.ReadOnlyHint = ptr(false) }), "hint flipped")
	assert.False(t, same(func(r *Request) { r.Annotations.ReadOnlyHint = nil }), "hint removed, though its default is false")
	assert.False(t, same(func(r *Request) { r.Annotations.OpenWorldHint = ptr(true) }), "hint added")
	// Field boundaries matter: moving text from the title to the description is a change.
	assert.False(t, same(func(r *Request) { r.Title, r.Description = "TD", "" }), "field boundary")
}

func TestCanonicalJSON(t *testing.T) {
	for in, want := range map[string]string{
		``:                     ``,
		`{"b":1,"a":[1.0, 2]}`: `{"a":[1.0,2],"b":1}`,
		`{"a":1} {"b":2}`:      `{"a":1} {"b":2}`, // two values: left as is
		`{"a":`:                `{"a":`,
		` "x" `:                `"x"`,
		`{"a":"<&>"}`:          `{"a":"\u003c\u0026\u003e"}`,
	} {
		assert.Equal(t, want, string(canonicalJSON([]byte(in))), in)
	}
}

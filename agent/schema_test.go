package agent

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestProjectSchema(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{
			name: "drops $schema, title and unsupported keywords, keeps order and descriptions",
			in: `{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"urn:x","title":"Args","type":"object",
				"properties":{"zeta":{"type":"string","title":"Zeta","description":"last letter","examples":["z"],"x-vendor":1},
				"alpha":{"type":"integer","exclusiveMinimum":0,"multipleOf":2,"minimum":1}},
				"required":["zeta"],"additionalProperties":false,"patternProperties":{"^x":{}},"if":{},"then":{},"not":{}}`,
			want: `{"type":"object","properties":{"zeta":{"type":"string","description":"last letter"},"alpha":{"type":"integer","minimum":1}},"required":["zeta"],"additionalProperties":false}`,
		},
		{
			name: "inlines local references and drops $defs",
			in: `{"type":"object","$defs":{"Point":{"type":"object","properties":{"x":{"type":"number"}},"required":["x"]}},
				"definitions":{"Name":{"type":"string","minLength":1}},
				"properties":{"p":{"$ref":"#/$defs/Point","description":"where"},"n":{"$ref":"#/definitions/Name"},
				"q":{"$ref":"#/properties/n"},"bad":{"$ref":"#/$defs/Missing"},"remote":{"$ref":"https://example.com/s.json"}}}`,
			want: `{"type":"object","properties":{"p":{"type":"object","properties":{"x":{"type":"number"}},"required":["x"],"description":"where"},
				"n":{"type":"string","minLength":1},"q":{"type":"string","minLength":1},"bad":{},"remote":{}}}`,
		},
		{
			name: "recursive references stop",
			in:   `{"type":"object","$defs":{"Node":{"type":"object","properties":{"next":{"$ref":"#/$defs/Node"},"v":{"type":"integer"}}}},"properties":{"head":{"$ref":"#/$defs/Node"},"self":{"$ref":"#"}}}`,
			want: `{"type":"object","properties":{"head":{"type":"object","properties":{"next":{},"v":{"type":"integer"}}},
				"self":{"type":"object","properties":{"head":{"type":"object","properties":{"next":{},"v":{"type":"integer"}}},"self":{}}}}}`,
		},
		{
			name: "nulls removed; single branches merged",
			in: `{"type":"object","properties":{
				"a":{"anyOf":[{"type":"string"},{"type":"null"}],"default":null,"description":"optional a"},
				"b":{"type":["integer","null"]},
				"c":{"enum":["x","y",null]},
				"d":{"oneOf":[{"type":"string"},{"type":"integer"},{"type":"null"}]},
				"e":{"allOf":[{"$ref":"#/$defs/E"}],"description":"mine"},
				"f":{"type":"null"}},
				"$defs":{"E":{"type":"string","description":"theirs","enum":["on","off"]}}}`,
			want: `{"type":"object","properties":{
				"a":{"default":null,"description":"optional a","type":"string"},
				"b":{"type":"integer"},
				"c":{"enum":["x","y"]},
				"d":{"oneOf":[{"type":"string"},{"type":"integer"}]},
				"e":{"description":"mine","type":"string","enum":["on","off"]},
				"f":{}}}`,
		},
		{
			name: "formats and patterns",
			in:   `{"type":"object","properties":{"when":{"type":"string","format":"date-time"},"site":{"type":"string","format":"uri","description":"home page"},"code":{"type":"string","pattern":"^[A-Z]{3}$"}}}`,
			want: `{"type":"object","properties":{"when":{"type":"string","format":"date-time"},"site":{"type":"string","description":"home page (format: uri)"},"code":{"type":"string","description":"(pattern: ^[A-Z]{3}$)"}}}`,
		},
		{
			name: "arrays and tuples",
			in:   `{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string","title":"Tag"},"minItems":1,"uniqueItems":true,"contains":{"const":"a"}},"pair":{"type":"array","items":[{"type":"string"},{"type":"number"}]},"t":{"prefixItems":[{"type":"boolean"}]}}}`,
			want: `{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"},"minItems":1},"pair":{"type":"array","items":[{"type":"string"},{"type":"number"}]},"t":{"prefixItems":[{"type":"boolean"}]}}}`,
		},
		{name: "empty object schema gets properties", in: `{"type":"object"}`, want: `{"type":"object","properties":{}}`},
		{name: "no type", in: `{"properties":{"a":true}}`, want: `{"properties":{"a":true},"type":"object"}`},
		{name: "invalid JSON", in: `{"type":`, want: `{"type":"object","properties":{}}`},
		{name: "not an object", in: `[1,2]`, want: `{"type":"object","properties":{}}`},
		{name: "HTML characters are kept", in: `{"type":"object","description":"a < b & c > d"}`, want: `{"type":"object","description":"a < b & c > d","properties":{}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, cut := projectSchema([]byte(tt.in))
			assert.False(t, cut)
			assert.JSONEq(t, tt.want, string(got))
			assert.Equal(t, compactString(t, tt.want), string(got), "order is kept")
		})
	}
}

func compactString(t *testing.T, s string) string {
	t.Helper()
	return string(compact(json.RawMessage(strings.NewReplacer("\n", "", "\t", "").Replace(s))))
}

func TestProjectSchemaBounded(t *testing.T) {
	// Each level refers to the next one twice, and the last holds a large
	// enum: inlining everything would make 2^n copies of it.
	enum := `["` + strings.Repeat(`x","`, 2000) + `y"]`
	for _, levels := range []int{2, 11, 40} {
		var defs []string
		for i := range levels {
			defs = append(defs, `"d`+itoa(i)+`":{"type":"object","properties":{"l":{"$ref":"#/$defs/d`+itoa(i+1)+`"},"r":{"$ref":"#/$defs/d`+itoa(i+1)+`"}}}`)
		}
		defs = append(defs, `"d`+itoa(levels)+`":{"enum":`+enum+`}`)
		in := `{"type":"object","properties":{"root":{"$ref":"#/$defs/d0"}},"$defs":{` + strings.Join(defs, ",") + `}}`
		got, cut := projectSchema([]byte(in))
		assert.True(t, json.Valid(got))
		assert.Less(t, len(got), 4*len(in)+minSchemaBudget+len(enum), "levels %d", levels)
		assert.Equal(t, levels > 2, cut, "levels %d: 2^2 copies fit the budget", levels)
	}
}

// A schema too large for any budget (one huge value) is shown as the
// empty object schema, whatever its source (issue 35 #11).
func TestProjectSchemaAbsoluteBound(t *testing.T) {
	in := `{"type":"object","properties":{"p":{"type":"string","description":"` + strings.Repeat("x", 1<<20) + `"}}}`
	got, cut := projectSchema([]byte(in))
	assert.LessOrEqual(t, len(got), maxProjectedSchema)
	assert.True(t, cut)
	assert.JSONEq(t, `{"type":"object","properties":{}}`, string(got))
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestCheckArgs(t *testing.T) {
	schema := `{"type":"object","properties":{"q":{"type":"string"},"n":{"type":"integer","maximum":10},"opt":{"type":"string"}},"required":["q","n"]}`
	ts := compileSchema(json.RawMessage(schema))
	require.NoError(t, ts.err)
	tests := []struct {
		name, args     string
		clean, problem string
	}{
		{"valid", `{"q":"go","n":3}`, `{"q":"go","n":3}`, ""},
		{"spaces compacted", ` { "q" : "go", "n" : 3 } `, `{"q":"go","n":3}`, ""},
		{"optional null dropped", `{"q":"go","n":3,"opt":null}`, `{"n":3,"q":"go"}`, ""},
		{"required null kept and refused", `{"q":null,"n":3}`, "", "do not match the tool's input schema"},
		{"over maximum", `{"q":"go","n":11}`, "", "maximum"},
		{"big integers kept exactly", `{"q":"go","n":-12345678901234567890,"opt":null}`, `{"n":-12345678901234567890,"q":"go"}`, ""},
		{"empty", ``, "", "do not match"},
		{"not JSON", `{"q":`, "", `not valid JSON: {"q":`},
		{"array", `["q"]`, "", "must be a JSON object"},
		{"string", `"q"`, "", "must be a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clean, _, _, problem := ts.checkArgs(tt.args)
			if tt.problem != "" {
				assert.Contains(t, problem, tt.problem)
				assert.Nil(t, clean)
				return
			}
			assert.Empty(t, problem)
			assert.Equal(t, tt.clean, string(clean))
		})
	}
	t.Run("same call, same key", func(t *testing.T) {
		_, k1, _, _ := ts.checkArgs(`{"q":"go","n":3}`)
		_, k2, _, _ := ts.checkArgs(`{ "n": 3, "q": "go", "opt": null }`)
		_, k3, _, _ := ts.checkArgs(`{"q":"go","n":4}`)
		assert.Equal(t, k1, k2)
		assert.NotEqual(t, k1, k3)
	})
}

func TestCompileSchemaFallbacks(t *testing.T) {
	// A schema naming a draft jsonschema-go does not know is validated
	// under 2020-12 rules.
	ts := compileSchema(json.RawMessage(`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"a":{"type":"integer"}}}`))
	require.NoError(t, ts.err)
	_, _, _, problem := ts.checkArgs(`{"a":"x"}`)
	assert.Contains(t, problem, "type")

	// A schema that cannot be used: arguments are only checked to be an
	// object.
	bad := compileSchema(json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"https://example.com/remote.json"}}}`))
	require.Error(t, bad.err)
	clean, _, _, problem := bad.checkArgs(`{"a":1}`)
	assert.Empty(t, problem)
	assert.Equal(t, `{"a":1}`, string(clean))
	_, _, _, problem = bad.checkArgs(`[1]`)
	assert.Contains(t, problem, "must be a JSON object")
}

// FuzzProjectSchema checks that any input schema projects to a valid JSON
// object schema with type and properties and no reference left,
// deterministically and within its budget.
func FuzzProjectSchema(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"$ref":"#/$defs/A"}},"$defs":{"A":{"anyOf":[{"type":"string"},{"type":"null"}]}}}`,
		`{"$ref":"#"}`,
		`{"properties":{"a":{"$ref":"#/properties/a/items/0"},"items":[{"$ref":"#/properties"}]}}`,
		`{"type":"object","properties":{"a":{"type":["string","null"],"pattern":"^x"}},"required":["a"]}`,
		`{"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`,
		`{"definitions":{"s":{"type":"string","format":"email"}},"properties":{"x":{"$ref":"#/definitions/s"},"y":{"$ref":"http://remote"}}}`,
		`{"properties":{"a":{"anyOf":[{"type":"null"},{"type":"integer"}]},"b":{"items":[{"type":"string"}]},"c":{"enum":[null,1,"x"]}}}`,
		`{"properties":{"a~1b":{"type":"string"}},"$ref":"#/properties/a~01b"}`,
		`true`, `[]`, `"x"`, `{"type":"string"}`, `not json`, `{"properties":[]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		out, cut := projectSchema(raw)
		if again, cutAgain := projectSchema(raw); !bytes.Equal(out, again) || cut != cutAgain {
			t.Fatalf("projection of %q is not deterministic", raw)
		}
		if len(out) > 4*len(raw)+minSchemaBudget+len(raw) {
			t.Fatalf("projection of %d bytes takes %d", len(raw), len(out))
		}
		var v map[string]any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("projection of %q is not a JSON object: %v", raw, err)
		}
		if v["type"] == nil || v["properties"] == nil {
			t.Fatalf("projection of %q lacks type or properties: %s", raw, out)
		}
		noReferences(t, v, "")
	})
}

func TestCompileSchemaFixesTypes(t *testing.T) {
	ts := compileSchema(json.RawMessage(`{"type":"object","properties":{
		"x":{"type":"float"},"n":{"type":"integer "},"ok":{"type":"Bool"},
		"tags":{"type":"array","items":{"type":["str","null"]}},
		"any":{"type":"whatever","description":"d"},
		"p":{"type":"object","properties":{"type":{"type":"double"}}},
		"alt":{"anyOf":[{"type":"int"},{"type":["number","float"]}]}},
		"required":["x"]}`))
	require.NoError(t, ts.err)
	assert.Equal(t, []string{`"float" → "number"`, `"integer " → "integer"`, `"Bool" → "boolean"`, `"str" → "string"`,
		`"whatever" dropped`, `"double" → "number"`, `"int" → "integer"`}, ts.fixes)
	assert.Equal(t, compactString(t, `{"type":"object","properties":{
		"x":{"type":"number"},"n":{"type":"integer"},"ok":{"type":"boolean"},
		"tags":{"type":"array","items":{"type":"string"}},
		"any":{"description":"d"},
		"p":{"type":"object","properties":{"type":{"type":"number"}}},
		"alt":{"anyOf":[{"type":"integer"},{"type":"number"}]}},
		"required":["x"]}`), string(ts.projected))

	// Validation uses the fixed schema.
	for args, valid := range map[string]bool{
		`{"x":1.5,"n":2,"ok":true,"tags":["a",null],"any":[1],"p":{"type":3.5}}`: true,
		`{"x":"1.5"}`:          false,
		`{"x":1,"n":2.5}`:      false,
		`{"x":1,"tags":[1]}`:   false,
		`{"x":1,"alt":"no"}`:   false,
		`{"x":1,"alt":3}`:      true,
		`{"x":1,"ok":"true"}`:  false,
		`{"x":1,"any":"free"}`: true,
	} {
		_, _, _, problem := ts.checkArgs(args)
		assert.Equal(t, valid, problem == "", "%s: %s", args, problem)
	}

	clean := compileSchema(json.RawMessage(`{"type":"object","properties":{"a":{"type":["integer","null"]}}}`))
	assert.Empty(t, clean.fixes)
}

func TestCompileSchemaFixesRoot(t *testing.T) {
	tests := []struct{ in, projected, note string }{
		{`{"type":"string","description":"the note","minLength":3}`, `{"type":"object","description":"the note","properties":{}}`, `root "string" → "object"`},
		{`{"type":"str"}`, `{"type":"object","properties":{}}`, `root "string" → "object"`},
		{`{"type":["object","string"],"properties":{"a":{"type":"integer"}}}`, `{"type":"object","properties":{"a":{"type":"integer"}}}`, `root ["object","string"] → "object"`},
		{`{"type":["object","null"]}`, `{"type":"object","properties":{}}`, ""},
		{`{"type":"object"}`, `{"type":"object","properties":{}}`, ""},
	}
	for _, tt := range tests {
		ts := compileSchema(json.RawMessage(tt.in))
		require.NoError(t, ts.err, tt.in)
		assert.Equal(t, tt.projected, string(ts.projected), tt.in)
		if tt.note == "" {
			assert.Empty(t, ts.fixes, tt.in)
		} else {
			assert.Contains(t, ts.fixes, tt.note, tt.in)
		}
		_, _, _, problem := ts.checkArgs(`{"a":1}`)
		assert.Empty(t, problem, "%s: an object is valid", tt.in)
	}
}

func TestCheckArgsProblemsBounded(t *testing.T) {
	var names []string
	for i := range 12 {
		names = append(names, `"p`+itoa(i)+`"`)
	}
	ts := compileSchema(json.RawMessage(`{"type":"object","required":[` + strings.Join(names, ",") + `]}`))
	require.NoError(t, ts.err)
	_, _, _, problem := ts.checkArgs(`{}`)
	assert.Contains(t, problem, "(12 problems)")
	assert.Contains(t, problem, `missing required property "p7"; and 4 more`)
	assert.NotContains(t, problem, `"p8"`)

	// A problem between members is told once.
	ts = compileSchema(json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"}},"dependentRequired":{"a":["b"]}}`))
	require.NoError(t, ts.err)
	_, _, _, problem = ts.checkArgs(`{"a":1}`)
	assert.Equal(t, `the arguments do not match the tool's input schema: dependentRequired["a"]: missing properties ["b"]`, problem)
}

package mcp

import (
	"encoding/json"
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/internal/jsonrpc"
)

// encodeRequest writes what json.Marshal of the envelope writes, byte for
// byte, for every params type it writes by hand and for the others.
func TestEncodeRequestMatchesMarshal(t *testing.T) {
	meta := json.RawMessage(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`)
	cursor, odd := "c1", "a\"b\n<&>é\u2028"
	cases := map[string]any{
		"nil":               nil,
		"meta only":         &metaParams{Meta: meta},
		"empty meta":        &metaParams{},
		"cursor":            &cursorParams{metaParams: metaParams{Meta: meta}, Cursor: &cursor},
		"odd cursor":        &cursorParams{Cursor: &odd},
		"no cursor":         &cursorParams{metaParams: metaParams{Meta: meta}},
		"call":              &callToolParams{metaParams: metaParams{Meta: meta}, Name: "echo", Arguments: json.RawMessage(`{"text":"hi"}`)},
		"call, odd name":    &callToolParams{Name: odd},
		"call with input":   &callToolParams{Name: "x", inputAnswers: inputAnswers{RequestState: json.RawMessage(`"s"`)}},
		"other params type": &getPromptParams{metaParams: metaParams{Meta: meta}, Name: "p", Arguments: map[string]string{"a": "b"}},
	}
	for name, params := range cases {
		t.Run(name, func(t *testing.T) {
			want, err := json.Marshal(jsonrpc.Request{JSONRPC: jsonrpc.Version, ID: jsonrpc.Int(42), Method: "tools/call", Params: params})
			require.NoError(t, err)
			got, err := encodeRequest(42, "tools/call", params)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got))
		})
	}
}

// Arguments the host gives as JSON are checked and compacted once, at the
// call, since the encoder sends them as they are.
func TestMarshalArgsCompactsGivenJSON(t *testing.T) {
	raw, err := marshalArgs(json.RawMessage("{ \"a\" :\n [1, 2] }"))
	require.NoError(t, err)
	assert.Equal(t, `{"a":[1,2]}`, string(raw))
	raw, err = marshalArgs([]byte(`{"b": true}`))
	require.NoError(t, err)
	assert.Equal(t, `{"b":true}`, string(raw))
	_, err = marshalArgs(json.RawMessage(`{"a":`))
	assert.ErrorContains(t, err, "arguments")
	_, err = marshalArgs(json.RawMessage(`[1]`))
	assert.ErrorContains(t, err, "must be a JSON object")
}

// A host's map of arguments is encoded as json.Marshal encodes it, byte
// for byte (marshalMap): keys sorted, strings escaped alike, other values
// left to encoding/json, a bad value refused.
func TestMarshalArgsMapMatchesMarshal(t *testing.T) {
	odd := "a\"b\\\n\t<&>é\u2028\u2029\x7f\x00\xff"
	cases := []any{
		map[string]any{"text": "hello"},
		map[string]any{},
		map[string]any{"b": 1, "a": 2.5, "c": nil, "d": true, "e": []any{"x", 1}, "f": map[string]any{"z": "y"}, "g": json.RawMessage(`{ "r" : 1 }`)},
		map[string]any{odd: odd, "Z": "upper first", "z": "lower", "é": 1, "": "empty key"},
		map[string]string{"text": "hello"},
		map[string]string{odd: odd, "b": "", "a": "1"},
		map[string]any{"neg0": math.Copysign(0, -1), "big": 1e21, "small": 1e-7, "f32": float32(0.1), "n": json.Number("12.50"),
			"html": htmlMarshaler{}, "int keys": map[int]any{2: "b", 10: "<a>"}, "nil map": map[string]any(nil), "nil slice": []string(nil),
			"bytes": []byte("<x>"), "nested": []any{map[string]any{"b": "\u2028", "a": []any{nil, 1.5}}}},
	}
	many := map[string]any{}
	for i := range 40 { // past marshalMap's small key array
		many[string(rune('a'+i%26))+strconv.Itoa(i)] = i
	}
	cases = append(cases, many)
	for _, args := range cases {
		want, err := json.Marshal(args)
		require.NoError(t, err)
		got, err := marshalArgs(args)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got))
	}
	raw, err := marshalArgs(map[string]any(nil))
	assert.NoError(t, err)
	assert.Nil(t, raw, "a nil map is no arguments, as null is")
	_, err = marshalArgs(map[string]any{"f": func() {}})
	assert.ErrorContains(t, err, "arguments: json: unsupported type")
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		_, err = marshalArgs(map[string]any{"x": bad})
		assert.ErrorContains(t, err, "arguments: json: unsupported value")
	}
}

// htmlMarshaler writes JSON that encoding/json compacts and escapes.
type htmlMarshaler struct{}

func (htmlMarshaler) MarshalJSON() ([]byte, error) { return []byte(`{ "a" : "<&>" }`), nil }

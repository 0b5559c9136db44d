package mcp

import (
	"encoding/json"
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

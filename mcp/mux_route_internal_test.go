package mcp

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// routeResponse routes the responses servers write, without decoding them,
// and leaves every unusual one to the full decoding.
func TestRouteResponse(t *testing.T) {
	type routed struct {
		id         int64
		result, ok bool
	}
	cases := map[string]routed{
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a \"b\" \\"}]}}`: {1, true, true},
		` {"result":{"n":[1,2]} , "id" : -42 ,"jsonrpc":"2.0"}` + "\r":                        {-42, true, true},
		`{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"no"}}`:                     {7, false, true},
		`{"jsonrpc":"2.0","id":3,"result":null}`:                                              {3, false, true},
		`{"jsonrpc":"2.0","id":3,"result":{"x":"}"},"other":[{"a":"]"}]}`:                     {3, true, true},
		// Left to the full decoding:
		`{"jsonrpc":"2.0","id":1,"result":{},"ID":2}`:            {},
		`{"jsonrpc":"2.0","id":"1","result":{}}`:                 {},
		`{"jsonrpc":"2.0","id":1.0,"result":{}}`:                 {},
		`{"jsonrpc":"2.0","id":01,"result":{}}`:                  {},
		`{"jsonrpc":"2.0","id":1234567890123456789,"result":{}}`: {},
		`{"jsonrpc":"2.0","id":1,"method":"","result":{}}`:       {},
		`{"jsonrpc":"2.0","i\u0064":1,"result":{}}`:              {},
		`{"jsonrpc":"2\u002e0","id":1,"result":{}}`:              {},
		`{"jsonrpc":"1.0","id":1,"result":{}}`:                   {},
		`{"id":1,"result":{}}`:                                   {},
		`{"jsonrpc":"2.0","id":1,"result":{"a":"cut`:             {},
		`{"jsonrpc":"2.0","id":1,"result":{}} {}`:                {},
		`{"jsonrpc":"2.0","id":1,"result":{}`:                    {},
		`[{"jsonrpc":"2.0","id":1,"result":{}}]`:                 {},
		`{"jsonrpc":"2.0","id":1,"result":{}}}`:                  {},
		`not json`:                                               {}, `{}`: {}, ``: {},
	}
	for in, want := range cases {
		id, result, ok := routeResponse([]byte(in))
		assert.Equal(t, want, routed{id, result, ok}, in)
	}
}

package jsonrpc

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzMessage checks that any bytes either fail to decode or to Check, or
// give a message of exactly one kind that encodes and decodes again to the
// same message. The id is kept byte for byte when decoded; encoding/json
// escapes <, > and & in it when encoded, which leaves the same JSON value.
func FuzzMessage(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"a":[1,2]}}`,
		`{"jsonrpc":"2.0","id":"abc","error":{"code":-32601,"message":"not found","data":{"m":"x"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`,
		`{"jsonrpc":"2.0","id":-7,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1e400,"result":null}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}`,
		`{"jsonrpc":"2.0","id":"\u00e9\ud800","result":1}`,
		`{"jsonrpc":"2.0","id":[1],"method":"x"}`,
		`{"jsonrpc":"2.0","ID":1,"Result":{}}`,
		`{"jsonrpc":"2.0"}`, `[]`, `null`, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var raw json.RawMessage
		m := Message{Result: &raw}
		if json.Unmarshal(data, &m) != nil || m.Check() != nil {
			return
		}
		kinds := 0
		for _, k := range []bool{m.IsResponse(), m.IsNotification(), !m.IsResponse() && !m.IsNotification()} {
			if k {
				kinds++
			}
		}
		if kinds != 1 || m.IsResponse() && len(m.ID) == 0 && m.Error == nil {
			t.Fatalf("%q decodes to %+v", data, m)
		}
		if len(m.ID) > 0 && !json.Valid(m.ID) {
			t.Fatalf("id %q is not JSON", m.ID)
		}
		enc, err := json.Marshal(&m)
		if err != nil {
			t.Fatalf("%q decodes to %+v, which does not encode: %v", data, m, err)
		}
		var raw2 json.RawMessage
		m2 := Message{Result: &raw2}
		if err := json.Unmarshal(enc, &m2); err != nil || m2.Check() != nil {
			t.Fatalf("%q encodes back to %q, which does not decode: %v, %v", data, enc, err, m2.Check())
		}
		if !sameJSON(m.ID, m2.ID) || m.Method != m2.Method || m.IsResponse() != m2.IsResponse() || m.IsNotification() != m2.IsNotification() ||
			(m.Error == nil) != (m2.Error == nil) || m.Error != nil && (m.Error.Code != m2.Error.Code || m.Error.Message != m2.Error.Message) {
			t.Fatalf("%q: %+v became %+v through %q", data, m, m2, enc)
		}
		if !sameJSON(m.Params, m2.Params) || !sameJSON(raw, raw2) {
			t.Fatalf("%q: params %q or result %q became %q, %q", data, m.Params, raw, m2.Params, raw2)
		}
	})
}

// sameJSON reports whether a and b hold the same JSON value, an absent
// value being null.
func sameJSON(a, b []byte) bool {
	value := func(r []byte) any {
		if len(r) == 0 {
			return nil
		}
		d := json.NewDecoder(bytes.NewReader(r))
		d.UseNumber()
		var v any
		if d.Decode(&v) != nil {
			return "invalid " + string(r)
		}
		return v
	}
	return reflect.DeepEqual(value(a), value(b))
}

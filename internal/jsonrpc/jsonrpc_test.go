package jsonrpc

import (
	"encoding/json"
	"testing"
)

func TestCheckIDTypes(t *testing.T) {
	for _, tc := range []struct {
		msg string
		ok  bool
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, true},
		{`{"jsonrpc":"2.0","id":-3,"result":{}}`, true},
		{`{"jsonrpc":"2.0","id":"a-1","method":"ping"}`, true},
		{`{"jsonrpc":"2.0","method":"notifications/progress"}`, true},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}`, true},
		{`{"jsonrpc":"2.0","id":true,"result":{}}`, false},
		{`{"jsonrpc":"2.0","id":{"n":1},"method":"ping"}`, false},
		{`{"jsonrpc":"2.0","id":[1],"result":{}}`, false},
		{`{"jsonrpc":"2.0","result":{}}`, false},
		{`{"jsonrpc":"1.0","id":1,"result":{}}`, false},
	} {
		var m Message
		if err := json.Unmarshal([]byte(tc.msg), &m); err != nil {
			t.Fatalf("%s: %v", tc.msg, err)
		}
		if err := m.Check(); (err == nil) != tc.ok {
			t.Errorf("Check(%s) = %v, want ok=%v", tc.msg, err, tc.ok)
		}
	}
}

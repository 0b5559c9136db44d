package permission_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"git.rickub.com/bots-garden/mini-me/permission"
)

func TestArgumentsText(t *testing.T) {
	tests := []struct {
		name string
		args string
		max  int
		want string
	}{
		{"empty", "", 0, "{}"},
		{"white space only", " \n", 0, "{}"},
		{"indented", `{"a":1,"b":[true,null]}`, 0, "{\n  \"a\": 1,\n  \"b\": [\n    true,\n    null\n  ]\n}"},
		{"surrounding white space dropped", "\n {\"a\":1}\n", 0, "{\n  \"a\": 1\n}"},
		{"key order and numbers kept", `{"z":1.50,"a":2}`, 0, "{\n  \"z\": 1.50,\n  \"a\": 2\n}"},
		{"invalid JSON as it came", `{"a":`, 0, `{"a":`},
		{"short enough", `{"a":1}`, 100, "{\n  \"a\": 1\n}"},
		{"cut", `"abcdefghij"`, 5, `"abcd … [7 more bytes]`},
		{"cut on a character boundary", `"ééééé"`, 4, `"é … [9 more bytes]`},
		{"a long value does not hide the next key",
			`{"body":"` + strings.Repeat("x", 100) + `","path":"/etc/passwd"}`, 120,
			"{\n  \"body\": \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx … [41 more bytes]\n  \"path\": \"/etc/passwd\"\n}"},
		{"lines cut to a common length, short ones kept",
			`["` + strings.Repeat("a", 50) + `","` + strings.Repeat("b", 40) + `","c"]`, 80,
			"[\n  \"aaaaaaaaaaa … [41 more bytes]\n  \"bbbbbbbbbbb … [31 more bytes]\n  \"c\"\n]"},
		{"too many lines to cut: the whole is cut", `[1,2,3,4,5,6,7,8,9]`, 10, "[\n  1,\n  2 … [37 more bytes]"},
		{"negative max is no limit", `"abcdefghij"`, -1, `"abcdefghij"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := permission.Request{Arguments: json.RawMessage(tc.args)}
			got := r.ArgumentsText(tc.max)
			assert.Equal(t, tc.want, got)
			assert.True(t, utf8.ValidString(got))
			if tc.max > 0 && strings.Count(got, "more bytes]") > 0 && strings.Count(got, "\n") > 0 && !strings.Contains(tc.name, "whole") {
				assert.LessOrEqual(t, len(got), tc.max, "cutting lines should make the text fit")
			}
		})
	}
}

func TestAnnotations(t *testing.T) {
	yes, no := ptr(true), ptr(false)
	tests := []struct {
		name                                         string
		a                                            permission.Annotations
		readOnly, destructive, idempotent, openWorld bool
		text                                         string
	}{
		{"none: the MCP defaults", permission.Annotations{}, false, true, false, true,
			"writes*, destructive*, not idempotent*, open world*"},
		{"read-only", permission.Annotations{ReadOnlyHint: yes}, true, false, true, true,
			"read-only, open world*"},
		{"read-only makes destructive meaningless", permission.Annotations{ReadOnlyHint: yes, DestructiveHint: yes, IdempotentHint: no},
			true, false, true, true, "read-only, open world*"},
		{"declared destructive", permission.Annotations{ReadOnlyHint: no, DestructiveHint: yes}, false, true, false, true,
			"writes, destructive, not idempotent*, open world*"},
		{"additive, idempotent, closed", permission.Annotations{DestructiveHint: no, IdempotentHint: yes, OpenWorldHint: no},
			false, false, true, false, "writes*, additive only, idempotent, closed world"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.readOnly, tc.a.ReadOnly(), "ReadOnly")
			assert.Equal(t, tc.destructive, tc.a.Destructive(), "Destructive")
			assert.Equal(t, tc.idempotent, tc.a.Idempotent(), "Idempotent")
			assert.Equal(t, tc.openWorld, tc.a.OpenWorld(), "OpenWorld")
			assert.Equal(t, tc.text, tc.a.String())
		})
	}
}

func TestAnnotationsJSON(t *testing.T) {
	var a permission.Annotations
	err := json.Unmarshal([]byte(`{"title":"x","readOnlyHint":false,"destructiveHint":true}`), &a)
	assert.NoError(t, err)
	assert.Equal(t, permission.Annotations{ReadOnlyHint: ptr(false), DestructiveHint: ptr(true)}, a)
	out, err := json.Marshal(permission.Annotations{OpenWorldHint: ptr(false)})
	assert.NoError(t, err)
	assert.JSONEq(t, `{"openWorldHint":false}`, string(out))
}

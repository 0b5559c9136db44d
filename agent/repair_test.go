package agent

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRepairArgs(t *testing.T) {
	tests := []struct {
		in, want string
		repairs  []string
	}{
		{`{"a":1}`, `{"a":1}`, nil},
		{"```{\"a\":1}```", `{"a":1}`, []string{"code fence removed"}},
		{"```JSON\n{'a':[1,],}\n```", `{"a":[1]}`, []string{"code fence removed", "single quotes replaced by double quotes", "trailing commas removed"}},
		{`"{\"a\":\"it's, }\"}"`, `{"a":"it's, }"}`, []string{"stringified object decoded"}},
		{`{'a':'x,]', "b":"don't"}`, `{"a":"x,]", "b":"don't"}`, []string{"single quotes replaced by double quotes"}},
		{`{'a':'it's'}`, `{'a':'it's'}`, nil}, // cannot be read: left as sent
		{`"text"`, `"text"`, nil},
		{`[1,]`, `[1,]`, nil}, // repaired, but not an object
		{"```", "```", nil},
	}
	for _, tt := range tests {
		got, repairs := repairArgs([]byte(tt.in))
		assert.Equal(t, tt.want, string(got), tt.in)
		assert.Equal(t, tt.repairs, repairs, tt.in)
	}
}

func FuzzRepairArgs(f *testing.F) {
	f.Add([]byte("```json\n{'a':[1,],}\n```"))
	f.Add([]byte(`"{\"a\":1}"`))
	f.Add([]byte(`{'a\'':"\"'"}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		got, repairs := repairArgs(in)
		if len(repairs) == 0 && string(got) != string(in) {
			t.Fatalf("%q changed to %q with no repair told", in, got)
		}
		if len(repairs) > 0 && !isObject(string(got)) {
			t.Fatalf("%q repaired to %q, not an object", in, got)
		}
	})
}

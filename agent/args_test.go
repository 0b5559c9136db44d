package agent_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

// A host's own call is checked as the model's are: the arguments sent,
// or every problem.
func TestCheckArguments(t *testing.T) {
	st := toolset.Tool{Name: "text_count", Server: "text", Tool: mcp.Tool{Name: "count", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"text":{"type":"string"},"max":{"type":"integer"}},"required":["text"]}`)}}
	for _, tc := range []struct {
		name, args, want, problem string
	}{
		{name: "valid", args: `{"text": "hi", "max": 2}`, want: `{"text":"hi","max":2}`},
		{name: "null optional dropped", args: `{"text":"hi","max":null}`, want: `{"text":"hi"}`},
		{name: "missing required", args: `{}`, problem: `missing required property "text"`},
		{name: "wrong type", args: `{"text":3}`, problem: "text"},
		{name: "two problems", args: `{"max":"x"}`, problem: "(2 problems)"},
		{name: "not an object", args: `[1]`, problem: "must be a JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := agent.CheckArguments(st, json.RawMessage(tc.args))
			if tc.problem != "" {
				require.ErrorIs(t, err, agent.ErrInvalidArguments)
				assert.Contains(t, err.Error(), tc.problem)
				assert.Contains(t, err.Error(), "text_count")
				assert.Nil(t, got)
				return
			}
			require.NoError(t, err)
			assert.JSONEq(t, tc.want, string(got))
		})
	}
	// A tool that lists no schema takes any object, and only an object.
	bare := toolset.Tool{Name: "x_y", Tool: mcp.Tool{Name: "y"}}
	got, err := agent.CheckArguments(bare, json.RawMessage(`{"a":1}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{"a":1}`, string(got))
	_, err = agent.CheckArguments(bare, json.RawMessage(`"a"`))
	require.ErrorIs(t, err, agent.ErrInvalidArguments)
}

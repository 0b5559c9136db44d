//go:build unix

package interop

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/openai"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// entry is the typed answer asked of the tiny model. Only what the grammar
// guarantees is checked: the first answer is JSON that the schema accepts
// and that decodes. It has no string: the grammar bounds neither their
// length nor the tiny model's taste for long ones, and an answer cut at
// the output limit is not whole.
type entry struct {
	Count int64 `json:"count"`
	Known bool  `json:"known"`
	Rare  bool  `json:"rare"`
}

func TestLlamaCppRunTyped(t *testing.T) {
	base := startLlama(t, nil)
	s, err := jsonschema.For[entry](nil)
	require.NoError(t, err)
	resolved, err := s.Resolve(nil)
	require.NoError(t, err)
	// valid checks the answer against the schema, apart from the agent.
	valid := func(t *testing.T, res agent.Result) {
		t.Helper()
		var v any
		require.NoError(t, json.Unmarshal([]byte(res.Answer), &v), res.Answer)
		assert.NoError(t, resolved.Validate(v), res.Answer)
	}
	model := func(noResponseFormat bool) *openai.Model {
		m := tiny(base, false)
		m.MaxTokens, m.NoResponseFormat = 64, noResponseFormat
		return m
	}
	ask := []agent.Message{agent.UserMessage("look the word up")}

	t.Run("response format", func(t *testing.T) {
		_, res, err := agent.RunTyped[entry](llamaCtx(t), &agent.Agent{Model: model(false)}, ask, nil)
		require.NoError(t, err, res.Answer)
		assert.Equal(t, 1, res.Turns, "the grammar makes the first answer valid")
		valid(t, res)
	})
	t.Run("answer tool", func(t *testing.T) {
		_, res, err := agent.RunTyped[entry](llamaCtx(t), &agent.Agent{Model: model(true)}, ask, nil)
		require.NoError(t, err, res.Answer)
		assert.Equal(t, 1, res.Turns, "the tool-call grammar makes the first call valid")
		valid(t, res)
	})
	t.Run("after a tool", func(t *testing.T) {
		add, err := agent.NewFunc("count", "Counts the senses of a word", func(_ context.Context, in struct {
			Word string `json:"word"`
		}) (int, error) {
			return len(in.Word), nil
		})
		require.NoError(t, err)
		a := &agent.Agent{Model: model(false), Funcs: []*agent.Func{add}, Policy: permission.NewPolicy(permission.AllowAll{}), MaxTurns: 4}
		var calls int
		_, res, err := agent.RunTyped[entry](llamaCtx(t), a, ask, func(e agent.Event) {
			if _, ok := e.(*agent.ToolFinished); ok {
				calls++
			}
		})
		require.NoError(t, err, res.Answer)
		assert.Positive(t, calls, "the tool ran before the answer")
		valid(t, res)
	})
}

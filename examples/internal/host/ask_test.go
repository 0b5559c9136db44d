package host

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/examples/internal/demo"
	"git.rickub.com/bots-garden/mini-me/internal/llmtest"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// fixedModel answers its own text, streamed in one piece, to anything.
type fixedModel string

func (m fixedModel) Chat(_ context.Context, _ *agent.ChatRequest, onDelta func(agent.Delta)) (*agent.Reply, error) {
	onDelta(agent.Delta{Text: string(m)})
	return &agent.Reply{Message: agent.Message{Role: agent.RoleAssistant, Content: string(m)}, Finish: agent.FinishStop}, nil
}

func TestAsk(t *testing.T) {
	tools := discover(t, demo.Text())
	// durations is the one part of a run's output that changes between
	// runs.
	durations := regexp.MustCompile(`\(\d+(\.\d+)?[µm]?s\)`)
	for _, tc := range []struct {
		name   string
		turns  []llmtest.Turn // served to an *agent.OpenAI; nil: fixedModel
		want   string         // MODEL stands for the model's URL
		stop   agent.StopReason
		turnsN int
		err    string
	}{
		{"a tool call, then the answer", []llmtest.Turn{
			{ToolCalls: []llmtest.ToolCall{{ID: "1", Name: "text_count", Arguments: `{"text":"a b"}`}}},
			{Text: "Two words."},
		}, "\nmodel: m at MODEL (on this machine)\n\nyou: How many words in: a b?\n\n" +
			"→ text_count {\"text\":\"a b\"}\n← ok text_count: 2 words, 3 characters, 1 line (D)\nTwo words.\n",
			agent.StopAnswer, 2, ""},
		{"the model fails", []llmtest.Turn{{Status: 400, Error: "no such model"}},
			"\nmodel: m at MODEL (on this machine)\n\nyou: How many words in: a b?\n\n",
			agent.StopError, 1, "the run stopped (error): "},
		{"a model that is not an OpenAI endpoint is not printed", nil,
			"\n\nyou: How many words in: a b?\n\nFixed.\n", agent.StopAnswer, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var model agent.Model = fixedModel("Fixed.")
			url := ""
			if tc.turns != nil {
				llm := &llmtest.Server{Turns: tc.turns}
				url = llm.Start()
				defer llm.Close()
				model = &agent.OpenAI{BaseURL: url, Model: "m"}
			}
			var out bytes.Buffer
			a := &agent.Agent{Model: model, Tools: tools, Policy: permission.NewPolicy(permission.AllowAll{})}
			res, err := Ask(context.Background(), &out, a, "How many words in: a b?")
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tc.stop, res.Stop)
			assert.Equal(t, tc.turnsN, res.Turns)
			got := durations.ReplaceAllString(out.String(), "(D)")
			if url != "" {
				got = strings.ReplaceAll(got, url, "MODEL")
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

//go:build unix

package interop

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/openai"
)

// The agent's OpenAI client against the real llama-server (see
// startLlama). The tiny model calls a tool when tools are offered and no
// tool result is in the conversation yet, and answers in words otherwise.

// llamaTimeout bounds one test's talk with the model: on two busy cores
// the model makes a few tokens a second under a tool-call grammar.
const llamaTimeout = 3 * time.Minute

const lookupSchema = `{"type":"object","properties":{"q":{"type":"string","description":"the word"}},"required":["q"]}`

var lookupDef = agent.ToolDef{Name: "lookup", Description: "Looks a word up", Parameters: json.RawMessage(lookupSchema)}

// tiny is a greedy client of the tiny model.
func tiny(base string, noStream bool) *openai.Model {
	zero, seed := 0.0, 1
	return &openai.Model{BaseURL: base, Model: "tiny", Temperature: &zero, Seed: &seed, MaxTokens: 48, NoStream: noStream}
}

func hello(tools ...agent.ToolDef) *agent.ChatRequest {
	return &agent.ChatRequest{Messages: []agent.Message{agent.UserMessage(greeting.prompt)}, Tools: tools}
}

// greeting is the user message of the wire tests, chosen once per test
// binary (see findGreeting).
var greeting struct {
	once   sync.Once
	prompt string
}

// greetings are the user messages findGreeting tries, in order.
var greetings = []string{"hi", "Hello", "Write a sentence.", "Hello there", "What is a tiny model?", "Say something."}

// findGreeting picks the first of greetings that the tiny model, greedy
// and without tools, answers with at least four tokens ending in "stop":
// the tests need an answer long enough to stream in pieces and to be cut
// by a small max_tokens. The model's greedy answer to a given message
// differs with the CPU the server runs on (its weights are tiny, near-tied
// logits follow the order of the sums), so a fixed message is not enough.
func findGreeting(t *testing.T, base string) {
	greeting.once.Do(func() {
		zero, seed := 0.0, 1
		m := &openai.Model{BaseURL: base, Model: "tiny", Temperature: &zero, Seed: &seed, MaxTokens: 48, NoStream: true}
		for _, p := range greetings {
			r, err := m.Chat(context.Background(), &agent.ChatRequest{Messages: []agent.Message{agent.UserMessage(p)}}, nil)
			if err == nil && r.Finish == agent.FinishStop && r.Usage.CompletionTokens >= 4 {
				greeting.prompt = p
				return
			}
		}
	})
	if greeting.prompt == "" {
		t.Fatalf("the tiny model answers none of %q with four tokens or more", greetings)
	}
}

func llamaCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), llamaTimeout)
	t.Cleanup(cancel)
	return ctx
}

// chat calls m and joins the text it streamed.
func chat(t *testing.T, m *openai.Model, req *agent.ChatRequest) (*agent.Reply, []string) {
	t.Helper()
	var pieces []string
	reply, err := m.Chat(llamaCtx(t), req, func(d agent.Delta) { pieces = append(pieces, d.Text) })
	require.NoError(t, err)
	return reply, pieces
}

// uncached is u without its cache counts, checked to be within the
// prompt: llama-server reuses its prompt cache (cache_prompt), so a
// prompt sent again reports its cached tokens in
// prompt_tokens_details.cached_tokens, and two runs of the same
// conversation differ there only.
func uncached(t *testing.T, u agent.Usage) agent.Usage {
	t.Helper()
	assert.LessOrEqual(t, u.CacheReadTokens, u.PromptTokens, "cached tokens are part of the prompt")
	u.CacheReadTokens, u.CacheWriteTokens = 0, 0
	return u
}

func TestLlamaCppWire(t *testing.T) {
	base := startLlama(t, nil)

	t.Run("plain answer, streamed and whole", func(t *testing.T) {
		streamed, pieces := chat(t, tiny(base, false), hello())
		assert.Greater(t, len(pieces), 1, "the text arrives in pieces")
		assert.Equal(t, strings.Join(pieces, ""), streamed.Message.Text())
		assert.NotEmpty(t, strings.TrimSpace(streamed.Message.Text()))
		assert.Equal(t, agent.FinishStop, streamed.Finish)
		assert.Empty(t, streamed.Message.ToolCalls())

		whole, pieces := chat(t, tiny(base, true), hello())
		assert.Equal(t, []string{whole.Message.Text()}, pieces, "one piece")
		assert.Equal(t, streamed.Message.Text(), whole.Message.Text(), "greedy: the same answer")
		assert.Equal(t, agent.FinishStop, whole.Finish)
		for _, u := range []agent.Usage{streamed.Usage, whole.Usage} {
			assert.Positive(t, u.PromptTokens)
			assert.Positive(t, u.CompletionTokens)
			assert.Equal(t, u.PromptTokens+u.CompletionTokens, u.TotalTokens)
		}
		assert.Equal(t, uncached(t, streamed.Usage), uncached(t, whole.Usage))
	})

	t.Run("usage comes in an extra chunk without choices", func(t *testing.T) {
		body := `{"model":"tiny","temperature":0,"seed":1,"max_tokens":48,"stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":` + strconv.Quote(greeting.prompt) + `}]}`
		chunks := postRaw(t, base, body)
		require.GreaterOrEqual(t, len(chunks), 3)
		last, finish := chunks[len(chunks)-1], chunks[len(chunks)-2]
		assert.Empty(t, last.Choices)
		require.NotNil(t, last.Usage)
		require.Len(t, finish.Choices, 1)
		require.NotNil(t, finish.Choices[0].FinishReason)
		assert.Equal(t, "stop", *finish.Choices[0].FinishReason)
		for _, c := range chunks[:len(chunks)-1] {
			assert.Nil(t, c.Usage, "usage only in the last chunk")
		}
		reply, _ := chat(t, tiny(base, false), hello())
		assert.Equal(t, agent.Usage{PromptTokens: last.Usage.PromptTokens, CompletionTokens: last.Usage.CompletionTokens,
			TotalTokens: last.Usage.TotalTokens}, uncached(t, reply.Usage), "the client reports it")

		chunks = postRaw(t, base, strings.Replace(body, `"include_usage":true`, `"include_usage":false`, 1))
		for _, c := range chunks {
			assert.Nil(t, c.Usage, "no usage unless asked")
		}
	})

	t.Run("finish length", func(t *testing.T) {
		for _, noStream := range []bool{false, true} {
			m := tiny(base, noStream)
			m.MaxTokens = 2
			reply, _ := chat(t, m, hello())
			assert.Equal(t, agent.FinishLength, reply.Finish, "noStream %v", noStream)
			assert.NotEmpty(t, reply.Message.Text())
			assert.Equal(t, 2, reply.Usage.CompletionTokens)
		}
	})

	t.Run("a tool call, streamed and whole", func(t *testing.T) {
		body := `{"model":"tiny","temperature":0,"seed":1,"max_tokens":48,"stream":true,"messages":[{"role":"user","content":` + strconv.Quote(greeting.prompt) + `}],` +
			`"tools":[{"type":"function","function":{"name":"lookup","parameters":` + lookupSchema + `}}]}`
		var first *rawChunk
		var fragments []string
		var finish string
		for _, c := range postRaw(t, base, body) {
			if len(c.Choices) == 0 {
				continue
			}
			if f := c.Choices[0].FinishReason; f != nil {
				finish = *f
			}
			for _, tc := range c.Choices[0].Delta.ToolCalls {
				if first == nil {
					first = &c
					continue
				}
				assert.Empty(t, tc.ID, "only the first fragment has the id")
				assert.Empty(t, tc.Function.Name, "only the first fragment has the name")
				require.NotNil(t, tc.Index)
				assert.Equal(t, 0, *tc.Index)
				fragments = append(fragments, *tc.Function.Arguments)
			}
		}
		require.NotNil(t, first, "a tool_calls delta")
		tc := first.Choices[0].Delta.ToolCalls[0]
		assert.NotEmpty(t, tc.ID)
		assert.Equal(t, "function", tc.Type)
		assert.Equal(t, "lookup", tc.Function.Name)
		require.NotNil(t, tc.Function.Arguments)
		assert.Equal(t, "{", *tc.Function.Arguments, "the first fragment opens the arguments")
		assert.Greater(t, len(fragments), 1, "then the arguments come in fragments")
		assert.Equal(t, "tool_calls", finish)
		rawArgs := "{" + strings.Join(fragments, "")

		streamed, _ := chat(t, tiny(base, false), hello(lookupDef))
		whole, _ := chat(t, tiny(base, true), hello(lookupDef))
		for _, r := range []*agent.Reply{streamed, whole} {
			assert.Equal(t, agent.FinishToolCalls, r.Finish)
			require.Len(t, r.Message.ToolCalls(), 1)
			c := r.Message.ToolCalls()[0]
			assert.Equal(t, "lookup", c.Name)
			assert.NotEmpty(t, c.ID)
			assert.Equal(t, rawArgs, c.Arguments, "the arguments as the model wrote them")
			var args struct{ Q *string }
			require.NoError(t, json.Unmarshal([]byte(c.Arguments), &args), c.Arguments)
			assert.NotNil(t, args.Q, "grammar-valid for the schema")
		}
	})

	t.Run("two calls in one turn", func(t *testing.T) {
		// The grammar allows several calls with parallel_tool_calls; the
		// tiny model makes two for some seeds, the same streamed or whole.
		one := 1.0
		for seed := 1; seed <= 20; seed++ {
			m := tiny(base, false)
			m.Temperature, m.Seed, m.MaxTokens = &one, &seed, 64
			m.Extra = map[string]any{"parallel_tool_calls": true}
			streamed, _ := chat(t, m, hello(lookupDef))
			if len(streamed.Message.ToolCalls()) < 2 || streamed.Finish != agent.FinishToolCalls {
				continue
			}
			m.NoStream = true
			whole, _ := chat(t, m, hello(lookupDef))
			for _, r := range []*agent.Reply{streamed, whole} {
				assert.Equal(t, agent.FinishToolCalls, r.Finish)
				ids := map[string]bool{}
				for _, c := range r.Message.ToolCalls() {
					ids[c.ID] = true
					var args map[string]any
					assert.NoError(t, json.Unmarshal([]byte(c.Arguments), &args), c.Arguments)
				}
				assert.Len(t, ids, len(r.Message.ToolCalls()), "distinct ids")
			}
			assert.Equal(t, callsOf(streamed), callsOf(whole), "seed %d", seed)
			return
		}
		t.Fatal("no seed of 1 to 20 made two whole calls in one turn")
	})
}

// callsOf renders a reply's calls without their ids, which the server
// draws at random.
func callsOf(r *agent.Reply) []string {
	var out []string
	for _, c := range r.Message.ToolCalls() {
		out = append(out, c.Name+" "+c.Arguments)
	}
	return out
}

func TestLlamaCppToolChoice(t *testing.T) {
	base := startLlama(t, nil)
	for _, tt := range []struct {
		choice agent.ToolChoice
		calls  bool
	}{
		{agent.ToolChoiceNone, false},
		{agent.ToolChoiceRequired, true},
		{agent.ToolChoiceAuto, true},
		// llama-server ignores a named tool: it answers as with auto.
		{"lookup", true},
	} {
		t.Run(string(tt.choice), func(t *testing.T) {
			m := tiny(base, true)
			m.MaxTokens = 24
			req := hello(lookupDef)
			req.ToolChoice = tt.choice
			reply, _ := chat(t, m, req)
			assert.Equal(t, tt.calls, len(reply.Message.ToolCalls()) > 0, "%+v", reply.Message)
		})
	}
}

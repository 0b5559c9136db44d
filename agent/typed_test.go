package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/openai"
	"git.rickub.com/bots-garden/mini-me/agent/openai/openaitest"
)

type forecast struct {
	City string  `json:"city" jsonschema:"the city"`
	Temp float64 `json:"temp" jsonschema:"degrees Celsius"`
	Sky  string  `json:"sky"`
}

// schemaOf is the schema the agent should infer for T.
func schemaOf[T any](t *testing.T) string {
	t.Helper()
	s, err := jsonschema.For[T](nil)
	require.NoError(t, err)
	b, err := json.Marshal(s)
	require.NoError(t, err)
	return string(b)
}

// typedLLM starts a scripted model speaking dialect.
func typedLLM(t *testing.T, dialect openaitest.Dialect, turns ...openaitest.Turn) (*openaitest.Server, *openai.Model) {
	t.Helper()
	return wire{dialect: dialect}.start(t, turns...)
}

const parisJSON = `{"city":"Paris","temp":18.5,"sky":"clear"}`

var paris = forecast{City: "Paris", Temp: 18.5, Sky: "clear"}

func TestRunTypedDialects(t *testing.T) {
	for _, d := range openaitest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			s, m := typedLLM(t, d, openaitest.Turn{Text: parisJSON})
			var ev recorder
			v, res, err := agent.RunTyped[forecast](context.Background(), &agent.Agent{Model: m}, user("Weather in Paris?"), ev.on)
			require.NoError(t, err)
			assert.Equal(t, paris, v)
			assert.Equal(t, agent.StopAnswer, res.Stop)
			assert.Equal(t, parisJSON, res.Answer)
			assert.Equal(t, 1, res.Turns, "no tools: the answer is asked for at once")
			assert.Empty(t, ev.warnings())

			reqs := s.Requests()
			require.Len(t, reqs, 1)
			assert.JSONEq(t, schemaOf[forecast](t), string(reqs[0].Schema), "the server holds the reply to T's schema")
			assert.Empty(t, reqs[0].Tools)
			sys := reqs[0].Messages[0]
			assert.Equal(t, "system", sys.Role)
			assert.Contains(t, sys.Content, `"city":{"type":"string","description":"the city"}`, "the model reads the schema")
			assert.Contains(t, sys.Content, "the JSON object alone")
			assert.Equal(t, []agent.Role{agent.RoleUser, agent.RoleAssistant}, roles(res.Messages))
			requireResumable(t, res.Messages)
		})
	}
}

// OpenAI refuses strict mode for a schema with an optional property: it is
// sent without.
func TestRunTypedStrict(t *testing.T) {
	type withOptional struct {
		City string `json:"city"`
		Note string `json:"note,omitempty"`
	}
	type nestedOptional struct {
		Days []withOptional `json:"days"`
	}
	s, m := typedLLM(t, openaitest.DialectOpenAI, openaitest.Turn{Text: parisJSON}, openaitest.Turn{Text: `{"city":"Paris"}`},
		openaitest.Turn{Text: `{"days":[{"city":"Paris","note":"rain"}]}`})
	_, _, err := agent.RunTyped[forecast](context.Background(), &agent.Agent{Model: m}, user("?"), nil)
	require.NoError(t, err)
	v, _, err := agent.RunTyped[withOptional](context.Background(), &agent.Agent{Model: m}, user("?"), nil)
	require.NoError(t, err)
	assert.Equal(t, withOptional{City: "Paris"}, v)
	n, res, err := agent.RunTyped[nestedOptional](context.Background(), &agent.Agent{Model: m}, user("?"), nil)
	require.NoError(t, err)
	assert.Empty(t, res.Warnings, "OpenAI took the schema")
	assert.Equal(t, nestedOptional{Days: []withOptional{{City: "Paris", Note: "rain"}}}, n)
	reqs := s.Requests()
	require.Len(t, reqs, 3)
	assert.True(t, reqs[0].Strict)
	assert.False(t, reqs[1].Strict)
	assert.False(t, reqs[2].Strict, "an optional property in an array's items")
	assert.JSONEq(t, schemaOf[nestedOptional](t), string(reqs[2].Schema))
	assert.JSONEq(t, `{"type":"json_schema","json_schema":{"name":"withOptional","strict":false,"schema":`+schemaOf[withOptional](t)+`}}`,
		string(reqs[1].ResponseFormat))
}

// With tools, the run goes on as usual, the schema in the system prompt
// only, and the answer is asked for once the model stops calling tools.
func TestRunTypedWithTools(t *testing.T) {
	for _, d := range openaitest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			s, m := typedLLM(t, d,
				openaitest.Turn{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "weather", Arguments: `{"city":"Paris"}`}}},
				openaitest.Turn{Text: "It is clear and 18.5 °C in Paris."},
				openaitest.Turn{Text: parisJSON},
			)
			a := &agent.Agent{Model: m, Funcs: []*agent.Func{weatherFunc(t)}, Policy: allowAll()}
			v, res, err := agent.RunTyped[forecast](context.Background(), a, user("Weather in Paris?"), nil)
			require.NoError(t, err)
			assert.Equal(t, paris, v)
			assert.Equal(t, 3, res.Turns)
			reqs := s.Requests()
			require.Len(t, reqs, 3)
			for _, r := range reqs[:2] {
				assert.Nil(t, r.ResponseFormat, "no response format while tools are offered")
				assert.Nil(t, r.Schema)
				require.Len(t, r.Tools, 1)
				assert.Contains(t, r.Messages[0].Content, `"sky":{"type":"string"}`, "the model knows what the answer needs")
			}
			assert.Empty(t, reqs[2].Tools)
			assert.JSONEq(t, schemaOf[forecast](t), string(reqs[2].Schema))
			last := reqs[2].Messages[len(reqs[2].Messages)-1]
			assert.Equal(t, "user", last.Role)
			assert.Contains(t, last.Content, "the JSON object alone")
			assert.Equal(t, []agent.Role{agent.RoleUser, agent.RoleAssistant, agent.RoleTool, agent.RoleAssistant, agent.RoleUser, agent.RoleAssistant},
				roles(res.Messages))
			requireResumable(t, res.Messages)
		})
	}
}

func weatherFunc(t *testing.T) *agent.Func {
	t.Helper()
	f, err := agent.NewFunc("weather", "Current weather in a city", func(_ context.Context, in struct {
		City string `json:"city"`
	}) (string, error) {
		return "clear, 18.5 °C in " + in.City, nil
	})
	require.NoError(t, err)
	return f
}

// A model that cannot be held to a schema answers through AnswerTool.
func TestRunTypedAnswerTool(t *testing.T) {
	s, m := typedLLM(t, openaitest.DialectOllama, openaitest.Turn{ToolCalls: []openaitest.ToolCall{{ID: "a1", Name: agent.AnswerTool, Arguments: parisJSON}}})
	m.NoResponseFormat = true
	v, res, err := agent.RunTyped[forecast](context.Background(), &agent.Agent{Model: m}, user("Weather in Paris?"), nil)
	require.NoError(t, err)
	assert.Equal(t, paris, v)
	assert.Equal(t, parisJSON, res.Answer)
	reqs := s.Requests()
	require.Len(t, reqs, 1)
	assert.Nil(t, reqs[0].ResponseFormat)
	require.Len(t, reqs[0].Tools, 1)
	assert.Equal(t, agent.AnswerTool, reqs[0].Tools[0].Name)
	assert.JSONEq(t, `"required"`, string(reqs[0].ToolChoice))
	assert.JSONEq(t, schemaOf[forecast](t), string(reqs[0].Tools[0].Parameters))
	assert.Contains(t, reqs[0].Messages[0].Content, `by calling the tool "answer"`)
	assert.Equal(t, []agent.Role{agent.RoleUser, agent.RoleAssistant, agent.RoleTool}, roles(res.Messages), "the answer call is answered")
	requireResumable(t, res.Messages)
}

// A model that ignores the tool choice and answers in text is understood.
func TestRunTypedAnswerToolText(t *testing.T) {
	_, m := typedLLM(t, openaitest.DialectOllama, openaitest.Turn{Text: parisJSON})
	m.NoResponseFormat = true
	v, res, err := agent.RunTyped[forecast](context.Background(), &agent.Agent{Model: m}, user("?"), nil)
	require.NoError(t, err)
	assert.Equal(t, paris, v)
	assert.Equal(t, []agent.Role{agent.RoleUser, agent.RoleAssistant}, roles(res.Messages))
}

// A model that answers wrong is told what is wrong, and asked once more.
func TestRunTypedRetry(t *testing.T) {
	t.Run("schema", func(t *testing.T) {
		s, m := typedLLM(t, openaitest.DialectLlamaCpp,
			openaitest.Turn{Text: `{"city":"Paris","temp":"warm"}`},
			openaitest.Turn{Text: parisJSON})
		v, res, err := agent.RunTyped[forecast](context.Background(), &agent.Agent{Model: m}, user("?"), nil)
		require.NoError(t, err)
		assert.Equal(t, paris, v)
		assert.Equal(t, 2, res.Turns)
		reqs := s.Requests()
		require.Len(t, reqs, 2)
		fix := reqs[1].Messages[len(reqs[1].Messages)-1]
		assert.Equal(t, "user", fix.Role)
		assert.Contains(t, fix.Content, `missing required property "sky"`)
		assert.Contains(t, fix.Content, "temp", "every problem is told at once")
		assert.NotContains(t, fix.Content, "arguments", "the problem is worded for an answer")
		assert.JSONEq(t, schemaOf[forecast](t), string(reqs[1].Schema))
		requireResumable(t, res.Messages)
	})
	t.Run("tool", func(t *testing.T) {
		s, m := typedLLM(t, openaitest.DialectOpenAI,
			openaitest.Turn{Text: "It is clear."}, // no call, no JSON
			openaitest.Turn{ToolCalls: []openaitest.ToolCall{{ID: "a2", Name: agent.AnswerTool, Arguments: `{"city":"Paris","temp":18.5}`}}},
		)
		m.NoResponseFormat = true
		_, res, err := agent.RunTyped[forecast](context.Background(), &agent.Agent{Model: m}, user("?"), nil)
		var ae *agent.AnswerError
		require.ErrorAs(t, err, &ae)
		assert.Equal(t, `{"city":"Paris","temp":18.5}`, ae.Raw)
		assert.Contains(t, ae.Problem, `missing required property "sky"`)
		assert.Equal(t, agent.StopError, res.Stop)
		reqs := s.Requests()
		require.Len(t, reqs, 2)
		fix := reqs[1].Messages[len(reqs[1].Messages)-1]
		assert.Equal(t, "user", fix.Role)
		assert.Contains(t, fix.Content, "it is not valid JSON")
		assert.Equal(t, []agent.Role{agent.RoleUser, agent.RoleAssistant, agent.RoleUser, agent.RoleAssistant, agent.RoleTool}, roles(res.Messages))
		assert.Contains(t, res.Messages[4].Text(), `missing required property "sky"`, "the failed answer call is answered")
		requireResumable(t, res.Messages)
	})
}

// Two wrong answers give an AnswerError with the last one.
func TestRunTypedAnswerError(t *testing.T) {
	_, m := typedLLM(t, openaitest.DialectOllama, openaitest.Turn{Text: `{"city":1}`}, openaitest.Turn{Text: "Paris, clear"})
	v, res, err := agent.RunTyped[forecast](context.Background(), &agent.Agent{Model: m}, user("?"), nil)
	var ae *agent.AnswerError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "Paris, clear", ae.Raw)
	assert.Equal(t, "it is not valid JSON: Paris, clear", ae.Problem)
	assert.Equal(t, "agent: the model's answer does not match the schema: it is not valid JSON: Paris, clear", err.Error())
	assert.Zero(t, v)
	assert.Equal(t, agent.StopError, res.Stop)
	assert.Equal(t, 2, res.Turns)
	requireResumable(t, res.Messages)
}

// What small models get wrong in JSON is repaired, and said.
func TestRunTypedRepaired(t *testing.T) {
	_, m := typedLLM(t, openaitest.DialectOllama, openaitest.Turn{Text: "```json\n{'city':'Paris','temp':18.5,'sky':'clear',}\n```"})
	var ev recorder
	v, res, err := agent.RunTyped[forecast](context.Background(), &agent.Agent{Model: m}, user("?"), ev.on)
	require.NoError(t, err)
	assert.Equal(t, paris, v)
	assert.Equal(t, []agent.WarningKind{agent.WarnTypedAnswer}, ev.warnings())
	assert.Contains(t, res.Warnings[0].Message, "code fence removed")
}

// A server that refuses the response format is asked through AnswerTool.
func TestRunTypedRefusedFormat(t *testing.T) {
	s, m := typedLLM(t, openaitest.DialectOpenAI,
		openaitest.Turn{Status: 400, Error: "response_format is not supported by this model"},
		openaitest.Turn{ToolCalls: []openaitest.ToolCall{{ID: "a1", Name: agent.AnswerTool, Arguments: parisJSON}}})
	var ev recorder
	v, _, err := agent.RunTyped[forecast](context.Background(), &agent.Agent{Model: m}, user("?"), ev.on)
	require.NoError(t, err)
	assert.Equal(t, paris, v)
	assert.Equal(t, []agent.WarningKind{agent.WarnTypedAnswer}, ev.warnings())
	reqs := s.Requests()
	require.Len(t, reqs, 2)
	assert.NotNil(t, reqs[0].ResponseFormat)
	assert.Nil(t, reqs[1].ResponseFormat)
	require.Len(t, reqs[1].Tools, 1)
	assert.Equal(t, agent.AnswerTool, reqs[1].Tools[0].Name)
}

// Other model errors are returned as they are.
func TestRunTypedModelError(t *testing.T) {
	_, m := typedLLM(t, openaitest.DialectOpenAI, openaitest.Turn{Status: 500, Error: "boom"})
	_, res, err := agent.RunTyped[forecast](context.Background(), &agent.Agent{Model: m}, user("?"), nil)
	var apiErr *openai.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 500, apiErr.StatusCode)
	assert.Equal(t, agent.StopError, res.Stop)
}

func TestRunTypedCanceled(t *testing.T) {
	_, m := typedLLM(t, openaitest.DialectLlamaCpp, openaitest.Turn{Text: `{"city":`, Hang: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, res, err := agent.RunTyped[forecast](ctx, &agent.Agent{Model: m}, user("?"), func(e agent.Event) {
		if _, ok := e.(*agent.TextDelta); ok {
			cancel() // the answer has started streaming
		}
	})
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, agent.StopCanceled, res.Stop)
	requireResumable(t, res.Messages)
}

// A limit during the tool run ends the run as Run would.
func TestRunTypedLimit(t *testing.T) {
	call := openaitest.Turn{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "weather", Arguments: `{"city":"Paris"}`}}}
	s, m := typedLLM(t, openaitest.DialectOpenAI, call)
	a := &agent.Agent{Model: m, Funcs: []*agent.Func{weatherFunc(t)}, Policy: allowAll(), MaxTurns: 1}
	_, res, err := agent.RunTyped[forecast](context.Background(), a, user("?"), nil)
	require.ErrorIs(t, err, agent.ErrMaxTurns)
	assert.Equal(t, agent.StopMaxTurns, res.Stop)
	assert.Len(t, s.Requests(), 1)
}

func TestRunTypedBadType(t *testing.T) {
	s, m := typedLLM(t, openaitest.DialectOpenAI)
	_, res, err := agent.RunTyped[[]string](context.Background(), &agent.Agent{Model: m}, user("?"), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "a typed answer type must be a struct or a map with string keys, not a JSON null or array ([]string)")
	assert.Equal(t, agent.StopError, res.Stop)
	assert.Equal(t, user("?"), res.Messages)
	assert.Empty(t, s.Requests())

	_, _, err = agent.RunTyped[forecast](context.Background(), &agent.Agent{}, user("?"), nil)
	require.Error(t, err)
	assert.False(t, errors.As(err, new(*agent.AnswerError)))
	assert.True(t, strings.Contains(err.Error(), "Model is nil"), err.Error())
}

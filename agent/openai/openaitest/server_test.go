package openaitest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"git.rickub.com/bots-garden/mini-me/agent/openai/openaitest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func post(t *testing.T, url, body string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Post(url+"/chat/completions", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(b)
}

// deltas reads a stream: each chunk's delta and finish reason, "usage"
// for a usage chunk, "timings" after a chunk that has them and "ping" for
// a comment.
func deltas(t *testing.T, body string) []string {
	t.Helper()
	var out []string
	events := strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n")
	require.Equal(t, "data: [DONE]", events[len(events)-1])
	for _, ev := range events[:len(events)-1] {
		if ev == ":" {
			out = append(out, "ping")
			continue
		}
		require.True(t, strings.HasPrefix(ev, "data: "), ev)
		var chunk struct {
			Object  string `json:"object"`
			Choices []struct {
				Delta        json.RawMessage `json:"delta"`
				FinishReason *string         `json:"finish_reason"`
			} `json:"choices"`
			Usage   *openaitest.Usage `json:"usage"`
			Timings json.RawMessage   `json:"timings"`
		}
		require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(ev, "data: ")), &chunk))
		assert.Equal(t, "chat.completion.chunk", chunk.Object)
		if len(chunk.Choices) == 0 {
			assert.Equal(t, &openaitest.Usage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3}, chunk.Usage)
			out = append(out, "usage")
		} else {
			d := string(chunk.Choices[0].Delta)
			if f := chunk.Choices[0].FinishReason; f != nil {
				d += " " + *f
			}
			out = append(out, d)
		}
		if chunk.Timings != nil {
			out = append(out, "timings")
		}
	}
	return out
}

func TestStream(t *testing.T) {
	turn := openaitest.Turn{
		Text: "héllo", Reasoning: "hm",
		ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "f", Arguments: `{"a":1}`}, {ID: "c2", Name: "find_it", Arguments: `{ "b" : 2 }`}},
		Usage:     &openaitest.Usage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3},
	}
	for _, tt := range []struct {
		dialect openaitest.Dialect
		want    []string
	}{{openaitest.DialectOpenAI, []string{
		`{"content":"","role":"assistant"}`,
		`{"reasoning_content":"hm"}`,
		`{"content":"hé"}`, `{"content":"llo"}`,
		`{"tool_calls":[{"function":{"arguments":"","name":"f"},"id":"c1","index":0,"type":"function"}]}`,
		`{"tool_calls":[{"function":{"arguments":"{\"a"},"index":0}]}`,
		`{"tool_calls":[{"function":{"arguments":"\":1"},"index":0}]}`,
		`{"tool_calls":[{"function":{"arguments":"}"},"index":0}]}`,
		`{"tool_calls":[{"function":{"arguments":"","name":"find_it"},"id":"c2","index":1,"type":"function"}]}`,
		`{"tool_calls":[{"function":{"arguments":"{ \""},"index":1}]}`,
		`{"tool_calls":[{"function":{"arguments":"b\" "},"index":1}]}`,
		`{"tool_calls":[{"function":{"arguments":": 2"},"index":1}]}`,
		`{"tool_calls":[{"function":{"arguments":" }"},"index":1}]}`,
		`{} tool_calls`,
		"usage",
	}}, {openaitest.DialectLlamaCpp, []string{
		"ping",
		`{"content":null,"role":"assistant"}`,
		`{"reasoning_content":"hm"}`,
		`{"content":"hé"}`, `{"content":"llo"}`,
		`{"tool_calls":[{"function":{"arguments":"{\"a","name":"f"},"id":"c1","index":0,"type":"function"}]}`,
		`{"tool_calls":[{"function":{"arguments":"\":1"},"index":0}]}`,
		`{"tool_calls":[{"function":{"arguments":"}"},"index":0}]}`,
		`{"tool_calls":[{"function":{"name":"fin"},"id":"c2","index":1,"type":"function"}]}`,
		`{"tool_calls":[{"function":{"arguments":"{ \"","name":"find_it"},"id":"c2","index":1,"type":"function"}]}`,
		`{"tool_calls":[{"function":{"arguments":"b\" "},"index":1}]}`,
		`{"tool_calls":[{"function":{"arguments":": 2"},"index":1}]}`,
		`{"tool_calls":[{"function":{"arguments":" }"},"index":1}]}`,
		`{} tool_calls`,
		"usage", "timings",
	}}, {openaitest.DialectOllama, []string{
		`{"content":"","reasoning":"hm","role":"assistant"}`,
		`{"content":"hé","role":"assistant"}`, `{"content":"llo","role":"assistant"}`,
		`{"content":"","role":"assistant","tool_calls":[{"function":{"arguments":"{\"a\":1}","name":"f"},"id":"c1","index":0,"type":"function"}]}`,
		`{"content":"","role":"assistant","tool_calls":[{"function":{"arguments":"{\"b\":2}","name":"find_it"},"id":"c2","index":1,"type":"function"}]}`,
		`{"content":"","role":"assistant"} stop`,
		"usage",
	}}} {
		t.Run(string(tt.dialect), func(t *testing.T) {
			s := &openaitest.Server{ChunkSize: 3, Dialect: tt.dialect, Turns: []openaitest.Turn{turn}}
			url := s.Start()
			defer s.Close()
			resp, body := post(t, url, `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`)
			assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
			assert.Equal(t, tt.want, deltas(t, body))
			assert.Equal(t, tt.dialect == openaitest.DialectOpenAI, strings.Contains(body, `"usage":null`), "OpenAI's chunks say usage null")
			reqs := s.Requests()
			require.Len(t, reqs, 1)
			assert.True(t, reqs[0].Stream)
			assert.True(t, reqs[0].IncludeUsage)
			assert.Equal(t, []openaitest.Message{{Role: "user", Content: "hi"}}, reqs[0].Messages)
		})
	}
	t.Run("usage only when asked", func(t *testing.T) {
		for _, d := range openaitest.Dialects() {
			s := &openaitest.Server{Dialect: d, Turns: []openaitest.Turn{{Text: "hi", Usage: &openaitest.Usage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3}}}}
			url := s.Start()
			_, body := post(t, url, `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
			s.Close()
			got := deltas(t, body)
			assert.NotContains(t, got, "usage", d)
			assert.True(t, slices.ContainsFunc(got, func(d string) bool { return strings.HasSuffix(d, " stop") }), "%s: %v", d, got)
		}
	})
}

// Each dialect's whole answer to a turn that only calls tools.
func TestWholeDialects(t *testing.T) {
	turn := openaitest.Turn{Reasoning: "hm", ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "f", Arguments: `{ "a": 1 }`}},
		Usage: &openaitest.Usage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3}}
	for d, want := range map[openaitest.Dialect]string{
		openaitest.DialectOpenAI: `{"role":"assistant","content":null,"reasoning_content":"hm",
			"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{ \"a\": 1 }"}}]}`,
		openaitest.DialectLlamaCpp: `{"role":"assistant","content":"","reasoning_content":"hm",
			"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{ \"a\": 1 }"}}]}`,
		openaitest.DialectOllama: `{"role":"assistant","content":"","reasoning":"hm",
			"tool_calls":[{"id":"c1","index":0,"type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]}`,
	} {
		s := &openaitest.Server{Dialect: d, Turns: []openaitest.Turn{turn}}
		url := s.Start()
		_, body := post(t, url, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
		s.Close()
		var resp struct {
			Choices []struct {
				Message      json.RawMessage `json:"message"`
				FinishReason string          `json:"finish_reason"`
			} `json:"choices"`
			Usage   openaitest.Usage `json:"usage"`
			Timings json.RawMessage  `json:"timings"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &resp), d)
		require.Len(t, resp.Choices, 1, d)
		assert.JSONEq(t, want, string(resp.Choices[0].Message), d)
		assert.Equal(t, "tool_calls", resp.Choices[0].FinishReason, d)
		assert.Equal(t, openaitest.Usage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3}, resp.Usage, d)
		assert.Equal(t, d == openaitest.DialectLlamaCpp, resp.Timings != nil, d)
	}
}

func TestWholeAndErrors(t *testing.T) {
	s := &openaitest.Server{Turns: []openaitest.Turn{
		{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "f", Arguments: `{}`}}},
		{Status: 429, Error: "slow down", RetryAfter: "2"},
		{Status: 400, ErrorBody: `{"error":{"code":400,"type":"exceed_context_size_error","n_ctx":8}}`},
	}}
	url := s.Start()
	defer s.Close()
	msgs := `"messages":[{"role":"user","content":"hi"}]`

	_, body := post(t, url, `{"model":"m","tool_choice":"required",`+msgs+`}`)
	assert.JSONEq(t, `{"id":"chatcmpl-openaitest-1","object":"chat.completion","created":1700000000,"model":"m",
		"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,
		"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}}],
		"usage":{"prompt_tokens":20,"completion_tokens":1,"total_tokens":21}}`, body) // 81 request bytes / 4

	resp, body := post(t, url, `{`+msgs+`}`)
	assert.Equal(t, 429, resp.StatusCode)
	assert.Equal(t, "2", resp.Header.Get("Retry-After"))
	assert.JSONEq(t, `{"error":{"message":"slow down","type":"rate_limit_error","param":null,"code":429}}`, body)

	resp, body = post(t, url, `{`+msgs+`}`)
	assert.Equal(t, 400, resp.StatusCode)
	assert.Equal(t, `{"error":{"code":400,"type":"exceed_context_size_error","n_ctx":8}}`, body)

	resp, body = post(t, url, `{`+msgs+`}`)
	assert.Equal(t, 500, resp.StatusCode)
	assert.Contains(t, body, "no scripted turn left for request 4")

	for _, bad := range []string{`{`, `{"messages":[]}`, `{"messages":[{"role":"user"}]}`,
		`{"messages":[{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"f","arguments":"{bad"}}]}]}`} {
		resp, body = post(t, url, bad)
		assert.Equal(t, 400, resp.StatusCode, bad)
		assert.Contains(t, body, "invalid_request_error")
	}
	reqs := s.Requests()
	assert.Len(t, reqs, 4, "malformed requests are not recorded")
	assert.Equal(t, `"required"`, string(reqs[0].ToolChoice))
	assert.Nil(t, reqs[1].ToolChoice)
}

// Each dialect takes the schema from where its server does, and refuses
// what it refuses.
func TestDialectSchema(t *testing.T) {
	const obj = `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`
	const loose = `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["a"]}`
	wrapped := func(name, schema string, strict bool) string {
		s := "false"
		if strict {
			s = "true"
		}
		return `"response_format":{"type":"json_schema","json_schema":{"name":"` + name + `","strict":` + s + `,"schema":` + schema + `}}`
	}
	cases := []struct {
		dialect      openaitest.Dialect
		member       string
		schema, fail string
		strict       bool
	}{
		{openaitest.DialectOpenAI, wrapped("x", obj, true), obj, "", true},
		{openaitest.DialectOpenAI, wrapped("x", loose, false), loose, "", false},
		{openaitest.DialectOpenAI, wrapped("x", loose, true), "", "'additionalProperties' is required to be supplied and to be false", false},
		{openaitest.DialectOpenAI, wrapped("x y", obj, false), "", "json_schema.name", false},
		{openaitest.DialectOpenAI, wrapped("x", `{"type":"string"}`, false), "", "the root must be an object", false},
		{openaitest.DialectOpenAI, `"response_format":{"type":"json_object"}`, "", "", false},
		{openaitest.DialectOpenAI, `"response_format":{"type":"grammar"}`, "", "invalid value for response_format.type", false},
		{openaitest.DialectLlamaCpp, wrapped("x y", loose, true), loose, "", false},
		{openaitest.DialectLlamaCpp, `"response_format":{"type":"json_object","schema":` + obj + `}`, obj, "", false},
		{openaitest.DialectLlamaCpp, `"json_schema":` + obj, obj, "", false},
		{openaitest.DialectLlamaCpp, `"json_schema":` + obj + `,"response_format":{"type":"json_object"}`, obj, "", false},
		{openaitest.DialectLlamaCpp, `"response_format":{"type":"json_object"}`, `{"type":"object"}`, "", false},
		{openaitest.DialectLlamaCpp, `"response_format":{"type":"grammar"}`, "", "but got: grammar", false},
		{openaitest.DialectOllama, wrapped("x y", loose, true), loose, "", false},
		{openaitest.DialectOllama, `"response_format":{"type":"json_object","schema":` + obj + `}`, "", "", false},
		{openaitest.DialectOllama, `"json_schema":` + obj, "", "", false},
	}
	for _, c := range cases {
		s := &openaitest.Server{Dialect: c.dialect, Turns: []openaitest.Turn{{Text: "{}"}}}
		url := s.Start()
		resp, body := post(t, url, `{"messages":[{"role":"user","content":"hi"}],`+c.member+`}`)
		s.Close()
		if c.fail != "" {
			assert.Equal(t, 400, resp.StatusCode, c.member)
			assert.Contains(t, body, c.fail, c.member)
			assert.Empty(t, s.Requests())
			continue
		}
		require.Equal(t, 200, resp.StatusCode, "%s %s: %s", c.dialect, c.member, body)
		reqs := s.Requests()
		require.Len(t, reqs, 1)
		if c.schema == "" {
			assert.Nil(t, reqs[0].Schema, "%s %s", c.dialect, c.member)
		} else {
			assert.JSONEq(t, c.schema, string(reqs[0].Schema), "%s %s", c.dialect, c.member)
		}
		assert.Equal(t, c.strict, reqs[0].Strict, "%s %s", c.dialect, c.member)
	}
}

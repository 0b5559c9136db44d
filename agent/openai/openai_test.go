package openai_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/openai"
	"git.rickub.com/bots-garden/mini-me/agent/openai/openaitest"
	"git.rickub.com/bots-garden/mini-me/sse"
)

// serveFile answers every request with the fixture file and content type.
func serveFile(t *testing.T, name, contentType string) string {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// bodyTransport answers every request with body, without a network.
type bodyTransport struct {
	contentType string
	body        []byte
}

func (bt bodyTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {bt.contentType}},
		Body: io.NopCloser(bytes.NewReader(bt.body))}, nil
}

var userHello = &agent.ChatRequest{Messages: []agent.Message{agent.UserMessage("hello")}}

// collect calls m.Chat and gathers the deltas.
func collect(t *testing.T, m agent.Model) (*agent.Reply, agent.Delta, error) {
	t.Helper()
	var all agent.Delta
	reply, err := m.Chat(context.Background(), userHello, func(d agent.Delta) {
		all.Text += d.Text
		all.Reasoning += d.Reasoning
	})
	return reply, all, err
}

func TestOpenAIFixtures(t *testing.T) {
	weather := agent.ToolCall{Name: "get_weather", Arguments: `{"location": "Paris, France"}`}
	tests := []struct {
		file, contentType string
		calls             []agent.ToolCall
		text, reasoning   string
		finish            agent.FinishReason
		usage             agent.Usage
	}{
		{
			file: "openai_tool_calls.sse", contentType: "text/event-stream",
			calls: []agent.ToolCall{
				{ID: "call_Wn4PqT0cRkLs", Name: "get_weather", Arguments: `{"location": "Paris, France"}`},
				{ID: "call_8FhZ2yUvNqAe", Name: "get_time", Arguments: `{"timezone": "Europe/Paris"}`},
			},
			finish: agent.FinishToolCalls, usage: agent.Usage{PromptTokens: 92, CompletionTokens: 48, TotalTokens: 140},
		},
		{
			file: "openai_text.sse", contentType: "text/event-stream; charset=utf-8",
			text: "It is 18 °C and sunny in Paris.", finish: agent.FinishStop,
			usage: agent.Usage{PromptTokens: 171, CompletionTokens: 11, TotalTokens: 182},
		},
		{
			file: "ollama_tool_calls.sse", contentType: "text/event-stream",
			calls: []agent.ToolCall{
				{ID: "call_k2x9wq4m", Name: "get_weather", Arguments: `{"location":"Paris, France"}`},
				{ID: "call_p7d3rt8z", Name: "get_time", Arguments: `{"timezone":"Europe/Paris"}`},
			},
			reasoning: "The user wants the weather in Paris; I will call the tool.",
			finish:    agent.FinishToolCalls, usage: agent.Usage{PromptTokens: 233, CompletionTokens: 61, TotalTokens: 294},
		},
		{
			file: "ollama_text.sse", contentType: "text/event-stream",
			text: "Paris is sunny, 18 °C.", finish: agent.FinishStop,
		},
		{
			file: "llamacpp_tool_calls.sse", contentType: "text/event-stream",
			calls:  []agent.ToolCall{{ID: "Xq2ZbN8wTkPr4LmVa9EyC1HdJ6sFu3Go", Name: "get_weather", Arguments: `{"location":"Paris, France"}`}},
			finish: agent.FinishToolCalls, usage: agent.Usage{PromptTokens: 305, CompletionTokens: 24, TotalTokens: 329},
		},
		{
			file: "llamacpp_reasoning.sse", contentType: "text/event-stream",
			text: "Sunny, 18 °C.", reasoning: "The tool said 18 °C and sunny.",
			finish: agent.FinishStop, usage: agent.Usage{PromptTokens: 412, CompletionTokens: 17, TotalTokens: 429},
		},
		{
			file: "openai_whole.json", contentType: "application/json",
			calls:  []agent.ToolCall{{ID: "call_Rt5YuI8oPaSd", Name: weather.Name, Arguments: `{"location":"Paris, France"}`}},
			finish: agent.FinishToolCalls, usage: agent.Usage{PromptTokens: 82, CompletionTokens: 17, TotalTokens: 99},
		},
		{
			file: "ollama_whole.json", contentType: "application/json",
			calls:     []agent.ToolCall{{ID: "call_z8q1mv5e", Name: weather.Name, Arguments: `{"location":"Paris, France"}`}},
			reasoning: "I need the weather tool.",
			finish:    agent.FinishToolCalls, usage: agent.Usage{PromptTokens: 233, CompletionTokens: 40, TotalTokens: 273},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			m := &openai.Model{BaseURL: serveFile(t, tt.file, tt.contentType), Model: "m"}
			reply, deltas, err := collect(t, m)
			require.NoError(t, err)
			assert.Equal(t, agent.RoleAssistant, reply.Message.Role)
			assert.Equal(t, tt.text, reply.Message.Text())
			assert.Equal(t, tt.text, deltas.Text, "the deltas add up to the text")
			assert.Equal(t, tt.reasoning, deltas.Reasoning)
			assert.Equal(t, tt.calls, reply.Message.ToolCalls())
			assert.Equal(t, tt.finish, reply.Finish)
			assert.Equal(t, tt.usage, reply.Usage)
		})
	}
}

func TestOpenAIStreamError(t *testing.T) {
	m := &openai.Model{BaseURL: serveFile(t, "llamacpp_error.sse", "text/event-stream")}
	_, _, err := collect(t, m)
	var apiErr *openai.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusOK, apiErr.StatusCode)
	assert.Equal(t, "server_error", apiErr.Type)
	assert.Equal(t, "500", apiErr.Code)
	assert.Contains(t, apiErr.Message, "Failed to parse tool call arguments")
}

// streamBody serves body as an event stream.
func streamBody(t *testing.T, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestOpenAIStreamQuirks(t *testing.T) {
	chunk := func(delta string, finish string) string {
		f := "null"
		if finish != "" {
			f = fmt.Sprintf("%q", finish)
		}
		return fmt.Sprintf("data: {\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}]}\n\n", delta, f)
	}
	tests := []struct {
		name  string
		body  string
		calls []agent.ToolCall
		err   string
	}{
		{
			name: "whole calls all at index 0",
			body: chunk(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"x","arguments":"{}"}}]}`, "") +
				chunk(`{"tool_calls":[{"index":0,"id":"b","function":{"name":"y","arguments":"{\"k\":1}"}}]}`, "tool_calls") + "data: [DONE]\n\n",
			calls: []agent.ToolCall{{ID: "a", Name: "x", Arguments: "{}"}, {ID: "b", Name: "y", Arguments: `{"k":1}`}},
		},
		{
			name: "no index, no id, arguments as an object",
			body: chunk(`{"tool_calls":[{"function":{"name":"x","arguments":{"a":[1,2]}}}]}`, "") +
				chunk(`{"tool_calls":[{"function":{"name":"y","arguments":""}}]}`, "") +
				chunk(`{}`, "tool_calls") + "data: [DONE]\n\n",
			calls: []agent.ToolCall{{ID: "call_1", Name: "x", Arguments: `{"a":[1,2]}`}, {ID: "call_2", Name: "y"}},
		},
		{
			name: "duplicate ids are made unique",
			body: chunk(`{"tool_calls":[{"index":0,"id":"call_2","function":{"name":"x","arguments":"{}"}},{"index":1,"id":"call_2","function":{"name":"y","arguments":"{}"}}]}`, "tool_calls") +
				"data: [DONE]\n\n",
			calls: []agent.ToolCall{{ID: "call_2", Name: "x", Arguments: "{}"}, {ID: "call_2x", Name: "y", Arguments: "{}"}},
		},
		{
			name:  "finished turn without [DONE]",
			body:  chunk(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"x","arguments":"{}"}}]}`, "tool_calls"),
			calls: []agent.ToolCall{{ID: "a", Name: "x", Arguments: "{}"}},
		},
		{
			name:  "finished turn, [DONE] without its blank line",
			body:  chunk(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"x","arguments":"{}"}}]}`, "tool_calls") + "data: [DONE]\n",
			calls: []agent.ToolCall{{ID: "a", Name: "x", Arguments: "{}"}},
		},
		{name: "stream cut before the end", body: chunk(`{"content":"Hel"}`, ""), err: "ended before the turn was finished"},
		{name: "stream cut inside an unfinished turn", body: chunk(`{"content":"Hel"}`, "") + "data: {\"choi", err: "unexpected EOF"},
		{name: "garbage chunk", body: "data: {not json\n\n", err: "malformed chunk"},
		{name: "call without a name", body: chunk(`{"tool_calls":[{"index":0,"id":"a","function":{"arguments":"{}"}}]}`, "stop"), err: "has no name"},
		{name: "error event", body: "event: error\ndata: {\"message\":\"model unloaded\"}\n\n", err: "status 200: model unloaded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &openai.Model{BaseURL: streamBody(t, tt.body)}
			reply, _, err := collect(t, m)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				assert.Nil(t, reply)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.calls, reply.Message.ToolCalls())
		})
	}
}

func TestOpenAIErrorBodies(t *testing.T) {
	t.Setenv("LLMTEST_KEY", "sk-test-0123456789")
	tests := []struct {
		name, body         string
		status             int
		message, typ, code string
		// prompt and ctx are the sizes of a request longer than the
		// context, and exceeded says it is one.
		prompt, ctx int
		exceeded    bool
	}{
		{"openai", `{"error":{"message":"Invalid 'messages': empty array.","type":"invalid_request_error","param":"messages","code":"empty_array"}}`,
			400, "Invalid 'messages': empty array.", "invalid_request_error", "empty_array", 0, 0, false},
		{"llama-server", `{"error":{"code":400,"message":"request (9000 tokens) exceeds the available context size (2048 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":2048}}`,
			400, "request (9000 tokens) exceeds the available context size (2048 tokens), try increasing it", "exceed_context_size_error", "400", 9000, 2048, true},
		{"openai context", `{"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
			400, "This model's maximum context length is 128000 tokens.", "invalid_request_error", "context_length_exceeded", 0, 0, true},
		{"llama-server schema", `{"error":{"code":400,"message":"JSON schema conversion failed:\nUnrecognized schema: {\"type\":\"float\"}","type":"invalid_request_error"}}`,
			400, `JSON schema conversion failed: Unrecognized schema: {"type":"float"}`, "invalid_request_error", "400", 0, 0, false},
		{"ollama native", `{"error":"model \"qwen3:4b\" not found, try pulling it first"}`,
			404, `model "qwen3:4b" not found, try pulling it first`, "", "", 0, 0, false},
		{"vllm", `{"object":"error","message":"max_tokens is too large","type":"BadRequestError","param":null,"code":400}`,
			400, "max_tokens is too large", "BadRequestError", "400", 0, 0, false},
		{"echoed key", `{"error":{"message":"Incorrect API key provided: sk-test-0123456789.","type":"invalid_request_error","code":"invalid_api_key"}}`,
			401, "Incorrect API key provided: [redacted].", "invalid_request_error", "invalid_api_key", 0, 0, false},
		{"plain text", "upstream connect error\x1b[0m", 502, "upstream connect error [0m", "", "", 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			m := &openai.Model{BaseURL: srv.URL, APIKeyEnv: "LLMTEST_KEY"}
			_, _, err := collect(t, m)
			var apiErr *openai.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, tt.status, apiErr.StatusCode)
			assert.Equal(t, tt.message, apiErr.Message)
			assert.Equal(t, tt.typ, apiErr.Type)
			assert.Equal(t, tt.code, apiErr.Code)
			assert.Equal(t, tt.prompt, apiErr.PromptTokens)
			assert.Equal(t, tt.ctx, apiErr.ContextSize)
			assert.Equal(t, tt.exceeded, errors.Is(err, agent.ErrContextExceeded))
			assert.Equal(t, fmt.Sprintf("agent: model endpoint %s/chat/completions: status %d: %s", srv.URL, tt.status, tt.message), err.Error())
			assert.NotContains(t, err.Error(), "sk-test-0123456789")
		})
	}
}

func TestOpenAIRetries(t *testing.T) {
	ok := openaitest.Turn{Text: "ok"}
	tests := []struct {
		name     string
		turns    []openaitest.Turn
		retries  int
		requests int
		status   int // of the error returned; 0 for success
	}{
		{"429 with Retry-After", []openaitest.Turn{{Status: 429, Error: "slow down", RetryAfter: "0"}, ok}, 0, 2, 0},
		{"503 without Retry-After", []openaitest.Turn{{Status: 503, Error: "loading model"}, {Status: 503, Error: "loading model"}, ok}, 0, 3, 0},
		{"429 without Retry-After is not retried", []openaitest.Turn{{Status: 429, Error: "quota exceeded"}, ok}, 0, 1, 429},
		{"a wait above MaxRetryWait is not retried", []openaitest.Turn{{Status: 429, Error: "slow down", RetryAfter: "3600"}, ok}, 0, 1, 429},
		{"500 is not retried", []openaitest.Turn{{Status: 500, Error: "boom"}, ok}, 0, 1, 500},
		{"retries are bounded", []openaitest.Turn{{Status: 503}, {Status: 503}, {Status: 503}, ok}, 2, 3, 503},
		{"negative MaxRetries never retries", []openaitest.Turn{{Status: 503}, ok}, -1, 1, 503},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &openaitest.Server{Turns: tt.turns}
			url := s.Start()
			defer s.Close()
			m := &openai.Model{BaseURL: url, MaxRetries: tt.retries, RetryDelay: time.Millisecond}
			reply, _, err := collect(t, m)
			assert.Len(t, s.Requests(), tt.requests)
			if tt.status == 0 {
				require.NoError(t, err)
				assert.Equal(t, "ok", reply.Message.Text())
				return
			}
			var apiErr *openai.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, tt.status, apiErr.StatusCode)
		})
	}
}

func TestOpenAIRetryAfterReported(t *testing.T) {
	s := &openaitest.Server{Turns: []openaitest.Turn{{Status: 429, Error: "slow down", RetryAfter: "120"}}}
	url := s.Start()
	defer s.Close()
	_, _, err := collect(t, &openai.Model{BaseURL: url})
	var apiErr *openai.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 2*time.Minute, apiErr.RetryAfter)
	assert.Equal(t, "rate_limit_error", apiErr.Type)
}

func TestOpenAIRequest(t *testing.T) {
	t.Setenv("LLMTEST_KEY", "sk-secret-42")
	s := &openaitest.Server{Turns: []openaitest.Turn{{Text: "a"}, {Text: "b"}}}
	url := s.Start()
	defer s.Close()
	temp, seed := 0.2, 7
	m := &openai.Model{
		BaseURL: url + "/", Model: "qwen3:4b", APIKeyEnv: "LLMTEST_KEY",
		Header:      http.Header{"X-Trace": {"t1"}},
		Temperature: &temp, Seed: &seed, MaxTokens: 256, Stop: []string{"</s>"},
		Extra: map[string]any{"cache_prompt": true, "top_k": 40},
	}
	req := &agent.ChatRequest{
		Messages: []agent.Message{
			agent.SystemMessage("be brief <really>"),
			agent.UserMessage("hi"),
			{Role: agent.RoleAssistant, Parts: agent.Parts("", []agent.ToolCall{{ID: "c1", Name: "t", Arguments: `{"a":1}`}}...)},
			{Role: agent.RoleTool, ToolCallID: "c1", Name: "t", Server: "s", Parts: []agent.Part{agent.ToolResultPart("out")}},
		},
		Tools: []agent.ToolDef{{Name: "t", Description: "a tool", Parameters: []byte(`{"type":"object","properties":{}}`)}},
	}
	_, err := m.Chat(context.Background(), req, nil)
	require.NoError(t, err)
	m.NoStream = true
	_, err = m.Chat(context.Background(), req, nil)
	require.NoError(t, err)

	reqs := s.Requests()
	require.Len(t, reqs, 2)
	got := reqs[0]
	assert.Equal(t, "Bearer sk-secret-42", got.Header.Get("Authorization"))
	assert.Equal(t, "t1", got.Header.Get("X-Trace"))
	assert.Equal(t, "qwen3:4b", got.Model)
	assert.True(t, got.Stream)
	assert.True(t, got.IncludeUsage)
	assert.Equal(t, []openaitest.Message{
		{Role: "system", Content: "be brief <really>"},
		{Role: "user", Content: "hi"},
		{Role: "assistant", ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "t", Arguments: `{"a":1}`}}},
		{Role: "tool", Content: "out", ToolCallID: "c1"},
	}, got.Messages)
	assert.Equal(t, []openaitest.Tool{{Name: "t", Description: "a tool", Parameters: []byte(`{"type":"object","properties":{}}`)}}, got.Tools)
	body := string(got.Body)
	for _, want := range []string{`"temperature":0.2`, `"seed":7`, `"max_tokens":256`, `"stop":["</s>"]`, `"cache_prompt":true`, `"top_k":40`, `<really>`} {
		assert.Contains(t, body, want)
	}
	assert.NotContains(t, body, `"server"`, "the host's bookkeeping stays out of the request")
	assert.False(t, reqs[1].Stream, "NoStream")
	assert.False(t, reqs[1].IncludeUsage)
}

func TestOpenAIConfigErrors(t *testing.T) {
	t.Setenv("LLMTEST_EMPTY", "")
	tests := []struct {
		name string
		m    *openai.Model
		err  string
	}{
		{"no base URL", &openai.Model{}, "agent: model request: Model.BaseURL is empty"},
		{"bad scheme", &openai.Model{BaseURL: "ftp://localhost/v1"}, "scheme is not http or https"},
		{"no host", &openai.Model{BaseURL: "http:///v1"}, "has no host"},
		{"credentials in the URL", &openai.Model{BaseURL: "http://user:pw@localhost/v1"}, "holds credentials"},
		{"key variable empty", &openai.Model{BaseURL: "http://127.0.0.1:1/v1", APIKeyEnv: "LLMTEST_EMPTY"},
			"environment variable LLMTEST_EMPTY, which should hold the API key, is set but empty"},
		{"socket and client", &openai.Model{BaseURL: "http://localhost/v1", UnixSocket: "/x", HTTPClient: &http.Client{}}, "both set"},
		{"extra replaces a field", &openai.Model{BaseURL: "http://127.0.0.1:1/v1", Extra: map[string]any{"messages": 1}}, `sets "messages"`},
		{"extra cannot encode", &openai.Model{BaseURL: "http://127.0.0.1:1/v1", Extra: map[string]any{"f": func() {}}}, `Extra["f"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.m.Chat(context.Background(), userHello, nil)
			require.ErrorContains(t, err, tt.err)
			assert.False(t, strings.Contains(err.Error(), "pw"), "no credentials in errors")
		})
	}
}

func TestOpenAILocal(t *testing.T) {
	tests := []struct {
		m     *openai.Model
		local bool
	}{
		{&openai.Model{BaseURL: "http://localhost:11434/v1"}, true},
		{&openai.Model{BaseURL: "http://127.0.0.1:8080/v1"}, true},
		{&openai.Model{BaseURL: "http://127.8.9.10:8080/v1"}, true},
		{&openai.Model{BaseURL: "http://[::1]:8080/v1"}, true},
		{&openai.Model{BaseURL: "http://models.localhost/v1"}, true},
		{&openai.Model{BaseURL: "http://LOCALHOST./v1"}, true},
		{&openai.Model{BaseURL: "http://localhost.example.com/v1"}, false},
		{&openai.Model{BaseURL: "https://api.openai.com/v1"}, false},
		{&openai.Model{BaseURL: "http://192.168.1.20:11434/v1"}, false},
		{&openai.Model{BaseURL: "http://model-runner.docker.internal/engines/v1"}, false},
		{&openai.Model{BaseURL: "http://localhost/exp/vDD4.40/engines/v1", UnixSocket: "/var/run/docker.sock"}, true},
		{&openai.Model{BaseURL: "::bad"}, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.local, tt.m.Local(), tt.m.BaseURL)
	}
}

func TestOpenAIUnixSocket(t *testing.T) {
	dir, err := os.MkdirTemp("", "llm") // short: socket paths are limited to about 100 bytes
	require.NoError(t, err)
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "s")
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	s := &openaitest.Server{Turns: []openaitest.Turn{{Text: "over the socket"}}}
	srv := &http.Server{Handler: s}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(l) }()
	defer func() { _ = srv.Close(); <-done }()

	m := &openai.Model{BaseURL: "http://localhost/v1", UnixSocket: sock}
	reply, _, err := collect(t, m)
	require.NoError(t, err)
	assert.Equal(t, "over the socket", reply.Message.Text())
	assert.True(t, m.Local())
}

func TestOpenAILimits(t *testing.T) {
	t.Run("response size", func(t *testing.T) {
		s := &openaitest.Server{Turns: []openaitest.Turn{{Text: strings.Repeat("x", 5000)}, {Text: strings.Repeat("x", 5000)}}, ChunkSize: 100}
		url := s.Start()
		defer s.Close()
		m := &openai.Model{BaseURL: url, MaxResponseSize: 1000}
		_, _, err := collect(t, m)
		require.ErrorContains(t, err, "larger than 1000 bytes")
		m2 := &openai.Model{BaseURL: url, MaxResponseSize: 1000, NoStream: true}
		_, _, err = collect(t, m2)
		require.ErrorContains(t, err, "larger than 1000 bytes")
	})
	t.Run("idle stream", func(t *testing.T) {
		s := &openaitest.Server{Turns: []openaitest.Turn{{Text: "thinking", Hang: true}}}
		url := s.Start()
		defer s.Close()
		m := &openai.Model{BaseURL: url, IdleTimeout: 50 * time.Millisecond}
		start := time.Now()
		var text string
		_, err := m.Chat(context.Background(), userHello, func(d agent.Delta) { text += d.Text })
		require.ErrorIs(t, err, sse.ErrIdleTimeout)
		assert.Equal(t, "thinking", text, "text before the stall was delivered")
		assert.Less(t, time.Since(start), 5*time.Second)
	})
}

func TestOpenAICancel(t *testing.T) {
	for _, noStream := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoStream=%v", noStream), func(t *testing.T) {
			s := &openaitest.Server{Turns: []openaitest.Turn{{Text: "a", Hang: true}}}
			url := s.Start()
			defer s.Close()
			var started atomic.Bool
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				for len(s.Requests()) == 0 {
					time.Sleep(time.Millisecond)
				}
				started.Store(true)
				cancel()
			}()
			m := &openai.Model{BaseURL: url, NoStream: noStream}
			_, err := m.Chat(ctx, userHello, nil)
			require.ErrorIs(t, err, context.Canceled)
			assert.True(t, started.Load())
			assert.True(t, errors.Is(err, context.Canceled))
		})
	}
}

// A context that ends while an error response's body is being read ends
// the call with the context's error, not with an *APIError made of half a
// body.
func TestOpenAICancelWhileReadingAnErrorBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "1000")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, `{"error":{"message":"half`)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cancelled once the status line came: the body is being read.
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotFirstResponseByte: cancel})
	m := &openai.Model{BaseURL: srv.URL + "/v1", MaxRetries: -1}
	_, err := m.Chat(ctx, userHello, nil)
	require.ErrorIs(t, err, context.Canceled)
	var apiErr *openai.APIError
	assert.False(t, errors.As(err, &apiErr), "an *APIError from a body cut short: %v", err)
}

func FuzzOpenAIResponse(f *testing.F) {
	for _, name := range []string{"openai_tool_calls.sse", "ollama_tool_calls.sse", "llamacpp_reasoning.sse", "llamacpp_error.sse", "openai_whole.json"} {
		body, err := os.ReadFile(filepath.Join("testdata", name))
		require.NoError(f, err)
		f.Add(body, strings.HasSuffix(name, ".json"))
	}
	f.Fuzz(func(t *testing.T, body []byte, whole bool) {
		ct := "text/event-stream"
		if whole {
			ct = "application/json"
		}
		m := &openai.Model{BaseURL: "http://model.test/v1", MaxResponseSize: 1 << 16,
			HTTPClient: &http.Client{Transport: bodyTransport{ct, body}}}
		var text string
		reply, err := m.Chat(context.Background(), userHello, func(d agent.Delta) { text += d.Text })
		if err != nil {
			if reply != nil {
				t.Fatal("a reply with an error")
			}
			return
		}
		if reply.Message.Text() != text {
			t.Fatalf("deltas %q do not add up to the text %q", text, reply.Message.Text())
		}
		ids := map[string]bool{}
		for _, c := range reply.Message.ToolCalls() {
			if c.ID == "" || c.Name == "" || ids[c.ID] {
				t.Fatalf("bad tool call %+v in %+v", c, reply.Message.ToolCalls())
			}
			ids[c.ID] = true
		}
	})
}

// closingServer answers chat requests over raw TCP: on each connection
// it answers the first request and reads, then drops, the second without
// an answer, as a server that closes a kept-alive connection while the
// next request is on its way. It returns the API's base URL and counts
// the requests read.
func closingServer(t *testing.T, answerFirst bool) (string, *atomic.Int32) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var reqs atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			br := bufio.NewReader(conn)
			for i := 0; ; i++ {
				req, err := http.ReadRequest(br)
				if err != nil {
					break
				}
				_, _ = io.Copy(io.Discard, req.Body)
				reqs.Add(1)
				if i > 0 || !answerFirst {
					break
				}
				body := `{"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`
				fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\nKeep-Alive: timeout=5, max=100\r\n\r\n%s", len(body), body)
			}
			conn.Close()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
	})
	return "http://" + l.Addr().String() + "/v1", &reqs
}

func TestOpenAIResendsOnClosedConnection(t *testing.T) {
	url, reqs := closingServer(t, true)
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	m := &openai.Model{BaseURL: url, NoStream: true, HTTPClient: client}
	for i := range 3 {
		reply, err := m.Chat(context.Background(), userHello, nil)
		require.NoError(t, err, "request %d", i)
		assert.Equal(t, "ok", reply.Message.Text())
	}
	assert.Equal(t, int32(5), reqs.Load(), "requests 2 and 3 went out twice: on the closing connection, then on a new one")

	// A new connection that closes is a failure, not sent again.
	url, reqs = closingServer(t, false)
	_, err := (&openai.Model{BaseURL: url, NoStream: true, HTTPClient: client}).Chat(context.Background(), userHello, nil)
	require.ErrorIs(t, err, io.EOF)
	assert.Equal(t, int32(1), reqs.Load())
}

// A file given by URL cannot go on the chat completions wire, which takes
// a file's data: the request fails before it is sent, saying so, rather
// than sending the URL as the file's data.
func TestOpenAIFileByURL(t *testing.T) {
	var sent atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		sent.Add(1)
		http.Error(w, `{"error":{"message":"bad file_data"}}`, http.StatusBadRequest)
	}))
	defer srv.Close()
	m := &openai.Model{BaseURL: srv.URL + "/v1", NoStream: true}
	file := agent.Part{Kind: agent.PartFile, Name: "a.pdf", MediaType: "application/pdf", URL: "https://example.test/a.pdf"}
	req := &agent.ChatRequest{Messages: []agent.Message{{Role: agent.RoleUser, Parts: []agent.Part{agent.TextPart("read"), file}}}}
	_, err := m.Chat(context.Background(), req, nil)
	require.ErrorIs(t, err, openai.ErrRequest)
	assert.ErrorContains(t, err, "not a URL")
	assert.Zero(t, sent.Load())
}

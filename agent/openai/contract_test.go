package openai_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/openai"
)

// Every failure the endpoint reports is an *agent.ModelError of the kind
// the contract names, with the status, the wait asked for and the context
// figures; the driver's *APIError or *EndpointError is inside it. A
// request that cannot be made is not a ModelError.
func TestOpenAIErrorKinds(t *testing.T) {
	answer := func(status int, retryAfter, body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			if retryAfter != "" {
				w.Header().Set("Retry-After", retryAfter)
			}
			w.WriteHeader(status)
			_, _ = io.WriteString(w, body)
		}))
		t.Cleanup(srv.Close)
		return srv.URL + "/v1"
	}
	msg := func(code string) string { return `{"error":{"message":"no","code":"` + code + `"}}` }
	for _, tc := range []struct {
		name       string
		url        string
		kind       error
		status     int
		retryAfter time.Duration
	}{
		{"429", answer(429, "7", msg("rate_limit_exceeded")), agent.ErrRateLimited, 429, 7 * time.Second},
		{"503", answer(503, "", msg("")), agent.ErrOverloaded, 503, 0},
		{"529", answer(529, "", msg("")), agent.ErrOverloaded, 529, 0},
		{"500", answer(500, "", msg("")), agent.ErrServer, 500, 0},
		{"401", answer(401, "", msg("invalid_api_key")), agent.ErrAuth, 401, 0},
		{"404", answer(404, "", msg("model_not_found")), agent.ErrBadRequest, 404, 0},
		{"400 content filter", answer(400, "", msg("content_filter")), agent.ErrRefused, 400, 0},
		{"400 context", answer(400, "", msg("context_length_exceeded")), agent.ErrContextExceeded, 400, 0},
		{"protocol", answer(200, "", `{"choices":[]}`), agent.ErrServer, 200, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := (&openai.Model{BaseURL: tc.url, MaxRetries: -1, NoStream: true}).Chat(context.Background(), userHello, nil)
			require.ErrorIs(t, err, tc.kind)
			var me *agent.ModelError
			require.ErrorAs(t, err, &me)
			assert.Equal(t, tc.kind, me.Kind)
			assert.Equal(t, tc.status, me.StatusCode)
			assert.Equal(t, tc.retryAfter, me.RetryAfter)
			for _, other := range []error{agent.ErrRateLimited, agent.ErrOverloaded, agent.ErrServer, agent.ErrAuth,
				agent.ErrBadRequest, agent.ErrRefused, agent.ErrContextExceeded, agent.ErrUnreachable} {
				if other != tc.kind {
					assert.False(t, errors.Is(err, other), "also %v", other)
				}
			}
		})
	}
	t.Run("context figures", func(t *testing.T) {
		url := answer(400, "", `{"error":{"code":400,"message":"request (9000 tokens) exceeds the available context size (2048 tokens)","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":2048}}`)
		_, err := (&openai.Model{BaseURL: url}).Chat(context.Background(), userHello, nil)
		var me *agent.ModelError
		require.ErrorAs(t, err, &me)
		assert.Equal(t, agent.ErrContextExceeded, me.Kind)
		assert.Equal(t, [2]int{9000, 2048}, [2]int{me.PromptTokens, me.ContextSize})
	})
	t.Run("unreachable", func(t *testing.T) {
		_, err := (&openai.Model{BaseURL: "http://127.0.0.1:1/v1"}).Chat(context.Background(), userHello, nil)
		var me *agent.ModelError
		require.ErrorAs(t, err, &me)
		assert.Equal(t, agent.ErrUnreachable, me.Kind)
	})
	t.Run("configuration", func(t *testing.T) {
		_, err := (&openai.Model{}).Chat(context.Background(), userHello, nil)
		var me *agent.ModelError
		assert.False(t, errors.As(err, &me), "%v", err)
	})
}

// The driver names the model in its replies and says what it can do.
func TestOpenAICapabilities(t *testing.T) {
	m := &openai.Model{BaseURL: "http://localhost:11434/v1", Model: "qwen3:4b", ContextWindow: 32768}
	assert.Equal(t, agent.Capabilities{Local: true, Streaming: true, Schema: true, NamedToolChoice: true,
		ParallelToolCalls: true, Reasoning: true, ContextWindow: 32768}, agent.CapabilitiesOf(m))
	m = &openai.Model{BaseURL: "https://api.openai.com/v1", NoStream: true, NoResponseFormat: true}
	c := agent.CapabilitiesOf(m)
	assert.False(t, c.Local || c.Streaming || c.Schema)
	assert.Equal(t, agent.ModelInfo{Name: "qwen3:4b", Provider: "openai", Address: "localhost", Port: 11434},
		(&openai.Model{BaseURL: "http://localhost:11434/v1", Model: "qwen3:4b"}).ModelInfo())

	body, err := os.ReadFile(filepath.Join("testdata", "openai_whole.json"))
	require.NoError(t, err)
	m = &openai.Model{BaseURL: "http://model.test/v1", Model: "qwen3:4b", NoStream: true,
		HTTPClient: &http.Client{Transport: bodyTransport{"application/json", body}}}
	reply, err := m.Chat(context.Background(), userHello, nil)
	require.NoError(t, err)
	assert.Equal(t, "qwen3:4b", reply.Model)
}

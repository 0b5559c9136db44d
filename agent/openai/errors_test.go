package openai_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/openai"
)

// Every failure of Model.Chat is typed: an *APIError for an error answer,
// an *EndpointError (matching agent.ErrUnreachable or ErrProtocol) with the
// status, the endpoint and the start of the body for an answer that could
// not be had or understood, ErrRequest for a request that cannot be made;
// none shows the API key.
func TestOpenAIErrorsTyped(t *testing.T) {
	const key = "sk-test-typed-0123456789"
	t.Setenv("LLMTEST_TYPED_KEY", key)
	answer := func(status int, contentType, body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", contentType)
			w.WriteHeader(status)
			_, _ = io.WriteString(w, body)
		}))
		t.Cleanup(srv.Close)
		return srv.URL + "/v1"
	}
	closed := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := l.Addr().String()
		require.NoError(t, l.Close())
		return "http://" + addr + "/v1"
	}
	for _, tc := range []struct {
		name   string
		url    string
		max    int
		kind   error
		status int
		body   string // the start of ModelError.Body
	}{
		{"202 with an empty body", answer(http.StatusAccepted, "application/json", ""), 0, openai.ErrProtocol, 202, ""},
		{"no choices", answer(http.StatusOK, "application/json", `{"id":"x","choices":[]}`), 0, openai.ErrProtocol, 200, `{"id":"x","choices":[]}`},
		{"not JSON, echoing the key", answer(http.StatusOK, "application/json", "<html>bad key "+key+"</html>"), 0, openai.ErrProtocol, 200, "<html>bad key [redacted]</html>"},
		{"stream cut", answer(http.StatusOK, "text/event-stream", "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n"), 0, openai.ErrProtocol, 200, "data: {"},
		{"malformed chunk", answer(http.StatusOK, "text/event-stream", "data: {not json\n\n"), 0, openai.ErrProtocol, 200, "data: {not json"},
		{"too large", answer(http.StatusOK, "application/json", `{"choices":[{"index":0,"message":{"content":"`+strings.Repeat("a", 100)+`"}}]}`), 64, openai.ErrProtocol, 200, `{"choices"`},
		{"connection refused", closed(), 0, agent.ErrUnreachable, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &openai.Model{BaseURL: tc.url, APIKeyEnv: "LLMTEST_TYPED_KEY", NoStream: strings.Contains(tc.name, "202"), MaxResponseSize: tc.max}
			_, err := m.Chat(context.Background(), userHello, nil)
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.kind)
			var me *openai.EndpointError
			require.ErrorAs(t, err, &me)
			assert.Equal(t, tc.url+"/chat/completions", me.Endpoint)
			assert.Equal(t, tc.status, me.StatusCode)
			assert.True(t, strings.HasPrefix(me.Body, tc.body), "body %q", me.Body)
			assert.Contains(t, err.Error(), me.Endpoint)
			if tc.status != 0 {
				assert.Contains(t, err.Error(), "status "+strconv.Itoa(tc.status))
			}
			assert.NotContains(t, err.Error(), key)
			assert.NotContains(t, me.Body, key)
			assert.Equal(t, 1, strings.Count(err.Error(), "agent:"), "one prefix: %s", err)
		})
	}
	t.Run("error answer", func(t *testing.T) {
		url := answer(http.StatusInternalServerError, "application/json", `{"error":{"message":"boom"}}`)
		_, err := (&openai.Model{BaseURL: url}).Chat(context.Background(), userHello, nil)
		var api *openai.APIError
		require.ErrorAs(t, err, &api)
		assert.Equal(t, url+"/chat/completions", api.Endpoint)
		assert.Equal(t, "agent: model endpoint "+url+"/chat/completions: status 500: boom", err.Error())
	})
	t.Run("request that cannot be made", func(t *testing.T) {
		_, err := (&openai.Model{}).Chat(context.Background(), userHello, nil)
		assert.ErrorIs(t, err, openai.ErrRequest)
		_, err = (&openai.Model{BaseURL: "http://127.0.0.1:1/v1"}).Chat(context.Background(), nil, nil)
		assert.ErrorIs(t, err, openai.ErrRequest)
	})
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := (&openai.Model{BaseURL: closed()}).Chat(ctx, userHello, nil)
		assert.True(t, errors.Is(err, context.Canceled), "%v", err)
	})
}

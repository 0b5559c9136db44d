package modelenv

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestLookup(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  []string
		want Endpoint
		err  string
	}{
		{"nothing set: Docker Model Runner, if it answers", nil,
			Endpoint{BaseURL: "http://localhost:12434/engines/v1", From: "Docker Model Runner's default address", Optional: true}, ""},
		{"MINIME_MODEL_URL", []string{URLVar, "http://localhost:8080/v1/", ModelVar, "qwen3", KeyVar, "k"},
			Endpoint{BaseURL: "http://localhost:8080/v1", Model: "qwen3", KeyEnv: KeyVar, From: URLVar}, ""},
		{"MINIME_MODEL_URL wins", []string{URLVar, "http://a/v1", OpenAIKeyVar, "k", OllamaVar, "b"},
			Endpoint{BaseURL: "http://a/v1", From: URLVar}, ""},
		{"OpenAI", []string{OpenAIKeyVar, "sk-x"},
			Endpoint{BaseURL: "https://api.openai.com/v1", Model: "gpt-4o-mini", KeyEnv: OpenAIKeyVar, From: OpenAIKeyVar}, ""},
		{"OpenAI-style local server", []string{OpenAIURLVar, "http://127.0.0.1:1234/v1", OpenAIModelVar, "m"},
			Endpoint{BaseURL: "http://127.0.0.1:1234/v1", Model: "m", From: OpenAIURLVar}, ""},
		{"MINIME_MODEL names the model anywhere", []string{OpenAIKeyVar, "k", OpenAIModelVar, "gpt-x", ModelVar, "mine"},
			Endpoint{BaseURL: "https://api.openai.com/v1", Model: "mine", KeyEnv: OpenAIKeyVar, From: OpenAIKeyVar}, ""},
		{"Ollama wildcard", []string{OllamaVar, "0.0.0.0"},
			Endpoint{BaseURL: "http://127.0.0.1:11434/v1", From: OllamaVar}, ""},
		{"Ollama host:port", []string{OllamaVar, "gpu-box:8080"},
			Endpoint{BaseURL: "http://gpu-box:8080/v1", From: OllamaVar}, ""},
		{"Ollama https", []string{OllamaVar, "https://ollama.example/"},
			Endpoint{BaseURL: "https://ollama.example:443/v1", From: OllamaVar}, ""},
		{"Ollama IPv6", []string{OllamaVar, "[::1]:11434"},
			Endpoint{BaseURL: "http://[::1]:11434/v1", From: OllamaVar}, ""},
		{"Docker Model Runner", []string{ModelRunnerVar, "http://localhost:12434"},
			Endpoint{BaseURL: "http://localhost:12434/engines/v1", From: ModelRunnerVar, Optional: true}, ""},
		{"no scheme", []string{URLVar, "localhost:8080/v1"}, Endpoint{}, "MINIME_MODEL_URL: want an http or https URL"},
		{"credentials in the URL", []string{URLVar, "http://user:s3cret@host/v1"}, Endpoint{}, "MINIME_MODEL_URL: the URL must not hold credentials"},
		{"bad Ollama host", []string{OllamaVar, "http://"}, Endpoint{}, "OLLAMA_HOST: want a host"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Lookup(env(tc.env...))
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				assert.NotContains(t, err.Error(), "s3cret")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// closedURL is the URL of a port nothing listens on.
func closedURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	url := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close())
	return url
}

func TestFind(t *testing.T) {
	var mu sync.Mutex
	var gotAuth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gotAuth = r.Header.Get("Authorization")
		mu.Unlock()
		switch r.URL.Path {
		case "/list/v1/models":
			fmt.Fprint(w, `{"data":[{"id":"ai/qwen3"},{"id":"ai/smollm2"}]}`)
		case "/empty/v1/models":
			fmt.Fprint(w, `{"data":[]}`)
		case "/locked/v1/models":
			w.WriteHeader(http.StatusUnauthorized)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	closed := closedURL(t)
	for _, tc := range []struct {
		name        string
		env         []string
		model, auth string
		err         string
	}{
		{"first listed model", []string{URLVar, srv.URL + "/list/v1"}, "ai/qwen3", "", ""},
		{"named model, no list", []string{URLVar, srv.URL + "/nolist/v1", ModelVar, "m"}, "m", "", ""},
		{"key sent", []string{URLVar, srv.URL + "/list/v1", KeyVar, "s3cret"}, "ai/qwen3", "Bearer s3cret", ""},
		{"no model named or listed", []string{URLVar, srv.URL + "/empty/v1"}, "", "", "answers but lists no model: set MINIME_MODEL"},
		{"key refused", []string{OpenAIURLVar, srv.URL + "/locked/v1", OpenAIKeyVar, "s3cret", OpenAIModelVar, "m"}, "", "Bearer s3cret",
			"refused the API key (HTTP 401): check OPENAI_API_KEY"},
		{"nobody there", []string{URLVar, closed + "/v1", ModelVar, "m"}, "", "", closed + "/v1 does not answer: connect: connection refused"},
		{"Docker Model Runner absent", []string{ModelRunnerVar, closed}, "", "", closed + "/engines/v1 does not answer: connect: connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			gotAuth = ""
			mu.Unlock()
			m, err := Find(context.Background(), env(tc.env...))
			mu.Lock()
			assert.Equal(t, tc.auth, gotAuth)
			mu.Unlock()
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				assert.NotContains(t, err.Error(), "s3cret")
				var u *Unavailable
				require.ErrorAs(t, err, &u)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.model, m.Model)
			assert.True(t, m.Local())
		})
	}
}

func TestHelp(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"Docker Model Runner absent", &Unavailable{Endpoint: Endpoint{From: "x", Optional: true}, Reason: "X does not answer"},
			"No model is configured, and Docker Model Runner cannot be used (X does not answer), so the agent cannot run."},
		{"named endpoint", &Unavailable{Endpoint: Endpoint{From: OllamaVar}, Reason: "X does not answer"},
			"The model named by OLLAMA_HOST cannot be used (X does not answer), so the agent cannot run."},
		{"bad settings", &Unavailable{Reason: "OLLAMA_HOST: want a host"},
			"The model settings are wrong (OLLAMA_HOST: want a host), so the agent cannot run."},
		{"other", fmt.Errorf("boom"), "No model can be used (boom), so the agent cannot run."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := Help(tc.err)
			for _, line := range strings.Split(h, "\n") {
				assert.LessOrEqual(t, len(line), 76, line)
			}
			flat := strings.Join(strings.Fields(h), " ")
			assert.True(t, strings.HasPrefix(flat, tc.want), flat)
			for _, v := range []string{"docker model pull", "ollama pull", "MINIME_MODEL_URL", "MINIME_MODEL", "MINIME_API_KEY",
				"OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "OLLAMA_HOST", "MODEL_RUNNER_HOST"} {
				assert.Contains(t, flat, v)
			}
		})
	}
}

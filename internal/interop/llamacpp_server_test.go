//go:build unix

package interop

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// llama.cpp's llama-server, built from source by the shared script
// ../shared/llamacpp/start.sh (beside the repository; MINIME_LLAMACPP names
// another copy), serving a tiny generated model. run.sh builds it first
// ("start.sh prepare", cached per machine); a test never builds it.

// llamaReady bounds the wait for llama-server to load the model and listen.
const llamaReady = 60 * time.Second

// llamaScript returns the absolute path of start.sh.
func llamaScript() (string, error) {
	p := os.Getenv("MINIME_LLAMACPP")
	if p == "" {
		p = filepath.Join("..", "..", "..", "shared", "llamacpp", "start.sh")
	}
	return filepath.Abs(p)
}

// startLlama starts llama-server on a free port of 127.0.0.1 with the
// extra flags, stopped when the test ends, and returns its API base URL
// (ending in /v1). env sets start.sh's variables (LLAMACPP_CTX, ...).
func startLlama(t *testing.T, env []string, flags ...string) string {
	t.Helper()
	script, err := llamaScript()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(script); err != nil {
		unavailable(t, "llama.cpp's start.sh: %v", err)
	}
	out, err := exec.Command("bash", script, "paths").Output()
	if err != nil {
		unavailable(t, "%s paths: %v", script, err)
	}
	for _, p := range strings.Fields(string(out)) {
		if _, err := os.Stat(p); err != nil {
			unavailable(t, "llama-server is not built (run %s prepare, as run.sh does): %v", script, err)
		}
	}
	port := freePort(t)
	for _, k := range []string{"XDG_CACHE_HOME", "LLAMACPP_THREADS"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	// The shell stops the server when its stdin closes, so that it does not
	// outlive a test binary that dies; otherwise the process group is
	// stopped at the end of the test.
	args := append([]string{"-c", `"$0" "$@" & s=$!; trap 'kill $s 2>/dev/null' EXIT; cat >/dev/null`, script, port}, flags...)
	p := startProcess(t, filepath.Dir(script), env, "bash", args...)
	ctx, cancel := context.WithTimeout(context.Background(), llamaReady)
	defer cancel()
	listening := "listening on http://127.0.0.1:" + port
	if _, err := p.out.waitFor(ctx, p.exited, func(l string) bool { return strings.Contains(l, listening) }); err != nil {
		t.Fatalf("llama-server did not start (%v); its output:\n%s", err, p.out)
	}
	base := "http://127.0.0.1:" + port
	resp, err := http.Get(base + "/health")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "llama-server's /health")
	findGreeting(t, base+"/v1")
	return base + "/v1"
}

// freePort returns a port of 127.0.0.1 that was free a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// rawChunk is the part of a chat.completion.chunk the wire tests look at.
type rawChunk struct {
	Choices []struct {
		Delta struct {
			Content   *string `json:"content"`
			ToolCalls []struct {
				Index    *int   `json:"index"`
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string  `json:"name"`
					Arguments *string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
}

// postRaw posts body to the server's chat completions endpoint and returns
// the chunks of the stream, up to "[DONE]".
func postRaw(t *testing.T, base, body string) []rawChunk {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/chat/completions", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	// llama-server closes its connection after each stream though it says
	// Keep-Alive, and a POST that meets the closed connection is not sent
	// again by net/http: a connection of its own for each request (an idle
	// one of a shared pool, such as the SDK's, may already be closed).
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", strings.Split(resp.Header.Get("Content-Type"), ";")[0])
	var chunks []rawChunk
	for _, data := range sseData(t, resp) {
		if data == "[DONE]" {
			return chunks
		}
		var c rawChunk
		require.NoError(t, json.Unmarshal([]byte(data), &c), data)
		chunks = append(chunks, c)
	}
	t.Fatal("the stream ended without [DONE]")
	return nil
}

// sseData returns the data of each event of a response, split by hand
// rather than by the SDK's decoder, so that the wire test does not rest on
// the code under test.
func sseData(t *testing.T, resp *http.Response) []string {
	t.Helper()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out []string
	for _, block := range strings.Split(strings.ReplaceAll(string(raw), "\r\n", "\n"), "\n\n") {
		var data []string
		for _, line := range strings.Split(block, "\n") {
			if v, ok := strings.CutPrefix(line, "data:"); ok {
				data = append(data, strings.TrimPrefix(v, " "))
			}
		}
		if len(data) > 0 {
			out = append(out, strings.Join(data, "\n"))
		}
	}
	return out
}

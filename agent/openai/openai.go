package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"git.rickub.com/bots-garden/mini-me/agent"
)

// Defaults of a [Model] whose fields leave them zero.
const (
	// DefaultMaxRetries is how many times a request that failed with a
	// transient status (429 with Retry-After, 503) is sent again.
	DefaultMaxRetries = 2
	// DefaultMaxRetryWait is the longest wait before a retry; a server
	// that asks for a longer one gets its error returned instead.
	DefaultMaxRetryWait = 30 * time.Second
	// DefaultRetryDelay is the wait before retrying a 503 that says
	// nothing of when to retry; it doubles with each retry.
	DefaultRetryDelay = time.Second
	// DefaultIdleTimeout is how long a stream may stay silent. Local
	// models on a CPU can take minutes to read a long prompt before the
	// first token, so it is generous.
	DefaultIdleTimeout = 5 * time.Minute
	// DefaultMaxResponseSize bounds one response: the text, the reasoning
	// and the tool-call arguments of a turn together, or the body of a
	// non-streamed response.
	DefaultMaxResponseSize = 16 << 20
)

// maxErrorBody bounds what is read of an error response.
const maxErrorBody = 64 << 10

// Model is an [agent.Model] served by an OpenAI-compatible chat completions
// endpoint: OpenAI itself and the many servers that copy its API, among
// them Docker Model Runner, Ollama (/v1), llama.cpp's llama-server, vLLM and
// LM Studio.
//
// The zero value is not usable: BaseURL must be set. Every other field is
// optional. A Model is safe for concurrent use once its fields are set;
// it must not be copied or modified after its first use.
type Model struct {
	// BaseURL is the API's base, up to and including the version, such as
	// "http://localhost:11434/v1" (Ollama), "http://localhost:8080/v1"
	// (llama-server), "http://localhost:12434/engines/v1" (Docker Model
	// Runner) or "https://api.openai.com/v1". Requests go to
	// BaseURL + "/chat/completions". It must not hold credentials.
	BaseURL string
	// Model names the model, as the server knows it.
	Model string
	// APIKeyEnv names the environment variable that holds the API key,
	// sent as "Authorization: Bearer <key>". The variable is read for each
	// request; empty APIKeyEnv sends no key. The key never appears in
	// errors or logs.
	APIKeyEnv string
	// Header holds extra, non-secret headers sent with every request.
	Header http.Header

	// Temperature, TopP, MaxTokens, Seed and Stop are the usual sampling
	// options; nil or zero leaves them to the server.
	Temperature *float64
	// TopP is the nucleus sampling mass (top_p).
	TopP *float64
	// MaxTokens bounds the tokens of one answer (max_tokens).
	MaxTokens int
	// Seed asks for reproducible sampling (seed).
	Seed *int
	// Stop lists sequences at which the model stops (stop).
	Stop []string
	// Extra adds fields to the request body, for options a server has
	// beyond the usual ones (llama-server's "cache_prompt", vLLM's
	// "top_k", ...). It cannot replace a field the client sets itself.
	Extra map[string]any

	// NoStream asks for whole responses instead of streams, for servers
	// that do not stream tool calls. Text then reaches the host in one
	// piece. A server that answers a streamed request with a whole
	// response is understood either way.
	NoStream bool
	// NoResponseFormat says the server cannot hold a reply to a JSON
	// Schema (response_format of type json_schema), or should not be
	// asked to: typed answers (RunTyped) then come through AnswerTool.
	// OpenAI, vLLM, llama-server (and so Docker Model Runner and LM
	// Studio) and Ollama 0.5 or later can; llama-server and Ollama turn
	// the schema into a grammar, which even a small model cannot leave.
	NoResponseFormat bool

	// ContextWindow is the model's context, in tokens, when the host knows
	// it (the API does not say); 0 means unknown. It is only reported, in
	// Capabilities.
	ContextWindow int

	// UnixSocket, if set, is the path of a unix socket to connect to
	// instead of BaseURL's host (Docker Model Runner through the Docker
	// socket, for instance). BaseURL still gives the scheme, the Host
	// header and the path.
	UnixSocket string
	// HTTPClient sends the requests; nil means http.DefaultClient, or a
	// client of the unix socket. It cannot be combined with UnixSocket.
	HTTPClient *http.Client

	// MaxRetries bounds how many times a request is sent again after a
	// transient failure: 429 with a Retry-After header, or 503. Zero means
	// DefaultMaxRetries; negative means never. Apart from these, a request
	// that fails because the server closed the kept-alive connection it
	// went out on, before any answer, is sent again at once, once, on a
	// new connection: llama-server closes its connection after each
	// stream, though it says Keep-Alive, and the next request may be
	// written before the client sees the close.
	MaxRetries int
	// MaxRetryWait bounds the wait before one retry; zero means
	// DefaultMaxRetryWait.
	MaxRetryWait time.Duration
	// RetryDelay is the first wait before retrying a 503 that has no
	// Retry-After header; zero means DefaultRetryDelay.
	RetryDelay time.Duration
	// IdleTimeout bounds how long a stream may send nothing; zero means
	// DefaultIdleTimeout, negative means no bound (ctx still applies).
	IdleTimeout time.Duration
	// MaxResponseSize bounds the size of one response; zero means
	// DefaultMaxResponseSize.
	MaxResponseSize int

	// Logger receives diagnostics (retries); nil means none.
	Logger *slog.Logger

	once      sync.Once
	client    *http.Client
	clientErr error
}

// APIError is an error answer of the model endpoint: a status other than
// 2xx, or an error object sent inside a stream.
type APIError struct {
	// StatusCode is the HTTP status; 200 for an error sent mid-stream.
	StatusCode int
	// Endpoint is the URL posted to (scheme, host and path: never a key).
	Endpoint string
	// Message is the server's message (with the API key, should the server
	// echo it, replaced by "[redacted]"), or the start of the body when
	// the server sent no message.
	Message string
	// Type and Code are the server's classification of the error, when it
	// gives one ("invalid_request_error", "rate_limit_exceeded", ...).
	Type, Code string
	// RetryAfter is the wait the server asked for in a Retry-After header;
	// zero when it sent none.
	RetryAfter time.Duration
	// PromptTokens and ContextSize are, for a request longer than the
	// model's context, its size and the context's, in tokens, when the
	// server says (llama-server's n_prompt_tokens and n_ctx); zero
	// otherwise.
	PromptTokens, ContextSize int

	hasRetryAfter bool
}

// Is reports whether target is the kind of failure of the contract
// (agent.ErrContextExceeded, agent.ErrRateLimited...) that e is: a request
// longer than the model's context is llama-server's
// exceed_context_size_error (which gives PromptTokens and ContextSize) or
// OpenAI's context_length_exceeded.
func (e *APIError) Is(target error) bool { return target == e.kind() }

// Error returns the endpoint, the status and the server's message, as in
// "agent: model endpoint https://api.example/v1/chat/completions: status
// 429: rate limit exceeded".
func (e *APIError) Error() string {
	s := "agent: model endpoint"
	if e.Endpoint != "" {
		s += " " + e.Endpoint
	}
	s += fmt.Sprintf(": status %d", e.StatusCode)
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Local reports whether BaseURL names this machine (localhost, a name
// ending in .localhost, or a loopback address) or UnixSocket is set. It
// is Capabilities.Local. A custom HTTPClient that dials elsewhere, or a
// proxy, is not taken into account: hosts that use one must not rely on
// Local.
func (m *Model) Local() bool {
	if m.UnixSocket != "" {
		return true
	}
	u, err := url.Parse(m.BaseURL)
	if err != nil {
		return false
	}
	return isLoopbackHost(u.Hostname())
}

func isLoopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// chat sends one chat completions request and returns the turn.
func (m *Model) chat(ctx context.Context, req *agent.ChatRequest, onDelta func(agent.Delta)) (*agent.Reply, error) {
	if req == nil {
		return nil, requestError("nil ChatRequest")
	}
	endpoint, err := m.endpoint()
	if err != nil {
		return nil, err
	}
	client, err := m.httpClient()
	if err != nil {
		return nil, err
	}
	key, err := m.apiKey()
	if err != nil {
		return nil, err
	}
	body, err := m.requestBody(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRequest, err)
	}
	resp, err := m.send(ctx, client, endpoint, key, body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	max := m.MaxResponseSize
	if max <= 0 {
		max = DefaultMaxResponseSize
	}
	var reply *agent.Reply
	head := &bodyHead{r: resp.Body, key: key}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/event-stream" {
		reply, err = m.readStream(ctx, head, resp.StatusCode, max, onDelta)
	} else {
		reply, err = readWhole(head, max, onDelta)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("agent: model response: %w", ctx.Err())
		}
		var apiErr *APIError
		if errors.As(err, &apiErr) {
			apiErr.Message = redact(apiErr.Message, key)
			apiErr.Endpoint = endpoint
			return nil, apiErr
		}
		return nil, &EndpointError{Kind: ErrProtocol, Endpoint: endpoint, StatusCode: resp.StatusCode, Body: head.text(), Err: err}
	}
	return reply, nil
}

func (m *Model) endpoint() (string, error) {
	if m.BaseURL == "" {
		return "", requestError("Model.BaseURL is empty")
	}
	u, err := url.Parse(m.BaseURL)
	switch {
	case err != nil:
		return "", requestError("Model.BaseURL: %w", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return "", requestError("Model.BaseURL %q: scheme is not http or https", m.BaseURL)
	case u.Host == "":
		return "", requestError("Model.BaseURL %q has no host", m.BaseURL)
	case u.User != nil:
		return "", requestError("Model.BaseURL holds credentials; put the API key in the variable named by APIKeyEnv")
	}
	return strings.TrimSuffix(m.BaseURL, "/") + "/chat/completions", nil
}

func (m *Model) httpClient() (*http.Client, error) {
	m.once.Do(func() {
		switch {
		case m.UnixSocket != "" && m.HTTPClient != nil:
			m.clientErr = requestError("Model.UnixSocket and Model.HTTPClient are both set")
		case m.UnixSocket != "":
			path := m.UnixSocket
			m.client = &http.Client{Transport: &http.Transport{
				DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
					var d net.Dialer
					return d.DialContext(ctx, "unix", path)
				},
			}}
		case m.HTTPClient != nil:
			m.client = m.HTTPClient
		default:
			m.client = http.DefaultClient
		}
	})
	return m.client, m.clientErr
}

func (m *Model) apiKey() (string, error) {
	if m.APIKeyEnv == "" {
		return "", nil
	}
	key, set := os.LookupEnv(m.APIKeyEnv)
	switch {
	case !set:
		return "", requestError("environment variable %s, which should hold the API key, is not set", m.APIKeyEnv)
	case key == "":
		return "", requestError("environment variable %s, which should hold the API key, is set but empty", m.APIKeyEnv)
	}
	return key, nil
}

// send posts body, retrying transient failures, and returns a 2xx
// response.
func (m *Model) send(ctx context.Context, client *http.Client, endpoint, key string, body []byte) (*http.Response, error) {
	redialed := false
	for attempt := 0; ; attempt++ {
		var reused bool
		trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused }}
		hreq, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodPost, endpoint, bytes.NewReader(body))
		if err != nil {
			return nil, requestError("%w", err)
		}
		for k, v := range m.Header {
			hreq.Header[k] = v
		}
		hreq.Header.Set("Content-Type", "application/json")
		if m.NoStream {
			hreq.Header.Set("Accept", "application/json")
		} else {
			hreq.Header.Set("Accept", "text/event-stream, application/json")
		}
		if key != "" {
			hreq.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := client.Do(hreq)
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("agent: model request: %w", ctx.Err())
			}
			if reused && !redialed && connectionLost(err) {
				// The server closed a kept-alive connection as the request
				// went out: send it again, once, on a new connection.
				redialed = true
				attempt--
				if m.Logger != nil {
					m.Logger.LogAttrs(ctx, slog.LevelInfo, "agent: resending a model request whose connection was closed", slog.String("error", err.Error()))
				}
				continue
			}
			return nil, unreachable(endpoint, err)
		}
		if resp.StatusCode >= 200 && resp.StatusCode < 300 {
			return resp, nil
		}
		apiErr := readAPIError(resp, key)
		apiErr.Endpoint = endpoint
		if ctx.Err() != nil { // the body was cut short with it
			return nil, fmt.Errorf("agent: model request: %w", ctx.Err())
		}
		wait, ok := m.retryWait(apiErr, attempt)
		if !ok {
			return nil, apiErr
		}
		if m.Logger != nil {
			m.Logger.LogAttrs(ctx, slog.LevelInfo, "agent: retrying model request",
				slog.Int("status", apiErr.StatusCode), slog.Duration("wait", wait), slog.Int("retry", attempt+1))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("agent: model request: waiting to retry after %w: %w", apiErr, ctx.Err())
		case <-t.C:
		}
	}
}

// connectionLost reports whether err says the connection ended before any
// response came.
func connectionLost(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)
}

// retryWait says whether a failed request is retried, and after how long.
func (m *Model) retryWait(e *APIError, attempt int) (time.Duration, bool) {
	max := m.MaxRetries
	if max == 0 {
		max = DefaultMaxRetries
	}
	if attempt >= max {
		return 0, false
	}
	var wait time.Duration
	switch {
	case e.hasRetryAfter && (e.StatusCode == http.StatusTooManyRequests || e.StatusCode == http.StatusServiceUnavailable):
		wait = e.RetryAfter
	case e.StatusCode == http.StatusServiceUnavailable:
		wait = m.RetryDelay
		if wait <= 0 {
			wait = DefaultRetryDelay
		}
		wait <<= attempt
	default:
		return 0, false
	}
	limit := m.MaxRetryWait
	if limit <= 0 {
		limit = DefaultMaxRetryWait
	}
	return wait, wait <= limit
}

// readAPIError reads a non-2xx response into an APIError and closes its
// body.
func readAPIError(resp *http.Response, key string) *APIError {
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	e := &APIError{StatusCode: resp.StatusCode}
	e.RetryAfter, e.hasRetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"))
	fillAPIError(e, raw)
	e.Message = redact(e.Message, key)
	return e
}

// fillAPIError takes the message out of an error body, in any of the
// shapes servers use: {"error": {"message", "type", "code"}} (OpenAI,
// llama-server, Ollama), {"error": "..."} (Ollama's own API), or
// {"message", "type", "code"} (vLLM). Anything else gives the start of the
// body as text.
func fillAPIError(e *APIError, raw []byte) {
	type fields struct {
		Message       string `json:"message"`
		Type          string `json:"type"`
		Code          any    `json:"code"`
		NPromptTokens int    `json:"n_prompt_tokens"`
		NCtx          int    `json:"n_ctx"`
	}
	var body struct {
		fields
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &body) == nil {
		f := body.fields
		var s string
		var inner fields
		switch {
		case json.Unmarshal(body.Error, &s) == nil && s != "":
			f.Message = s
		case json.Unmarshal(body.Error, &inner) == nil && inner.Message != "":
			f = inner
		}
		if f.Message != "" {
			e.Message = clip(printable(f.Message), 1000)
			e.Type = clip(printable(f.Type), 100)
			if f.Code != nil {
				e.Code = clip(printable(strings.Trim(fmt.Sprint(f.Code), `"`)), 100)
			}
			e.PromptTokens, e.ContextSize = max(f.NPromptTokens, 0), max(f.NCtx, 0)
			return
		}
	}
	e.Message = clip(printable(strings.TrimSpace(string(raw))), 300)
}

// parseRetryAfter reads a Retry-After header: seconds or an HTTP date.
func parseRetryAfter(v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	var secs int64
	if _, err := fmt.Sscan(v, &secs); err == nil && fmt.Sprint(secs) == v {
		if secs < 0 {
			return 0, false
		}
		// Capped, or a huge value would overflow to a negative wait.
		return time.Duration(min(secs, int64(math.MaxInt64/time.Second))) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0), true
	}
	return 0, false
}

// redact replaces the API key in s.
func redact(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, "[redacted]")
}

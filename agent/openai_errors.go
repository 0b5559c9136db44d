package agent

import (
	"errors"
	"fmt"
	"io"
	"net/url"
)

// The classes of failure of [OpenAI.Chat] other than an error answer (an
// [*APIError]) and the caller's context: every other error it returns
// matches one of them with errors.Is.
var (
	// ErrModelRequest is a request that cannot be made: no or a bad
	// BaseURL, an API key variable that is unset or empty, both UnixSocket
	// and HTTPClient, an Extra field the client owns or that does not
	// encode, a nil ChatRequest or one that does not encode.
	ErrModelRequest = errors.New("agent: model request")
	// ErrModelUnreachable is a request that got no HTTP answer: the
	// endpoint refused the connection, the name did not resolve, the
	// connection broke before a status came. The error is a *ModelError.
	ErrModelUnreachable = errors.New("agent: model endpoint unreachable")
	// ErrModelProtocol is a 2xx answer that is not a chat completion: an
	// empty or malformed body, no choices, a stream cut before the turn
	// ended, a tool call without a name, an answer larger than
	// OpenAI.MaxResponseSize. The error is a *ModelError.
	ErrModelProtocol = errors.New("agent: model response not understood")
)

// ModelError is a failure to reach the model endpoint or to understand its
// answer. It matches its Kind with errors.Is, and unwraps to the cause.
type ModelError struct {
	// Kind is ErrModelUnreachable or ErrModelProtocol.
	Kind error
	// Endpoint is the URL posted to (scheme, host and path: never a key).
	Endpoint string
	// StatusCode is the HTTP status of the answer; 0 when none came.
	StatusCode int
	// Body is the start of the answer's body (at most maxBodyHead bytes,
	// control characters as spaces, the API key as "[redacted]"); "" when
	// none came.
	Body string
	// Err is the cause.
	Err error
}

// maxBodyHead bounds ModelError.Body.
const maxBodyHead = 200

// Error returns the endpoint, the status, the cause and the body's start,
// as in `agent: model endpoint http://127.0.0.1:8080/v1/chat/completions:
// status 202: malformed body: unexpected end of JSON input (body "")`.
func (e *ModelError) Error() string {
	s := "agent: model endpoint " + e.Endpoint
	if e.StatusCode != 0 {
		s += fmt.Sprintf(": status %d", e.StatusCode)
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	if e.StatusCode != 0 {
		s += fmt.Sprintf(" (body %q)", e.Body)
	}
	return s
}

// Unwrap returns Kind and Err.
func (e *ModelError) Unwrap() []error { return []error{e.Kind, e.Err} }

// unreachable is a request that got no answer.
func unreachable(endpoint string, err error) *ModelError {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err // its text repeats the endpoint
	}
	return &ModelError{Kind: ErrModelUnreachable, Endpoint: endpoint, Err: err}
}

// requestError is a request that cannot be made.
func requestError(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrModelRequest}, args...)...)
}

// bodyHead keeps the first bytes read through it: maxBodyHead, and the
// length of the key more, so that a key across the cut is redacted too.
// Close closes the body (an idle stream's decoder ends a blocked read so).
type bodyHead struct {
	r    io.ReadCloser
	key  string
	head []byte
}

func (b *bodyHead) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if room := maxBodyHead + len(b.key) - len(b.head); room > 0 {
		b.head = append(b.head, p[:min(n, room)]...)
	}
	return n, err
}

func (b *bodyHead) Close() error { return b.r.Close() }

// text is the head as ModelError.Body shows it.
func (b *bodyHead) text() string {
	s := redact(printable(string(b.head)), b.key)
	if len(s) > maxBodyHead {
		s = clip(s, maxBodyHead)
	}
	return s
}

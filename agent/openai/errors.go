package openai

import (
	"errors"
	"fmt"
	"io"
	"net/url"

	"git.rickub.com/bots-garden/mini-me/agent"
)

// The failures of [Model.Chat] that are not an error answer (an
// [*APIError]) nor the caller's context: each error it returns for them
// matches one of these or agent.ErrUnreachable with errors.Is.
var (
	// ErrRequest is a request that cannot be made: no or a bad
	// BaseURL, an API key variable that is unset or empty, both UnixSocket
	// and HTTPClient, an Extra field the client owns or that does not
	// encode, a nil ChatRequest or one that does not encode.
	ErrRequest = errors.New("agent: model request")
	// ErrProtocol is a 2xx answer that is not a chat completion: an
	// empty or malformed body, no choices, a stream cut before the turn
	// ended, a tool call without a name, an answer larger than
	// Model.MaxResponseSize. The error is an *EndpointError, within an *agent.ModelError of
	// kind agent.ErrServer.
	ErrProtocol = errors.New("agent: model response not understood")
)

// EndpointError is a failure to reach the model endpoint (agent.ErrUnreachable)
// or to understand its answer (ErrProtocol). It matches its Kind with
// errors.Is, and unwraps to the cause.
type EndpointError struct {
	// Kind is agent.ErrUnreachable or ErrProtocol.
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

// maxBodyHead bounds EndpointError.Body.
const maxBodyHead = 200

// Error returns the endpoint, the status, the cause and the body's start,
// as in `agent: model endpoint http://127.0.0.1:8080/v1/chat/completions:
// status 202: malformed body: unexpected end of JSON input (body "")`.
func (e *EndpointError) Error() string {
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
func (e *EndpointError) Unwrap() []error { return []error{e.Kind, e.Err} }

// unreachable is a request that got no answer.
func unreachable(endpoint string, err error) *EndpointError {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err // its text repeats the endpoint
	}
	return &EndpointError{Kind: agent.ErrUnreachable, Endpoint: endpoint, Err: err}
}

// requestError is a request that cannot be made.
func requestError(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrRequest}, args...)...)
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

// text is the head as EndpointError.Body shows it.
func (b *bodyHead) text() string {
	s := redact(printable(string(b.head)), b.key)
	if len(s) > maxBodyHead {
		s = clip(s, maxBodyHead)
	}
	return s
}

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"

	"git.rickub.com/bots-garden/mini-me/internal/jsonrpc"
	"git.rickub.com/bots-garden/mini-me/internal/textclip"
)

// JSON-RPC error codes a caller may branch on (see RPCError).
const (
	CodeParseError         = jsonrpc.CodeParseError
	CodeInvalidRequest     = jsonrpc.CodeInvalidRequest
	CodeMethodNotFound     = jsonrpc.CodeMethodNotFound
	CodeInvalidParams      = jsonrpc.CodeInvalidParams
	CodeInternalError      = jsonrpc.CodeInternalError
	CodeHeaderMismatch     = jsonrpc.CodeHeaderMismatch
	CodeMissingCapability  = jsonrpc.CodeMissingCapability
	CodeUnsupportedVersion = jsonrpc.CodeUnsupportedVersion
	// CodeResourceNotFound is the legacy resource-not-found code; the
	// 2026-07-28 revision uses CodeInvalidParams instead.
	CodeResourceNotFound = -32002
)

// RPCError is a JSON-RPC error the server answered with. Get it with
// errors.As to read the code and the data.
type RPCError struct {
	// Method is the method of the request that failed.
	Method string
	// Code is the JSON-RPC error code (see the Code constants).
	Code int
	// Message is the server's error message, as sent.
	Message string
	// Data is the error's data, raw; nil when none.
	Data json.RawMessage
}

// Error returns the method, the code and the server's message (cut at 300
// bytes); Data is left out.
func (e *RPCError) Error() string {
	return fmt.Sprintf("mcp: %s: server error %d: %s", e.Method, e.Code, clip(e.Message, 300))
}

// rpcCode returns the code of the *RPCError in err's chain, 0 if there is
// none. A nil err costs nothing: its target is made only past the check.
func rpcCode(err error) int {
	if err == nil {
		return 0
	}
	var rpc *RPCError
	if !errors.As(err, &rpc) {
		return 0
	}
	return rpc.Code
}

func rpcError(method string, e *jsonrpc.Error) *RPCError {
	return &RPCError{Method: method, Code: e.Code, Message: e.Message, Data: e.Data}
}

// HTTPError is an HTTP answer that carries no usable JSON-RPC message. Body
// holds the start of the body, for diagnosis.
type HTTPError struct {
	// Method is the method of the request that failed.
	Method string
	// StatusCode is the HTTP status of the answer.
	StatusCode int
	// ContentType is the answer's Content-Type header.
	ContentType string
	// Body is the start of the body (200 bytes at most, then "…"), with the
	// token redacted.
	Body string
}

// Is makes a 2xx HTTPError (a success status with a body that is not
// JSON-RPC, such as the wrong content type) match ErrProtocol.
func (e *HTTPError) Is(target error) bool {
	return target == ErrProtocol && e.StatusCode/100 == 2
}

// Error returns the method, the status and the start of the body.
func (e *HTTPError) Error() string {
	s := fmt.Sprintf("mcp: %s: http status %d", e.Method, e.StatusCode)
	if e.Body != "" {
		s += ": " + e.Body
	}
	return s
}

// Sentinel errors; test with errors.Is.
var (
	// ErrAuth wraps 401 and 403 answers: the credentials are missing,
	// wrong or lack a scope. It is never a protocol problem.
	ErrAuth = errors.New("mcp: authentication failed")
	// ErrClosed is returned by calls on a closed client.
	ErrClosed = errors.New("mcp: client closed")
	// ErrProtocol wraps answers that break the protocol: malformed JSON,
	// a wrong content type, a response to nobody, an unknown resultType.
	ErrProtocol = errors.New("mcp: protocol error")
	// ErrTooLarge wraps messages above Options.MaxMessageSize.
	ErrTooLarge = errors.New("mcp: message too large")
	// ErrSessionExpired is returned when a legacy session expired and the
	// request could not be replayed safely on a new one.
	ErrSessionExpired = errors.New("mcp: session expired")
	// ErrStreamBroken is returned when the connection or response stream
	// ended before the response arrived (EOF, a reset, a server process
	// that exited, an [*ExitError]) and the request could not be resumed
	// or re-issued safely: it may have run.
	ErrStreamBroken = errors.New("mcp: response stream ended early")
	// ErrUnreachable is returned when the server could not be reached at
	// all (connection refused, unknown host, a command that does not
	// start): the request was not delivered.
	ErrUnreachable = errors.New("mcp: server unreachable")
	// ErrInputRequired is returned when a server needs input (elicitation,
	// sampling, roots) that no handler is registered for.
	ErrInputRequired = errors.New("mcp: server requires input the client does not provide")
	// ErrUnsupportedVersion is returned when client and server share no
	// protocol version.
	ErrUnsupportedVersion = errors.New("mcp: no protocol version in common")
)

// clip shortens s for an error message (see textclip.Clip).
func clip(s string, n int) string { return textclip.Clip(s, n) }

// redacted is an error whose text had a secret removed. Its Is still
// answers for the original chain (context.DeadlineExceeded, ErrUnreachable
// and the like); the original is not reachable by errors.As or Unwrap,
// since its text holds the secret.
type redacted struct {
	msg string
	err error
}

func (e *redacted) Error() string { return e.msg }

// Is reports whether the original error matches target.
func (e *redacted) Is(target error) bool { return errors.Is(e.err, target) }

// netError classifies an error of the HTTP client for a request not
// answered: never connected (ErrUnreachable), or cut before the answer
// (ErrStreamBroken). A context's end is left as it is.
func netError(err error) error {
	var dns *net.DNSError
	var op *net.OpError
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.As(err, &dns), errors.As(err, &op) && op.Op == "dial":
		return fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	return fmt.Errorf("%w: %w", ErrStreamBroken, err)
}

// methodErr is an error of a request, prefixed with its method once: the
// "mcp: " its cause's text may start with is not repeated.
type methodErr struct {
	method string
	err    error
}

// methodError returns err as the error of a method's request.
func methodError(method string, err error) error { return &methodErr{method, err} }

func (e *methodErr) Error() string {
	return "mcp: " + e.method + ": " + strings.TrimPrefix(e.err.Error(), "mcp: ")
}

func (e *methodErr) Unwrap() error { return e.err }

package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"git.rickub.com/bots-garden/mini-me/internal/jsonrpc"
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
	// ErrStreamBroken is returned when a response stream ended before the
	// response arrived and the request could not be resumed or re-issued
	// safely.
	ErrStreamBroken = errors.New("mcp: response stream ended early")
	// ErrInputRequired is returned when a server needs input (elicitation,
	// sampling, roots) that no handler is registered for.
	ErrInputRequired = errors.New("mcp: server requires input the client does not provide")
	// ErrUnsupportedVersion is returned when client and server share no
	// protocol version.
	ErrUnsupportedVersion = errors.New("mcp: no protocol version in common")
)

// clip shortens s for an error message, on a character boundary.
func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

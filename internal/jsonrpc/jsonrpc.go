// Package jsonrpc holds the JSON-RPC 2.0 envelopes that MCP messages travel
// in. It is internal: users of mini-me see typed MCP calls, never frames.
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Version is the only JSON-RPC version MCP speaks.
const Version = "2.0"

// Standard and MCP error codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
	// CodeHeaderMismatch, CodeMissingCapability and CodeUnsupportedVersion
	// are the errors of the 2026-07-28 revision.
	CodeHeaderMismatch     = -32020
	CodeMissingCapability  = -32021
	CodeUnsupportedVersion = -32022
)

// Request is an outgoing request or notification (ID nil). Params is
// marshalled as given; it must not be nil for a 2026-07-28 request, where
// params always carry _meta.
type Request struct {
	// JSONRPC is always Version.
	JSONRPC string `json:"jsonrpc"`
	// ID is the request's id; nil makes a notification.
	ID ID `json:"id,omitempty"`
	// Method is the method called.
	Method string `json:"method"`
	// Params are the method's parameters; nil leaves them out.
	Params any `json:"params,omitempty"`
}

// Response is an outgoing response to a server request.
type Response struct {
	// JSONRPC is always Version.
	JSONRPC string `json:"jsonrpc"`
	// ID is the id of the request answered, echoed.
	ID ID `json:"id"`
	// Result is the result of a success; nil when Error is set.
	Result any `json:"result,omitempty"`
	// Error is set when the request failed.
	Error *Error `json:"error,omitempty"`
}

// ID is a request id: a JSON number or string kept as its raw encoding, so
// that 1 and "1" stay different and an id is echoed byte for byte.
type ID []byte

// Int returns the id of an integer.
func Int(n int64) ID { return strconv.AppendInt(nil, n, 10) }

// MarshalJSON writes the raw id.
func (id ID) MarshalJSON() ([]byte, error) {
	if len(id) == 0 {
		return []byte("null"), nil
	}
	return id, nil
}

// UnmarshalJSON keeps the raw id; null becomes the empty ID.
func (id *ID) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		*id = nil
		return nil
	}
	*id = append((*id)[:0], b...)
	return nil
}

// Valid reports whether the id is a string or a number.
func (id ID) Valid() bool {
	if len(id) == 0 {
		return false
	}
	c := id[0]
	return c == '"' || c == '-' || (c >= '0' && c <= '9')
}

// String returns the raw encoding, for messages.
func (id ID) String() string { return string(id) }

// Message is any incoming message. Result is decoded in the same pass as the
// envelope: set it to a pointer to the expected result type (or to a
// *json.RawMessage to keep the bytes) before unmarshalling, and it is filled
// in place.
type Message struct {
	// JSONRPC is the version the peer sent; Check wants Version.
	JSONRPC string `json:"jsonrpc"`
	// ID is a request's id, or in a response the id of the request answered;
	// empty for a notification.
	ID ID `json:"id"`
	// Method is set on a request or notification, empty on a response.
	Method string `json:"method"`
	// Params are the raw parameters of a request or notification.
	Params json.RawMessage `json:"params"`
	// Result receives a response's result (see above).
	Result any `json:"result"`
	// Error is set on an error response.
	Error *Error `json:"error"`
}

// IsResponse reports whether m answers a request.
func (m *Message) IsResponse() bool { return m.Method == "" }

// IsNotification reports whether m is a notification.
func (m *Message) IsNotification() bool { return m.Method != "" && len(m.ID) == 0 }

// Check reports what is structurally wrong with m, or nil.
func (m *Message) Check() error {
	if m.JSONRPC != Version {
		return fmt.Errorf("jsonrpc: version %q, want %q", m.JSONRPC, Version)
	}
	if m.Method == "" && len(m.ID) == 0 && m.Error == nil {
		return errors.New("jsonrpc: response without an id")
	}
	if len(m.ID) != 0 && !m.ID.Valid() {
		return fmt.Errorf("jsonrpc: id %.40s is neither a string nor a number", m.ID)
	}
	return nil
}

// Error is a JSON-RPC error object.
type Error struct {
	// Code is the error code (see the Code constants).
	Code int `json:"code"`
	// Message is a short description of the error.
	Message string `json:"message"`
	// Data is more about the error, raw; nil when none.
	Data json.RawMessage `json:"data,omitempty"`
}

// Error formats the code and message; data is left out (it may be large).
func (e *Error) Error() string {
	return fmt.Sprintf("json-rpc error %d: %s", e.Code, e.Message)
}

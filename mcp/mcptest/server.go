// Package mcptest serves a test's own Go tools over MCP, as
// net/http/httptest serves a test's HTTP handlers: [NewServer] starts a
// server on 127.0.0.1 that speaks Streamable HTTP in both protocol eras
// (the stateless 2026-07-28 revision and the initialize-based 2025-11-25
// one), and its URL is what a host's test gives to mcp.HTTPTransport, a
// config file or a Toolset. It records the calls it runs, for assertions.
//
// It serves tools only: no prompts, resources, tasks or notifications.
package mcptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	server "git.rickub.com/bots-garden/mini-me/internal/mcptest"
)

// Tool is a tool the server offers.
type Tool struct {
	// Name is the tool's name; it must be non-empty and unique on the
	// server.
	Name string
	// Description says what the tool does; it may be empty.
	Description string
	// InputSchema is the JSON Schema of the arguments, an object schema;
	// nil means {"type":"object"}, any arguments.
	InputSchema json.RawMessage
	// Handler runs a call with its arguments, a JSON object, and returns
	// the result's text. An error it returns is sent as the result of a
	// tool that failed (isError, with the error's text), as MCP asks, not
	// as a protocol error. Calls may run concurrently. It must not be nil.
	Handler func(ctx context.Context, args json.RawMessage) (string, error)
}

// Call is a call the server ran.
type Call struct {
	// Tool is the name of the tool called.
	Tool string
	// Arguments are the call's arguments, as sent.
	Arguments json.RawMessage
}

// Server is an MCP server started by NewServer. Its methods are safe for
// concurrent use.
type Server struct {
	// URL is the MCP endpoint, http://127.0.0.1:port/mcp.
	URL string

	srv   *server.Server
	mu    sync.Mutex
	calls []Call
}

// NewServer starts a server that offers tools, in order, on 127.0.0.1. It
// returns an error, and starts nothing, if a tool has no name or no
// Handler, if two share a name, or if an InputSchema is not a JSON object.
// The caller must Close the server.
func NewServer(tools ...Tool) (*Server, error) {
	s := &Server{}
	served := make([]server.Tool, 0, len(tools))
	seen := map[string]bool{}
	for i, t := range tools {
		def, err := definition(t)
		if err == nil && seen[t.Name] {
			err = errors.New("the name is already taken")
		}
		if err != nil {
			return nil, fmt.Errorf("mcptest: tool %d (%q): %w", i+1, t.Name, err)
		}
		seen[t.Name] = true
		served = append(served, server.Tool{Def: def, Call: s.runner(t)})
	}
	s.srv = &server.Server{Versions: []string{server.Modern, server.Legacy}, Tools: served}
	s.URL = s.srv.Start()
	return s, nil
}

// definition is t's definition as tools/list sends it.
func definition(t Tool) (json.RawMessage, error) {
	if t.Name == "" {
		return nil, errors.New("no name")
	}
	if t.Handler == nil {
		return nil, errors.New("no Handler")
	}
	schema := t.InputSchema
	if schema == nil {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(schema, &obj); err != nil || obj == nil {
		return nil, errors.New("InputSchema is not a JSON object")
	}
	return json.Marshal(struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}{t.Name, t.Description, schema})
}

// runner is the server's Call for t: it records the call and runs the
// Handler.
func (s *Server) runner(t Tool) func(context.Context, json.RawMessage, func(string, any)) (any, error) {
	return func(ctx context.Context, args json.RawMessage, _ func(string, any)) (any, error) {
		s.mu.Lock()
		s.calls = append(s.calls, Call{Tool: t.Name, Arguments: slices.Clone(args)})
		s.mu.Unlock()
		text, err := t.Handler(ctx, args)
		if err != nil {
			return map[string]any{"content": []any{map[string]any{"type": "text", "text": err.Error()}}, "isError": true}, nil
		}
		return server.TextResult(text), nil
	}
}

// Calls returns the calls the server ran, in the order they came.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.calls)
	for i := range out {
		out[i].Arguments = slices.Clone(out[i].Arguments)
	}
	return out
}

// Close stops the server and closes its connections; a call in progress
// sees its context end.
func (s *Server) Close() { s.srv.Close() }

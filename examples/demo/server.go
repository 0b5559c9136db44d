package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"git.rickub.com/bots-garden/mini-me/internal/jsonrpc"
)

// Modern and Legacy are the protocol versions a Server may speak.
const (
	Modern = "2026-07-28"
	Legacy = "2025-11-25"
)

// MaxMessageSize bounds one incoming JSON-RPC message, in bytes.
const MaxMessageSize = 1 << 20

// Server is an MCP server offering tools. The constructors ([Text],
// [Notes], [Finance]) fill it in; a caller may change Versions before
// serving. It is safe for concurrent use once serving.
type Server struct {
	// Name and Version are what the server says it is.
	Name, Version string
	// Instructions tell the model how to use the tools.
	Instructions string
	// Versions lists the protocol versions spoken: Modern, Legacy or both.
	Versions []string

	tools []tool

	mu       sync.Mutex
	sessions map[string]bool // legacy HTTP sessions
}

// tool is one tool of a Server.
type tool struct {
	name, title, description string
	hints                    hints
	schema                   *jsonschema.Schema
	run                      func(ctx context.Context, args json.RawMessage) (string, error)
}

// hints are a tool's annotations. Every demo tool is closed-world: it
// reaches nothing outside its server.
type hints struct{ readOnly, destructive, idempotent bool }

var (
	reads      = hints{readOnly: true}
	adds       = hints{}
	sets       = hints{idempotent: true}
	overwrites = hints{destructive: true, idempotent: true}
)

// newTool makes fn a tool whose input schema is inferred from In, a struct
// whose fields have json and jsonschema (description) tags. The tool
// definitions are constants of this package, so a type that has no schema
// is a programming error.
func newTool[In any](name, title, description string, h hints, fn func(context.Context, In) (string, error)) tool {
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("demo: tool %s: %v", name, err))
	}
	return tool{name: name, title: title, description: description, hints: h, schema: schema,
		run: func(ctx context.Context, args json.RawMessage) (string, error) {
			var in In
			if len(args) > 0 {
				dec := json.NewDecoder(bytes.NewReader(args))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&in); err != nil {
					return "", fmt.Errorf("invalid arguments: %v", err)
				}
			}
			return fn(ctx, in)
		}}
}

// definition is the tool as tools/list shows it.
func (t *tool) definition() map[string]any {
	annotations := map[string]any{"title": t.title, "readOnlyHint": t.hints.readOnly, "openWorldHint": false}
	if !t.hints.readOnly {
		annotations["destructiveHint"] = t.hints.destructive
		annotations["idempotentHint"] = t.hints.idempotent
	}
	return map[string]any{"name": t.name, "title": t.title, "description": t.description,
		"inputSchema": t.schema, "annotations": annotations}
}

func (s *Server) speaks(version string) bool { return slices.Contains(s.Versions, version) }

// requestEra tells a modern request (one whose _meta names a protocol
// version) from a legacy one. A server that speaks only Legacy takes every
// request as legacy, as such servers ignore _meta; a modern server refuses
// a version it does not speak.
func (s *Server) requestEra(params json.RawMessage) (modern bool, err *jsonrpc.Error) {
	var p struct {
		Meta struct {
			Version string `json:"io.modelcontextprotocol/protocolVersion"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(params, &p)
	switch v := p.Meta.Version; {
	case v == "" || !s.speaks(Modern):
		return false, nil
	case v != Modern:
		data, _ := json.Marshal(map[string]any{"supported": s.Versions, "requested": v})
		return false, &jsonrpc.Error{Code: jsonrpc.CodeUnsupportedVersion, Message: "unsupported protocol version", Data: data}
	}
	return true, nil
}

// answer runs one request of the given era.
func (s *Server) answer(ctx context.Context, method string, params json.RawMessage, modern bool) (any, *jsonrpc.Error) {
	capabilities := map[string]any{"tools": map[string]any{}}
	switch {
	case method == "server/discover" && modern:
		return complete(map[string]any{
			"supportedVersions": s.Versions,
			"capabilities":      capabilities,
			"instructions":      s.Instructions,
			"_meta":             map[string]any{"io.modelcontextprotocol/serverInfo": s.info()},
		}, true), nil
	case method == "initialize" && !modern && s.speaks(Legacy):
		return map[string]any{"protocolVersion": Legacy, "capabilities": capabilities,
			"serverInfo": s.info(), "instructions": s.Instructions}, nil
	case method == "ping" && !modern:
		return map[string]any{}, nil
	case method == "tools/list":
		defs := make([]map[string]any, len(s.tools))
		for i := range s.tools {
			defs[i] = s.tools[i].definition()
		}
		return result(modern, true, map[string]any{"tools": defs}), nil
	case method == "tools/call":
		return s.call(ctx, params, modern)
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + method}
}

// call runs a tool. A tool's error is a result with isError set, for the
// model to read; an unknown tool is a protocol error.
func (s *Server) call(ctx context.Context, params json.RawMessage, modern bool) (any, *jsonrpc.Error) {
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: " + err.Error()}
	}
	i := slices.IndexFunc(s.tools, func(t tool) bool { return t.name == p.Name })
	if i < 0 {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", p.Name)}
	}
	text, err := s.tools[i].run(ctx, p.Arguments)
	if err != nil {
		text = err.Error()
	}
	content := []map[string]any{{"type": "text", "text": text}}
	return result(modern, false, map[string]any{"content": content, "isError": err != nil}), nil
}

// response is the answer to request id: rerr if it is not nil, else res.
func response(id jsonrpc.ID, res any, rerr *jsonrpc.Error) jsonrpc.Response {
	if rerr != nil {
		return jsonrpc.Response{JSONRPC: jsonrpc.Version, ID: id, Error: rerr}
	}
	return jsonrpc.Response{JSONRPC: jsonrpc.Version, ID: id, Result: res}
}

func (s *Server) info() map[string]any {
	return map[string]any{"name": s.Name, "version": s.Version}
}

// result adds to a modern result the fields the 2026-07-28 revision
// requires: resultType, and the cache hints of cacheable results.
func result(modern, cacheable bool, fields map[string]any) map[string]any {
	if modern {
		complete(fields, cacheable)
	}
	return fields
}

func complete(fields map[string]any, cacheable bool) map[string]any {
	fields["resultType"] = "complete"
	if cacheable {
		fields["ttlMs"] = time.Hour.Milliseconds() // the demo's tools never change
		fields["cacheScope"] = "public"
	}
	return fields
}

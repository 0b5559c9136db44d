package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"git.rickub.com/bots-garden/mini-me/mcp"
)

// Func is a local Go function offered to the model as a tool, beside the
// MCP tools. Create it with [NewFunc] and add it to Agent.Funcs. Its calls
// go through the same validation, permission policy (under the server
// name FuncServer), events and output limits as MCP tools.
//
// A Func is immutable and safe for concurrent use.
type Func struct {
	name, description string
	schema            *toolSchema
	inputSchema       json.RawMessage
	call              func(ctx context.Context, args json.RawMessage) (string, error)
}

// funcName is what OpenAI-compatible servers accept as a function name.
var funcName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// NewFunc makes fn a tool named name. The input schema is inferred from In
// by github.com/google/jsonschema-go: In must be a struct (or a map with
// string keys); its exported fields are the arguments, named by their json
// tags, required unless tagged omitempty, and described by their
// jsonschema tags.
//
// The model's arguments are validated against that schema, then decoded
// into an In. What fn returns is the tool's output: a string as it is,
// anything else as JSON. An error returned by fn is a tool error: its text
// goes to the model, which may correct itself; it does not stop the run.
// fn must honour ctx, which is cancelled when the run is; a panic in fn is
// recovered and reported to the model as an internal error.
//
// NewFunc fails if name is not 1 to 64 letters, digits, '_' or '-', or
// if no object schema can be inferred from In.
func NewFunc[In, Out any](name, description string, fn func(ctx context.Context, in In) (Out, error)) (*Func, error) {
	if !funcName.MatchString(name) {
		return nil, fmt.Errorf("agent: func name %q: want 1 to 64 letters, digits, '_' or '-'", name)
	}
	if fn == nil {
		return nil, fmt.Errorf("agent: func %q: nil function", name)
	}
	_, raw, ts, err := objectSchema(reflect.TypeFor[In](), fmt.Sprintf("func %q: the input", name))
	if err != nil {
		return nil, err
	}
	call := func(ctx context.Context, args json.RawMessage) (string, error) {
		var in In
		if err := json.Unmarshal(args, &in); err != nil {
			return "", fmt.Errorf("decoding the arguments: %w", err)
		}
		out, err := fn(ctx, in)
		if err != nil {
			return "", err
		}
		if s, ok := any(out).(string); ok {
			return s, nil
		}
		b, err := json.Marshal(out)
		if err != nil {
			return "", fmt.Errorf("encoding the result: %w", err)
		}
		return string(b), nil
	}
	return &Func{name: name, description: description, schema: ts, inputSchema: raw, call: call}, nil
}

// objectSchema infers the JSON Schema of t, which must be an object
// schema, encodes it and compiles it; what names t in errors.
func objectSchema(t reflect.Type, what string) (*jsonschema.Schema, json.RawMessage, *toolSchema, error) {
	s, err := jsonschema.ForType(t, nil)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("agent: %s: inferring the schema of %s: %w", what, t, err)
	}
	if s.Type != "object" {
		kind := s.Type
		if kind == "" {
			kind = strings.Join(s.Types, " or ") // a slice or a pointer: ["null", "array"]
		}
		return nil, nil, nil, fmt.Errorf("agent: %s type must be a struct or a map with string keys, not a JSON %s (%s)", what, kind, t)
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("agent: %s: encoding the schema of %s: %w", what, t, err)
	}
	ts := compileSchema(raw)
	if ts.err != nil {
		return nil, nil, nil, fmt.Errorf("agent: %s: %w", what, ts.err)
	}
	return s, raw, ts, nil
}

// Name returns the name the model calls the function by.
func (f *Func) Name() string { return f.name }

// Description returns the description the model is shown.
func (f *Func) Description() string { return f.description }

// Call calls the function with args, which must have passed validation
// against InputSchema, as a run does: an error it returns, or a panic, is
// a tool error (IsError). It is for a host that runs a Func's calls
// outside a run, such as a worker of a durable-execution engine
// (agent/temporal).
func (f *Func) Call(ctx context.Context, args json.RawMessage) *mcp.CallToolResult {
	res, _ := f.run(ctx, args)
	return res
}

// InputSchema returns the JSON Schema inferred for the arguments.
func (f *Func) InputSchema() json.RawMessage { return append(json.RawMessage(nil), f.inputSchema...) }

// run calls the function, turning an error or a panic into a tool error.
func (f *Func) run(ctx context.Context, args json.RawMessage) (res *mcp.CallToolResult, panicked any) {
	defer func() {
		if p := recover(); p != nil {
			res = errorResult("internal error: the function failed")
			panicked = p
		}
	}()
	out, err := f.call(ctx, args)
	if err != nil {
		return errorResult(err.Error()), nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{{Type: "text", Text: out}}}, nil
}

func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{{Type: "text", Text: text}}, IsError: true}
}

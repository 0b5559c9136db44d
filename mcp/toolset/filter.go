package toolset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"git.rickub.com/bots-garden/mini-me/mcp"
)

// Limits of a tool definition, applied as a tool enters the catalogue:
// every request to the model carries the definitions of the tools it is
// offered, so one server's oversized tool would weigh on every turn.
const (
	// MaxToolDescription is the longest tool description a Toolset keeps,
	// in bytes: a longer one is cut on a character boundary and ends with
	// a note saying so, within the limit (WarnToolTrimmed).
	MaxToolDescription = 8 << 10
	// MaxToolSchema is the largest input schema a Toolset accepts, in
	// bytes of its JSON: a tool whose schema is larger is not offered
	// (WarnToolTooLarge), since a cut schema would let the model send
	// arguments the server's schema refuses, or miss required ones.
	MaxToolSchema = 128 << 10
)

// invalidTool is a tool ListTools left out, with the reason.
type invalidTool struct {
	name   string
	reason error
}

// filterTools applies a server's allowlist (nil allows every tool) and
// drops the tools an agent cannot use: invalid definitions, input schemas
// over MaxToolSchema, binary inputs and tools that require tasks when the
// client does not use tasks (use says how each tool is called); it cuts
// descriptions to MaxToolDescription. It returns the kept tools in the
// server's order and a warning for each tool dropped or cut and each
// allowlisted name the server does not have. Tools outside the allowlist
// are dropped silently.
func filterTools(server string, allow []string, tools []mcp.Tool, invalid []invalidTool, use func(mcp.Tool) mcp.TaskUse) ([]mcp.Tool, []Warning) {
	allowed := func(string) bool { return true }
	if allow != nil {
		set := make(map[string]bool, len(allow))
		for _, n := range allow {
			set[n] = true
		}
		allowed = func(n string) bool { return set[n] }
	}
	var warns []Warning
	warn := func(kind WarningKind, tool, format string, args ...any) {
		warns = append(warns, Warning{Server: server, Tool: tool, Kind: kind, Message: fmt.Sprintf(format, args...)})
	}
	listed := make(map[string]bool, len(tools)+len(invalid))
	for _, t := range invalid {
		listed[t.name] = true
		if allowed(t.name) {
			warn(WarnInvalidTool, t.name, "invalid definition: %v", t.reason)
		}
	}
	kept := make([]mcp.Tool, 0, len(tools))
	for _, t := range tools {
		if !allowed(t.Name) {
			listed[t.Name] = true
			continue
		}
		if listed[t.Name] {
			warn(WarnInvalidTool, t.Name, "listed more than once; the first definition is kept")
			continue
		}
		listed[t.Name] = true
		if t.Name == "" {
			warn(WarnInvalidTool, t.Name, "tool has no name")
			continue
		}
		if !isObject(t.InputSchema) {
			warn(WarnInvalidTool, t.Name, "input schema is not a JSON object")
			continue
		}
		if len(t.InputSchema) > MaxToolSchema {
			warn(WarnToolTooLarge, t.Name, "input schema of %d bytes, over the limit of %d (toolset.MaxToolSchema): it would weigh on every request to the model", len(t.InputSchema), MaxToolSchema)
			continue
		}
		if where, why := binaryInput(t.InputSchema); where != "" {
			warn(WarnBinaryInput, t.Name, "input %s has %s: binary data cannot come from the model", where, why)
			continue
		}
		if t.Execution != nil && t.Execution.TaskSupport == "required" && use(t) == mcp.TaskNever {
			warn(WarnTaskRequired, t.Name, "tool requires task execution, and tasks are off (mcp.Options.Tasks, or the server's tasks: off)")
			continue
		}
		if len(t.Description) > MaxToolDescription {
			warn(WarnToolTrimmed, t.Name, "description of %d bytes cut to %d (toolset.MaxToolDescription)", len(t.Description), MaxToolDescription)
			t.Description = cutDescription(t.Description)
		}
		kept = append(kept, t)
	}
	for _, n := range allow {
		if !listed[n] {
			warn(WarnToolNotFound, n, "allowlisted tool is not offered by the server")
		}
	}
	return kept, warns
}

// cutDescription cuts d to MaxToolDescription bytes, on a character
// boundary, ending with a note that tells the model (and the user) that
// the rest was left out.
func cutDescription(d string) string {
	note := fmt.Sprintf("\n[description cut: the server's is %d bytes, over the limit of %d]", len(d), MaxToolDescription)
	keep := MaxToolDescription - len(note)
	for keep > 0 && !utf8.RuneStart(d[keep]) {
		keep--
	}
	return d[:keep] + note
}

// isObject reports whether raw is a JSON object.
func isObject(raw json.RawMessage) bool {
	t := bytes.TrimLeft(raw, " \t\r\n")
	return len(t) > 0 && t[0] == '{'
}

// binaryInput finds, at any depth of an input schema, a value that must be
// binary data: format or type "binary", contentEncoding base64, or
// contentMediaType on a string. It returns where (a JSON pointer into the
// schema) and why, or "" when there is none. Keys are visited in sorted
// order, so the answer is deterministic.
func binaryInput(schema json.RawMessage) (where, why string) {
	if !bytes.ContainsRune(schema, '\\') && !bytes.Contains(schema, []byte(`"binary"`)) &&
		!bytes.Contains(schema, []byte(`"contentEncoding"`)) && !bytes.Contains(schema, []byte(`"contentMediaType"`)) {
		return "", "" // without escapes, a keyword of binaryKeyword would be there as is: most schemas are not decoded
	}
	var root any
	if json.Unmarshal(schema, &root) != nil {
		return "", ""
	}
	return findBinary(root, "")
}

func findBinary(node any, path string) (where, why string) {
	switch n := node.(type) {
	case []any:
		for i, e := range n {
			if w, y := findBinary(e, fmt.Sprintf("%s/%d", path, i)); w != "" {
				return w, y
			}
		}
	case map[string]any:
		if why := binaryKeyword(n); why != "" {
			if path == "" {
				path = "/"
			}
			return "schema " + path, why
		}
		keys := make([]string, 0, len(n))
		for k := range n {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			switch k {
			case "const", "default", "enum", "examples":
				continue // data, not schemas
			}
			if w, y := findBinary(n[k], path+"/"+escapePointer(k)); w != "" {
				return w, y
			}
		}
	}
	return "", ""
}

// binaryKeyword says which keyword of a schema node asks for binary data.
func binaryKeyword(n map[string]any) string {
	if f, _ := n["format"].(string); f == "binary" {
		return "format binary"
	}
	if hasType(n["type"], "binary") {
		return "type binary"
	}
	if e, _ := n["contentEncoding"].(string); strings.EqualFold(e, "base64") {
		return "contentEncoding base64"
	}
	if m, ok := n["contentMediaType"].(string); ok && (n["type"] == nil || hasType(n["type"], "string")) {
		return "contentMediaType " + m
	}
	return ""
}

// hasType reports whether a schema's type keyword (a string or a list)
// includes want.
func hasType(t any, want string) bool {
	switch t := t.(type) {
	case string:
		return t == want
	case []any:
		for _, e := range t {
			if e == want {
				return true
			}
		}
	}
	return false
}

// escapePointer escapes a key for a JSON pointer (RFC 6901).
func escapePointer(k string) string { return pointerEscaper.Replace(k) }

// pointerEscaper is built once: building a Replacer costs far more than
// using it, and escapePointer runs for every property of every schema.
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

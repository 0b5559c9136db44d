package mcp

import (
	"encoding/json"
)

// Protocol versions this client speaks, newest first.
const (
	// Version20260728 is the stateless revision: no handshake, metadata on
	// every request.
	Version20260728 = "2026-07-28"
	// Version20251125, Version20250618 and Version20250326 are the
	// initialize-based revisions.
	Version20251125 = "2025-11-25"
	Version20250618 = "2025-06-18"
	Version20250326 = "2025-03-26"
	// Version20241105 is the revision of the deprecated HTTP+SSE transport.
	Version20241105 = "2024-11-05"
)

// legacyVersions are the initialize-based versions we accept, newest first.
var legacyVersions = []string{Version20251125, Version20250618, Version20250326, Version20241105}

func isLegacyVersion(v string) bool {
	for _, l := range legacyVersions {
		if l == v {
			return true
		}
	}
	return false
}

// Implementation names a client or a server and its version. Servers report
// their own: use it for display and logs, never for decisions.
type Implementation struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Version     string `json:"version"`
	Description string `json:"description,omitempty"`
	WebsiteURL  string `json:"websiteUrl,omitempty"`
	Icons       []Icon `json:"icons,omitempty"`
}

// Icon is an image a client may show for a tool, prompt, resource or server.
type Icon struct {
	Src      string   `json:"src"`
	MIMEType string   `json:"mimeType,omitempty"`
	Sizes    []string `json:"sizes,omitempty"`
	Theme    string   `json:"theme,omitempty"`
}

// ServerCapabilities are what a server offers. Each field is the raw JSON
// object the server sent, nil when the capability is absent.
type ServerCapabilities struct {
	Tools        *ListChangedCapability `json:"tools,omitempty"`
	Prompts      *ListChangedCapability `json:"prompts,omitempty"`
	Resources    *ResourcesCapability   `json:"resources,omitempty"`
	Logging      json.RawMessage        `json:"logging,omitempty"`
	Completions  json.RawMessage        `json:"completions,omitempty"`
	Experimental json.RawMessage        `json:"experimental,omitempty"`
	Extensions   json.RawMessage        `json:"extensions,omitempty"`
}

// ListChangedCapability says whether the server notifies list changes.
type ListChangedCapability struct {
	ListChanged bool `json:"listChanged,omitempty"`
}

// ResourcesCapability adds resource subscriptions to list changes.
type ResourcesCapability struct {
	ListChanged bool `json:"listChanged,omitempty"`
	Subscribe   bool `json:"subscribe,omitempty"`
}

// Tool is a tool definition as the server listed it. Schemas are kept as raw
// JSON, byte for byte, so no keyword is lost.
type Tool struct {
	Name         string           `json:"name"`
	Title        string           `json:"title,omitempty"`
	Description  string           `json:"description,omitempty"`
	InputSchema  json.RawMessage  `json:"inputSchema"`
	OutputSchema json.RawMessage  `json:"outputSchema,omitempty"`
	Annotations  *ToolAnnotations `json:"annotations,omitempty"`
	Icons        []Icon           `json:"icons,omitempty"`
	Execution    *ToolExecution   `json:"execution,omitempty"`
	Meta         json.RawMessage  `json:"_meta,omitempty"`
}

// DisplayName is the title, else the annotations' title, else the name.
func (t *Tool) DisplayName() string {
	if t.Title != "" {
		return t.Title
	}
	if t.Annotations != nil && t.Annotations.Title != "" {
		return t.Annotations.Title
	}
	return t.Name
}

// ToolAnnotations are the server's hints about a tool. They are hints only:
// a server may lie. Absent hints take the spec's defaults, which the methods
// apply.
type ToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// ReadOnly reports readOnlyHint (default false).
func (a *ToolAnnotations) ReadOnly() bool {
	return a != nil && a.ReadOnlyHint != nil && *a.ReadOnlyHint
}

// Idempotent reports idempotentHint (default false); a read-only tool is
// idempotent too.
func (a *ToolAnnotations) Idempotent() bool {
	return a.ReadOnly() || (a != nil && a.IdempotentHint != nil && *a.IdempotentHint)
}

// ToolExecution is the 2025-11-25 task support of a tool.
type ToolExecution struct {
	TaskSupport string `json:"taskSupport,omitempty"`
}

// Content is one block of a tool result or prompt message: text, image,
// audio, resource_link or resource (embedded). Fields not used by Type are
// empty.
type Content struct {
	Type string `json:"type"`
	// Text is set for "text".
	Text string `json:"text,omitempty"`
	// Data (base64) and MIMEType are set for "image" and "audio";
	// MIMEType may be set for "resource_link" too.
	Data     string `json:"data,omitempty"`
	MIMEType string `json:"mimeType,omitempty"`
	// URI, Name, Title, Description and Size describe a "resource_link".
	URI         string `json:"uri,omitempty"`
	Name        string `json:"name,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Size        *int64 `json:"size,omitempty"`
	// Resource is set for "resource".
	Resource    *ResourceContents `json:"resource,omitempty"`
	Annotations json.RawMessage   `json:"annotations,omitempty"`
	Meta        json.RawMessage   `json:"_meta,omitempty"`
}

// CallToolResult is what a tool returned. IsError marks an execution error
// the model should see and may correct; protocol errors come back as Go
// errors instead.
type CallToolResult struct {
	Content           []Content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
	Meta              json.RawMessage `json:"_meta,omitempty"`
}

// Text joins the text blocks of the result with newlines.
func (r *CallToolResult) Text() string {
	n := 0
	for i := range r.Content {
		if r.Content[i].Type == "text" {
			n += len(r.Content[i].Text) + 1
		}
	}
	b := make([]byte, 0, n)
	for i := range r.Content {
		if r.Content[i].Type != "text" {
			continue
		}
		if len(b) > 0 {
			b = append(b, '\n')
		}
		b = append(b, r.Content[i].Text...)
	}
	return string(b)
}

// Prompt is a prompt template a server offers.
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
	Icons       []Icon           `json:"icons,omitempty"`
	Meta        json.RawMessage  `json:"_meta,omitempty"`
}

// PromptArgument is one argument of a prompt.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// GetPromptResult is a rendered prompt.
type GetPromptResult struct {
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// PromptMessage is one message of a rendered prompt.
type PromptMessage struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
}

// Resource is a resource a server lists.
type Resource struct {
	URI         string          `json:"uri"`
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	MIMEType    string          `json:"mimeType,omitempty"`
	Size        *int64          `json:"size,omitempty"`
	Annotations json.RawMessage `json:"annotations,omitempty"`
	Icons       []Icon          `json:"icons,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// ResourceContents is the text or the base64 blob of a resource.
type ResourceContents struct {
	URI      string          `json:"uri"`
	MIMEType string          `json:"mimeType,omitempty"`
	Text     string          `json:"text,omitempty"`
	Blob     string          `json:"blob,omitempty"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// ReadResourceResult is the content of a resource.
type ReadResourceResult struct {
	Contents []ResourceContents `json:"contents"`
	Meta     json.RawMessage    `json:"_meta,omitempty"`
}

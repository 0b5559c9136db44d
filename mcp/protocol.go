package mcp

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
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
	// Name is the programmatic name; it is shown when Title is empty.
	Name string `json:"name"`
	// Title is the human-readable name, for display.
	Title string `json:"title,omitempty"`
	// Version is the implementation's version, as it reports it.
	Version string `json:"version"`
	// Description says what the implementation does.
	Description string `json:"description,omitempty"`
	// WebsiteURL is the implementation's website, if any.
	WebsiteURL string `json:"websiteUrl,omitempty"`
	// Icons are images a client may show for it.
	Icons []Icon `json:"icons,omitempty"`
}

// Icon is an image a client may show for a tool, prompt, resource or server.
type Icon struct {
	// Src is the image's URI: an http(s) URL or a base64 data: URI.
	Src string `json:"src"`
	// MIMEType overrides a missing or generic type of Src ("image/png").
	MIMEType string `json:"mimeType,omitempty"`
	// Sizes lists the sizes the icon suits, "WxH" ("48x48") or "any".
	Sizes []string `json:"sizes,omitempty"`
	// Theme is the background the icon is drawn for, "light" or "dark";
	// empty for any.
	Theme string `json:"theme,omitempty"`
}

// ServerCapabilities are what a server offers. Each field is nil when the
// server does not declare the capability; Tools, Prompts and Resources are
// decoded, the others are the raw JSON object the server sent.
type ServerCapabilities struct {
	// Tools is set when the server offers tools.
	Tools *ListChangedCapability `json:"tools,omitempty"`
	// Prompts is set when the server offers prompts.
	Prompts *ListChangedCapability `json:"prompts,omitempty"`
	// Resources is set when the server offers resources.
	Resources *ResourcesCapability `json:"resources,omitempty"`
	// Logging is set when the server sends log messages.
	Logging json.RawMessage `json:"logging,omitempty"`
	// Completions is set when the server completes arguments.
	Completions json.RawMessage `json:"completions,omitempty"`
	// Tasks is the 2025-11-25 tasks capability (which requests may be
	// tasks, tasks/list, tasks/cancel).
	Tasks json.RawMessage `json:"tasks,omitempty"`
	// Experimental holds the server's non-standard capabilities.
	Experimental json.RawMessage `json:"experimental,omitempty"`
	// Extensions maps the extensions the server supports (2026-07-28) to
	// their settings.
	Extensions json.RawMessage `json:"extensions,omitempty"`
}

// ListChangedCapability says whether the server notifies list changes.
type ListChangedCapability struct {
	// ListChanged is true when the server sends list_changed notifications.
	ListChanged bool `json:"listChanged,omitempty"`
}

// ResourcesCapability adds resource subscriptions to list changes.
type ResourcesCapability struct {
	// ListChanged is true when the server sends list_changed notifications.
	ListChanged bool `json:"listChanged,omitempty"`
	// Subscribe is true when a client may subscribe to resource updates.
	Subscribe bool `json:"subscribe,omitempty"`
}

// Tool is a tool definition as the server listed it. Schemas are kept as raw
// JSON, byte for byte, so no keyword is lost.
type Tool struct {
	// Name is the tool's name on its server, the one it is called by.
	Name string `json:"name"`
	// Title is a human-readable name, for display (see DisplayName).
	Title string `json:"title,omitempty"`
	// Description tells the model what the tool does.
	Description string `json:"description,omitempty"`
	// InputSchema is the JSON Schema of the tool's arguments.
	InputSchema json.RawMessage `json:"inputSchema"`
	// OutputSchema, if set, is the JSON Schema of the result's
	// StructuredContent.
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// Annotations are the server's hints about the tool; nil when none.
	Annotations *ToolAnnotations `json:"annotations,omitempty"`
	// Icons are images a client may show for the tool.
	Icons []Icon `json:"icons,omitempty"`
	// Execution is the tool's task support; nil when not given.
	Execution *ToolExecution `json:"execution,omitempty"`
	// Meta is the tool's _meta object.
	Meta json.RawMessage `json:"_meta,omitempty"`
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
	// Title is a human-readable name for the tool.
	Title string `json:"title,omitempty"`
	// ReadOnlyHint says the tool does not modify its environment; default false.
	ReadOnlyHint *bool `json:"readOnlyHint,omitempty"`
	// DestructiveHint says a tool that is not read-only may destroy, not only
	// add; default true.
	DestructiveHint *bool `json:"destructiveHint,omitempty"`
	// IdempotentHint says repeating a call with the same arguments has no
	// further effect; default false.
	IdempotentHint *bool `json:"idempotentHint,omitempty"`
	// OpenWorldHint says the tool reaches an open world of outside entities
	// (a web search, say) rather than a closed domain; default true.
	OpenWorldHint *bool `json:"openWorldHint,omitempty"`
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
	// TaskSupport is "forbidden" (the default when empty), "optional" or
	// "required".
	TaskSupport string `json:"taskSupport,omitempty"`
}

// Content is one block of a tool result or prompt message: text, image,
// audio, resource_link or resource (embedded). Fields not used by Type are
// empty.
type Content struct {
	// Type is "text", "image", "audio", "resource_link" or "resource".
	Type string `json:"type"`
	// Text is set for "text".
	Text string `json:"text,omitempty"`
	// Data (base64) and MIMEType are set for "image" and "audio";
	// MIMEType may be set for "resource_link" too.
	Data string `json:"data,omitempty"`
	// MIMEType is the media type of Data or of the linked resource.
	MIMEType string `json:"mimeType,omitempty"`
	// URI, Name, Title, Description and Size describe a "resource_link".
	URI string `json:"uri,omitempty"`
	// Name is the linked resource's programmatic name.
	Name string `json:"name,omitempty"`
	// Title is the linked resource's display name.
	Title string `json:"title,omitempty"`
	// Description says what the linked resource is.
	Description string `json:"description,omitempty"`
	// Size is the linked resource's size in bytes; nil when unknown.
	Size *int64 `json:"size,omitempty"`
	// Resource is set for "resource".
	Resource *ResourceContents `json:"resource,omitempty"`
	// Annotations are the block's audience, priority and lastModified hints.
	Annotations json.RawMessage `json:"annotations,omitempty"`
	// Meta is the block's _meta object.
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// CallToolResult is what a tool returned. IsError marks an execution error
// the model should see and may correct; protocol errors come back as Go
// errors instead.
type CallToolResult struct {
	// Content is the result as content blocks, what the model is shown.
	Content []Content `json:"content"`
	// StructuredContent is the result as a JSON object, conforming to the
	// tool's OutputSchema when it has one; nil when not given.
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	// IsError marks a tool execution error.
	IsError bool `json:"isError,omitempty"`
	// Meta is the result's _meta object.
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// Text renders the result for a model that reads text only. Text blocks
// and the text of embedded resources are kept; an image, audio or blob is
// replaced by a placeholder naming its type, MIME type and decoded size,
// such as "[image image/png, 12.3 KiB omitted]"; a resource link becomes
// "[resource link: URI]". Blocks are joined with newlines. A result with no
// content but structured content gives that JSON.
func (r *CallToolResult) Text() string {
	if len(r.Content) == 0 {
		return string(r.StructuredContent)
	}
	var b strings.Builder
	for i := range r.Content {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(contentText(&r.Content[i]))
	}
	return b.String()
}

// contentText is one content block as text.
func contentText(c *Content) string {
	switch c.Type {
	case "text":
		return c.Text
	case "image", "audio":
		return omitted(c.Type, c.MIMEType, c.Data)
	case "resource_link":
		return "[resource link: " + c.URI + "]"
	case "resource":
		switch {
		case c.Resource == nil:
			return "[empty resource omitted]"
		case c.Resource.Blob != "":
			return omitted("blob", c.Resource.MIMEType, c.Resource.Blob)
		default:
			return c.Resource.Text
		}
	}
	return fmt.Sprintf("[%q content omitted]", c.Type)
}

// omitted is the placeholder of binary data given in base64.
func omitted(kind, mimeType, data string) string {
	if mimeType == "" {
		mimeType = "of unknown type"
	}
	return fmt.Sprintf("[%s %s, %s omitted]", kind, mimeType, byteSize(decodedLen(data)))
}

// decodedLen is the size of base64 data once decoded, padded or not,
// without decoding it.
func decodedLen(s string) int {
	s = strings.TrimRight(s, "=")
	return base64.RawStdEncoding.DecodedLen(len(s))
}

// byteSize formats n bytes for people: B, KiB, MiB or GiB.
func byteSize(n int) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	f, suffix := float64(n)/unit, "KiB"
	for _, s := range []string{"MiB", "GiB"} {
		if f < unit {
			break
		}
		f, suffix = f/unit, s
	}
	return fmt.Sprintf("%.1f %s", f, suffix)
}

// Prompt is a prompt template a server offers.
type Prompt struct {
	// Name is the prompt's name, the one GetPrompt takes.
	Name string `json:"name"`
	// Title is a human-readable name, for display.
	Title string `json:"title,omitempty"`
	// Description says what the prompt is for.
	Description string `json:"description,omitempty"`
	// Arguments are the arguments the template takes.
	Arguments []PromptArgument `json:"arguments,omitempty"`
	// Icons are images a client may show for the prompt.
	Icons []Icon `json:"icons,omitempty"`
	// Meta is the prompt's _meta object.
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// PromptArgument is one argument of a prompt.
type PromptArgument struct {
	// Name is the argument's name, the key GetPrompt's args use.
	Name string `json:"name"`
	// Title is a human-readable name, for display.
	Title string `json:"title,omitempty"`
	// Description says what the argument is.
	Description string `json:"description,omitempty"`
	// Required is true when the argument must be given.
	Required bool `json:"required,omitempty"`
}

// GetPromptResult is a rendered prompt.
type GetPromptResult struct {
	// Description is the server's description of the prompt, if any.
	Description string `json:"description,omitempty"`
	// Messages are the rendered messages, in order.
	Messages []PromptMessage `json:"messages"`
	// Meta is the result's _meta object.
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// PromptMessage is one message of a rendered prompt.
type PromptMessage struct {
	// Role is "user" or "assistant".
	Role string `json:"role"`
	// Content is the message's content block.
	Content Content `json:"content"`
}

// Resource is a resource a server lists.
type Resource struct {
	// URI identifies the resource; it is what ReadResource takes.
	URI string `json:"uri"`
	// Name is the resource's programmatic name.
	Name string `json:"name"`
	// Title is a human-readable name, for display.
	Title string `json:"title,omitempty"`
	// Description says what the resource is, as a hint to the model.
	Description string `json:"description,omitempty"`
	// MIMEType is the resource's media type, if known.
	MIMEType string `json:"mimeType,omitempty"`
	// Size is the raw content's size in bytes; nil when unknown.
	Size *int64 `json:"size,omitempty"`
	// Annotations are the resource's audience, priority and lastModified hints.
	Annotations json.RawMessage `json:"annotations,omitempty"`
	// Icons are images a client may show for the resource.
	Icons []Icon `json:"icons,omitempty"`
	// Meta is the resource's _meta object.
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// ResourceContents is the text or the base64 blob of a resource.
type ResourceContents struct {
	// URI is the URI of the resource these contents are of.
	URI string `json:"uri"`
	// MIMEType is the content's media type, if known.
	MIMEType string `json:"mimeType,omitempty"`
	// Text is the content of a text resource.
	Text string `json:"text,omitempty"`
	// Blob is the base64 content of a binary resource.
	Blob string `json:"blob,omitempty"`
	// Meta is the contents' _meta object.
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// ReadResourceResult is the content of a resource.
type ReadResourceResult struct {
	// Contents are the contents read; one URI may give several.
	Contents []ResourceContents `json:"contents"`
	// Meta is the result's _meta object.
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// Text renders the message's content for a model that reads text only,
// as CallToolResult.Text renders a block: text kept, an image or audio block
// (or an embedded blob) replaced by a placeholder naming its type and
// size, a resource link by its URI, an embedded text resource by its text.
func (m *PromptMessage) Text() string { return contentText(&m.Content) }

// Text renders the contents read for a model that reads text only: the
// text of each, a placeholder for a blob (its MIME type and decoded size),
// joined with newlines.
func (r *ReadResourceResult) Text() string {
	parts := make([]string, len(r.Contents))
	for i := range r.Contents {
		parts[i] = contentText(&Content{Type: "resource", Resource: &r.Contents[i]})
	}
	return strings.Join(parts, "\n")
}

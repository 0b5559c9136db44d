package agent

import (
	"encoding/json"
	"fmt"
)

// PartKind says what a [Part] is.
type PartKind string

// The kinds of part.
const (
	// PartText is text: what a system prompt, a user or the model says.
	PartText PartKind = "text"
	// PartReasoning is the model's reasoning in an assistant message: its
	// text when the provider shows it, and the opaque Signature the
	// provider needs back on the next turn. Only the provider that wrote
	// it is sent it (see Part.SentTo).
	PartReasoning PartKind = "reasoning"
	// PartToolCall is a call of a tool in an assistant message: ID, Name
	// and Arguments.
	PartToolCall PartKind = "tool_call"
	// PartToolResult is the result of a call, in the tool message that
	// answers it: Text, what the model was shown, and Structured, the
	// tool's structured content, if any.
	PartToolResult PartKind = "tool_result"
	// PartImage is an image in a user message: MediaType and Data, or
	// URL, for models that take images.
	PartImage PartKind = "image"
	// PartFile is a file in a user message: Name, MediaType and Data, or
	// URL, for models that take files.
	PartFile PartKind = "file"
)

// Part is one piece of a [Message]: a concrete struct whose Kind says
// which of its fields are set, rather than an interface with a type per
// kind, so that a conversation stays plain data that encodes to JSON and
// back exactly, with no registry of types, and a message's parts take one
// allocation.
//
// Provider metadata: a part made by a driver may carry, in Metadata, what
// that provider needs back (an item ID, a cache marker, the field a
// server named its reasoning), keyed by the provider's name. A driver
// reads its own key only, and sends nothing of another's; a reasoning
// part as a whole is sent back to the provider that wrote it only.
type Part struct {
	// Kind says what the part is, and which fields below are set.
	Kind PartKind `json:"kind"`
	// Text is the text of a PartText, the shown reasoning of a
	// PartReasoning ("" when the provider hides it), and what the model
	// was shown of a PartToolResult.
	Text string `json:"text,omitempty"`

	// ID, Name and Arguments are a PartToolCall's call (see ToolCall);
	// Name is also a PartFile's file name.
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`

	// Structured is a PartToolResult's structured content, the JSON the
	// tool returned beside its text; the agent keeps it when it is no
	// larger than Agent.MaxToolOutput. Drivers that send only text ignore
	// it.
	Structured json.RawMessage `json:"structured,omitempty"`

	// MediaType is the type of a PartImage or PartFile ("image/png",
	// "application/pdf"); Data its content, or URL where the model
	// server fetches it.
	MediaType string `json:"media_type,omitempty"`
	Data      []byte `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`

	// Provider names the provider that wrote a PartReasoning (a
	// driver's name, as the openai driver writes "openai-compatible"); Signature
	// is the opaque state it needs back with it: a signature, an
	// encrypted payload. Neither is ever shown to a model.
	Provider  string `json:"provider,omitempty"`
	Signature string `json:"signature,omitempty"`

	// Metadata holds what providers need back with the part, keyed by
	// provider name; each value is that provider's own JSON.
	Metadata map[string]json.RawMessage `json:"metadata,omitempty"`
}

// TextPart returns a PartText that says text.
func TextPart(text string) Part { return Part{Kind: PartText, Text: text} }

// CallPart returns the PartToolCall of c.
func CallPart(c ToolCall) Part {
	return Part{Kind: PartToolCall, ID: c.ID, Name: c.Name, Arguments: c.Arguments}
}

// ToolResultPart returns a PartToolResult whose text is text.
func ToolResultPart(text string) Part { return Part{Kind: PartToolResult, Text: text} }

// ReasoningPart returns a PartReasoning written by provider, showing
// text, with the opaque signature the provider needs back.
func ReasoningPart(provider, text, signature string) Part {
	return Part{Kind: PartReasoning, Provider: provider, Text: text, Signature: signature}
}

// ImagePart returns a PartImage of the given media type.
func ImagePart(mediaType string, data []byte) Part {
	return Part{Kind: PartImage, MediaType: mediaType, Data: data}
}

// FilePart returns a PartFile named name, of the given media type.
func FilePart(name, mediaType string, data []byte) Part {
	return Part{Kind: PartFile, Name: name, MediaType: mediaType, Data: data}
}

// Parts returns the parts of a message made of text and tool calls: a
// PartText unless text is empty, then a PartToolCall per call.
func Parts(text string, calls ...ToolCall) []Part {
	n := len(calls)
	if text != "" {
		n++
	}
	if n == 0 {
		return nil
	}
	parts := make([]Part, 0, n)
	if text != "" {
		parts = append(parts, TextPart(text))
	}
	for _, c := range calls {
		parts = append(parts, CallPart(c))
	}
	return parts
}

// Call returns the call of a PartToolCall.
func (p Part) Call() ToolCall { return ToolCall{ID: p.ID, Name: p.Name, Arguments: p.Arguments} }

// SentTo reports whether a driver for provider sends p to its model: it
// sends every part but a reasoning part another provider wrote (or one
// that names no provider), which means nothing to it and may not be
// shown to it. Drivers call it on every part; the agent does not filter
// a request for them.
func (p Part) SentTo(provider string) bool {
	return p.Kind != PartReasoning || (p.Provider != "" && p.Provider == provider)
}

// MetadataFor returns what p carries for provider: its own JSON, or nil.
// A driver reads no other key.
func (p Part) MetadataFor(provider string) json.RawMessage { return p.Metadata[provider] }

// checkParts reports the first part of m its role may not hold, or that
// is not whole.
func checkParts(m *Message) error {
	results := 0
	for i := range m.Parts {
		p := &m.Parts[i]
		var ok bool
		switch p.Kind {
		case PartText:
			ok = m.Role != RoleTool
		case PartReasoning, PartToolCall:
			ok = m.Role == RoleAssistant
		case PartToolResult:
			ok = m.Role == RoleTool
			results++
		case PartImage, PartFile:
			ok = m.Role == RoleUser
			if ok && len(p.Data) == 0 && p.URL == "" {
				return fmt.Errorf("part %d: %s has neither data nor url", i, p.Kind)
			}
		default:
			return fmt.Errorf("part %d: unknown kind %q", i, p.Kind)
		}
		if !ok {
			return fmt.Errorf("part %d: a %s message cannot hold a %s part", i, m.Role, p.Kind)
		}
	}
	if results > 1 {
		return fmt.Errorf("a tool message holds %d results, want one", results)
	}
	return nil
}

package agent

import (
	"encoding/json"
	"errors"
	"fmt"

	"git.rickub.com/bots-garden/mini-me/config"
)

// Role says who wrote a [Message].
type Role string

// The roles of a conversation, as OpenAI-compatible servers name them.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one message of a conversation: who wrote it and what it says,
// as an ordered list of [Part]s. A conversation is a plain []Message that
// the host owns: it encodes to JSON and back exactly, so a host can store
// it after a run and pass it to a later Run to carry on. Conversations
// stored by releases before parts existed (a "content" string and
// "tool_calls") decode too (see UnmarshalJSON).
//
// Which parts a message may hold depends on its role: a system message
// text; a user message text, images and files; an assistant message
// reasoning, text and tool calls; a tool message the result of the call
// it answers (PartToolResult), which is exactly what the model was shown:
// the tool's output, cut if it was too long and wrapped in delimiters
// naming the server and the tool (see [DefaultSystemPrompt]). Text
// and ToolCalls read the common parts in one call.
//
// A Message is plain data, safe for concurrent reads.
//
// # Conversations are typed parts
//
// A [Message] is an ordered list of [Part]s: text, the model's reasoning,
// tool calls, a call's result, a user's image or file. The reasoning a
// model shows, and the opaque state its provider needs back (a signature,
// an encrypted payload, in Part.Signature and Part.Metadata under the
// provider's name), stay in the conversation, so that a multi-turn run,
// a stored conversation or a resumed [State] gives each provider back
// exactly what it sent; a driver sends reasoning only to the provider that
// wrote it (Part.SentTo). The openai driver gives a server's reasoning back in the
// member it came in (reasoning_content or reasoning). A conversation
// encodes to JSON and back exactly, and those stored before parts
// existed decode too.
//
// # Data stays where the user put it
//
// A server configured with egress: local (config.EgressLocal) is local-only:
// its tools are offered only to a model on this machine (see
// [Capabilities].Local; the openai driver looks at the endpoint's address), and its earlier output
// in a conversation is withheld from any other model. Each tool of the
// ToolSource carries its server's setting (toolset.Tool.Egress); a
// warning says what was withheld and why.
//
// The rule travels with the conversation: every message holding such
// content is labelled when it is made (Message.Egress), and so is every
// message a local model's run adds after the conversation holds some (a
// reply may quote it). A labelled message is withheld from a hosted model
// by its own label, even in a run whose Toolset no longer lists the
// server, or in another agent the host handed Result.Messages to.
type Message struct {
	// Role says who wrote the message.
	Role Role `json:"role"`
	// Parts is what the message says, in order; an assistant message may
	// have only calls, or nothing at all.
	Parts []Part `json:"parts,omitempty"`
	// ToolCallID is set on a tool message: the ID of the call it answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Name is set on a tool message: the tool's name as the model knows it.
	Name string `json:"name,omitempty"`
	// Server is set on a tool message: the MCP server that produced it, or
	// FuncServer for a local Go function, or "" when no tool ran (the call
	// was refused, invalid or unknown); and on a message made from a
	// server's prompt or resource: that server. It is never sent to the model; the
	// agent uses it to keep the output of local-only servers away from
	// models that are not on this machine.
	Server string `json:"server,omitempty"`
	// Egress is config.EgressLocal on a message that holds, or may quote,
	// content of a local-only server; empty otherwise. It is set when the
	// message is made: on a tool message of a local-only server's tool or
	// skill, on a message made from its prompt or resource
	// (Agent.PromptMessages, Agent.AttachResource), and, once a
	// conversation holds such content, on every message a run with a local
	// model adds to it (its replies, its calls' tool messages, the agent's
	// notes), since they may quote it. Never sent to the model: the agent
	// withholds a labelled message (every part of it, and the arguments of
	// a labelled reply's calls) from a model that is not on this machine,
	// whatever the Toolset of that run lists, so the label travels with a
	// conversation a host stores or hands to another agent.
	Egress config.Egress `json:"egress,omitempty"`
}

// ToolCall is one call of a tool that the model asks for.
type ToolCall struct {
	// ID identifies the call within the conversation; the tool message
	// that answers it carries the same ID.
	ID string `json:"id"`
	// Name is the tool's name as the model knows it.
	Name string `json:"name"`
	// Arguments is a JSON object, as text. In a conversation returned by
	// the agent it is always a valid JSON object: arguments the model sent
	// that were not one are replaced by "{}" (the tool message quotes
	// them), because servers reject a conversation that holds invalid
	// arguments.
	Arguments string `json:"arguments"`
}

// UserMessage returns a user message that says text.
func UserMessage(text string) Message {
	return Message{Role: RoleUser, Parts: []Part{TextPart(text)}}
}

// SystemMessage returns a system message that says text.
func SystemMessage(text string) Message {
	return Message{Role: RoleSystem, Parts: []Part{TextPart(text)}}
}

// Text returns the text of m: its text parts and the text of its tool
// result, joined in order; neither reasoning nor calls.
func (m *Message) Text() string {
	if len(m.Parts) == 1 { // the common case, without a copy
		if p := &m.Parts[0]; p.Kind == PartText || p.Kind == PartToolResult {
			return p.Text
		}
		return ""
	}
	var text []byte
	for i := range m.Parts {
		if p := &m.Parts[i]; p.Kind == PartText || p.Kind == PartToolResult {
			text = append(text, p.Text...)
		}
	}
	return string(text)
}

// Reasoning returns the reasoning text m shows, joined in order; "" when
// the model showed none.
func (m *Message) Reasoning() string {
	var text []byte
	for i := range m.Parts {
		if p := &m.Parts[i]; p.Kind == PartReasoning {
			text = append(text, p.Text...)
		}
	}
	return string(text)
}

// ToolCalls returns the calls m makes, in order, in a new slice; nil when
// it makes none.
func (m *Message) ToolCalls() []ToolCall {
	n := m.callCount()
	if n == 0 {
		return nil
	}
	calls := make([]ToolCall, 0, n)
	for i := range m.Parts {
		if p := &m.Parts[i]; p.Kind == PartToolCall {
			calls = append(calls, p.Call())
		}
	}
	return calls
}

// callCount returns the number of calls m makes.
func (m *Message) callCount() int {
	n := 0
	for i := range m.Parts {
		if m.Parts[i].Kind == PartToolCall {
			n++
		}
	}
	return n
}

// setText replaces every part of m by one part of the kind its role has
// for text: a tool result for a tool message, text for the others.
func (m *Message) setText(text string) {
	p := TextPart(text)
	if m.Role == RoleTool {
		p = ToolResultPart(text)
	}
	m.Parts = []Part{p}
}

// appendText adds text to the last text part of m, in place, or as a new
// text part; m's parts must not be shared.
func (m *Message) appendText(text string) {
	for i := len(m.Parts) - 1; i >= 0; i-- {
		if p := &m.Parts[i]; p.Kind == PartText || p.Kind == PartToolResult {
			p.Text += text
			return
		}
	}
	m.Parts = append(m.Parts, TextPart(text))
}

// legacyMessage is the form of a Message before parts: what releases
// before them stored.
type legacyMessage struct {
	Content   *string    `json:"content"`
	ToolCalls []ToolCall `json:"tool_calls"`
}

// UnmarshalJSON decodes a message in either form: with "parts", as
// MarshalJSON writes it, or as releases before parts stored it, with a
// "content" string (a tool message's becomes its PartToolResult, any
// other's a PartText) and "tool_calls" (each a PartToolCall, after the
// text). A message with both forms is an error.
func (m *Message) UnmarshalJSON(data []byte) error {
	type plain Message // without the method
	var v struct {
		plain
		legacyMessage
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*m = Message(v.plain)
	old := v.legacyMessage
	if old.Content == nil && old.ToolCalls == nil {
		return nil
	}
	if m.Parts != nil {
		return errors.New("agent: a message has both parts and content or tool_calls")
	}
	if old.Content != nil && (*old.Content != "" || m.Role != RoleAssistant) {
		m.setText(*old.Content)
	}
	for _, c := range old.ToolCalls {
		m.Parts = append(m.Parts, CallPart(c))
	}
	return nil
}

// checkConversation reports the first problem that would make a model
// server reject msgs, or make the agent unable to continue it.
func checkConversation(msgs []Message) error {
	if len(msgs) == 0 {
		return errors.New("agent: empty conversation")
	}
	pending := map[string]bool{} // tool calls still waiting for their result
	for i := range msgs {
		m := &msgs[i]
		if m.Role != RoleTool && len(pending) > 0 {
			return fmt.Errorf("agent: message %d: a %s message follows tool calls that have no result", i, m.Role)
		}
		switch m.Role {
		case RoleSystem, RoleUser:
		case RoleAssistant:
			for j, c := range m.ToolCalls() {
				if c.ID == "" || c.Name == "" {
					return fmt.Errorf("agent: message %d: tool call %d has no id or no name", i, j)
				}
				pending[c.ID] = true
			}
		case RoleTool:
			if !pending[m.ToolCallID] {
				return fmt.Errorf("agent: message %d: tool message answers no earlier tool call (id %q)", i, m.ToolCallID)
			}
			delete(pending, m.ToolCallID)
		default:
			return fmt.Errorf("agent: message %d: unknown role %q", i, m.Role)
		}
		if err := checkParts(m); err != nil {
			return fmt.Errorf("agent: message %d: %w", i, err)
		}
	}
	if len(pending) > 0 {
		return errors.New("agent: the conversation ends with tool calls that have no result")
	}
	return nil
}

package agent

import (
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

// Message is one message of a conversation. A conversation is a plain
// []Message that the host owns: it encodes to JSON and back without loss,
// so a host can store it after a run and pass it to a later Run to carry
// on.
//
// Content of a tool message is exactly what the model was shown: the tool's
// output, cut if it was too long and wrapped in delimiters naming the
// server and the tool (see the package documentation).
//
// A Message is plain data, safe for concurrent reads.
type Message struct {
	// Role says who wrote the message.
	Role Role `json:"role"`
	// Content is the text of the message; an assistant message that only
	// calls tools may have none.
	Content string `json:"content,omitempty"`
	// ToolCalls are the calls an assistant message asks for, in the
	// model's order.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
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
	// withholds a labelled message (and the arguments of a labelled
	// reply's calls) from a model that is not on this machine, whatever
	// the Toolset of that run lists, so the label travels with a
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

// checkConversation reports the first problem that would make a model
// server reject msgs, or make the agent unable to continue it.
func checkConversation(msgs []Message) error {
	if len(msgs) == 0 {
		return errors.New("agent: empty conversation")
	}
	pending := map[string]bool{} // tool calls still waiting for their result
	for i, m := range msgs {
		if m.Role != RoleTool && len(pending) > 0 {
			return fmt.Errorf("agent: message %d: a %s message follows tool calls that have no result", i, m.Role)
		}
		switch m.Role {
		case RoleSystem, RoleUser:
		case RoleAssistant:
			for j, c := range m.ToolCalls {
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
	}
	if len(pending) > 0 {
		return errors.New("agent: the conversation ends with tool calls that have no result")
	}
	return nil
}

package agent

import (
	"context"
	"encoding/json"
)

// Model is a chat model that can call tools: one request in, one assistant
// turn out. It is the back end the [Agent] drives; [OpenAI] implements it
// for OpenAI-compatible servers, and a host can implement it for anything
// else.
//
// Chat sends req to the model and returns the assistant's turn. If onDelta
// is not nil, Chat calls it with each piece of the answer as it arrives,
// from the goroutine that called Chat, in order, and never after Chat
// returns; the pieces of text, joined, are the reply's Message.Text, and
// those of reasoning its Message.Reasoning. A Model that cannot stream
// calls onDelta once with the whole text, or not at all.
//
// A nil error means the returned Reply is the whole turn: its Message has
// RoleAssistant, and each of its ToolCalls a non-empty ID, unique in the
// reply, and a Name. Its parts are reasoning, text and calls only, each
// reasoning part naming the provider that wrote it (Part.Provider), with
// what that provider needs back (Part.Signature, Part.Metadata under its
// own key). Arguments may be anything the model produced,
// including invalid JSON: the agent checks them. A turn cut short (finish
// reason length) is not an error. A non-nil error means no turn was
// obtained, and the Reply is nil; a turn that failed half-way is an error,
// even if text was already delivered to onDelta.
//
// The request holds every part of the conversation, whoever wrote it: a
// Model sends its server only the parts for which Part.SentTo(its provider
// name) is true, and reads only its own key of Part.Metadata, so that the
// reasoning and metadata of another provider never reach it; it sends what
// its server cannot take (an image to a text-only model) as the server
// requires, or fails the request with an error that says so.
//
// Chat must not modify req nor keep it, or anything it refers to, after
// returning; nor modify or keep the Reply it returns, which is the
// caller's. It must return promptly once ctx is done, with an error that
// wraps ctx.Err(), and leave no goroutine behind.
//
// Chat may be called from several goroutines at once (one per running
// [Agent.Run]), so implementations must be safe for concurrent use.
type Model interface {
	// Chat sends req and returns the model's reply, passing the text to
	// onDelta as it streams.
	Chat(ctx context.Context, req *ChatRequest, onDelta func(Delta)) (*Reply, error)
}

// LocalModel is implemented by a [Model] that knows whether it runs on this
// machine. The agent offers the tools of local-only servers
// (config.EgressLocal) only to a model whose Local method returns true; a
// Model that does not implement LocalModel is taken to be remote.
type LocalModel interface {
	Model
	// Local reports whether every request reaches a server on this machine:
	// through a loopback address or a unix socket.
	Local() bool
}

// ChatRequest is what a [Model] is given for one turn.
type ChatRequest struct {
	// Messages is the conversation so far, starting with the system
	// prompt.
	Messages []Message
	// Tools are the tools the model may call; none means the model must
	// answer in text.
	Tools []ToolDef
	// ToolChoice says whether the model must, may or must not call one
	// of Tools; "" leaves it to the server (which means auto). It is not
	// sent when Tools is empty.
	ToolChoice ToolChoice
	// MaxTokens, when > 0, bounds the tokens of the reply, below any
	// bound the Model has of its own ([OpenAI] sends the smaller). A
	// Model that cannot bound a reply should fail the request rather than
	// ignore it: the agent sets it for MCP sampling, whose limit is a
	// must (see Sampler).
	MaxTokens int
	// Schema, if set, asks for a reply whose text is JSON it accepts (see
	// SchemaModel); the agent sets it only without Tools, and only for a
	// SchemaModel that says it sends it.
	Schema *ResponseSchema
}

// ToolChoice says whether the model must call a tool: one of the constants
// below, or the name of the one tool it must call.
//
// Servers differ. OpenAI and vLLM honour every choice. llama-server
// honours auto, none and required, but ignores a named tool (it answers as
// with auto, and logs a warning); with required, its grammar makes the
// reply end with a call but lets text come before it. Ollama ignores the
// field.
type ToolChoice string

// Tool choices that are not a tool's name. A tool named like one of them
// cannot be chosen by name.
const (
	// ToolChoiceAuto lets the model answer or call tools as it sees fit.
	ToolChoiceAuto ToolChoice = "auto"
	// ToolChoiceNone asks for an answer in text, tools still described.
	ToolChoiceNone ToolChoice = "none"
	// ToolChoiceRequired asks for at least one tool call.
	ToolChoiceRequired ToolChoice = "required"
)

// named reports whether c names a tool.
func (c ToolChoice) named() bool {
	return c != "" && c != ToolChoiceAuto && c != ToolChoiceNone && c != ToolChoiceRequired
}

// ToolDef describes a tool to the model.
type ToolDef struct {
	// Name is the name the model calls the tool by.
	Name string
	// Description says what the tool does.
	Description string
	// Parameters is the JSON Schema of the arguments, an object schema.
	Parameters json.RawMessage
}

// Delta is a piece of an assistant turn, delivered while it streams.
type Delta struct {
	// Text is a piece of the answer.
	Text string
	// Reasoning is a piece of the model's reasoning, for models and
	// servers that report it apart from the answer; the reply keeps it
	// whole in a PartReasoning.
	Reasoning string
}

// Reply is a whole assistant turn.
type Reply struct {
	// Message is the assistant's message: its reasoning, text and tool
	// calls.
	Message Message
	// Finish says why the model stopped.
	Finish FinishReason
	// Usage counts the tokens of the turn, when the server reports them.
	Usage Usage
}

// FinishReason says why a model stopped producing a turn. Servers may send
// values other than the constants below; they are kept as sent.
type FinishReason string

// Finish reasons of OpenAI-compatible servers.
const (
	FinishStop          FinishReason = "stop"
	FinishLength        FinishReason = "length"
	FinishToolCalls     FinishReason = "tool_calls"
	FinishContentFilter FinishReason = "content_filter"
)

// Usage counts tokens, as reported by the model server; zero when the
// server reports nothing. Drivers report every count in the same terms,
// whatever their server's: PromptTokens counts the whole request, cache
// reads and writes included, and CompletionTokens the whole answer,
// reasoning included.
type Usage struct {
	// PromptTokens is the size of the request, in tokens.
	PromptTokens int `json:"prompt_tokens"`
	// CompletionTokens is the size of the model's answer, in tokens.
	CompletionTokens int `json:"completion_tokens"`
	// TotalTokens is the total the server reported, usually the sum.
	TotalTokens int `json:"total_tokens"`
	// CacheReadTokens are the tokens of the request read from the
	// server's prompt cache, and CacheWriteTokens those written to it:
	// both part of PromptTokens.
	CacheReadTokens  int `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
	// ReasoningTokens are the tokens of the model's reasoning, part of
	// CompletionTokens.
	ReasoningTokens int `json:"reasoning_tokens,omitempty"`
}

func (u *Usage) add(v Usage) {
	u.PromptTokens += v.PromptTokens
	u.CompletionTokens += v.CompletionTokens
	u.TotalTokens += v.TotalTokens
	u.CacheReadTokens += v.CacheReadTokens
	u.CacheWriteTokens += v.CacheWriteTokens
	u.ReasoningTokens += v.ReasoningTokens
}

// Prices are what a model's tokens cost, per million tokens, in the
// host's currency. The SDK holds no price list, which would go stale: the
// host supplies the prices it pays.
type Prices struct {
	// Input is the price of a request's tokens that the cache neither
	// served nor stored; Output of the answer's, reasoning included.
	Input, Output float64
	// CacheRead is the price of a request's tokens read from the cache,
	// CacheWrite of those written to it.
	CacheRead, CacheWrite float64
}

// Cost returns what u costs at prices p.
func (u Usage) Cost(p Prices) float64 {
	plain := u.PromptTokens - u.CacheReadTokens - u.CacheWriteTokens
	return (float64(plain)*p.Input + float64(u.CacheReadTokens)*p.CacheRead +
		float64(u.CacheWriteTokens)*p.CacheWrite + float64(u.CompletionTokens)*p.Output) / 1e6
}

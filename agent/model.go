package agent

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Model is a chat model that can call tools: one request in, one assistant
// turn out. It is the back end the [Agent] drives, and the whole of what
// the agent knows of a model: a driver (package agent/openai for
// OpenAI-compatible servers) or a host implements it, and wrappers such as
// [Fallback] and [Retry] are Models themselves. The agent never names a
// driver.
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
// including invalid JSON: the agent checks them. Its Finish says why the
// model stopped, its Usage counts what the server reported (zero when it
// reports nothing), and its Model names the model that answered when the
// Model knows it. A turn cut short (finish reason length) is not an
// error. A non-nil error means no turn was
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
// A failure the model's provider reports is a [*ModelError] whose Kind
// says what it was, so that a caller branches with errors.Is on
// [ErrContextExceeded], [ErrRateLimited], [ErrOverloaded], [ErrRefused],
// [ErrUnreachable], [ErrBadRequest], [ErrAuth] or [ErrServer], and reads
// RetryAfter, StatusCode and the context figures with errors.As. The agent
// reacts to ErrContextExceeded (it shortens tool outputs and asks again)
// and to ErrBadRequest for a request with a Schema (it asks through
// AnswerTool instead); Fallback and Retry act on the kinds that may pass.
// An error that is no ModelError (a driver's configuration, say) is final.
//
// What a Model can do beyond Chat it says through [CapableModel], and what
// it is through [DescribedModel]; the agent discovers nothing else.
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

// The kinds of model failure. A [*ModelError] matches its Kind with
// errors.Is, and every error a [Model] returns for a failure of its
// provider or of the way there matches one of them (an error joining several, as a Fallback's
// whose every model failed, matches each of theirs). An error that matches
// none is a failure the model could not classify, such as a request the
// driver cannot make because its configuration is incomplete: the agent
// and the wrappers treat it as final. Drivers produce the kinds; the agent
// and the wrappers act on them and on nothing else of a driver.
var (
	// ErrContextExceeded is a request longer than the model's context.
	// The agent shortens the oldest tool outputs and sends the request
	// once more (see [Agent.ContextBudget]); ModelError.PromptTokens and
	// ContextSize, when the driver knows them, say by how much to shorten.
	ErrContextExceeded = errors.New("agent: the request exceeds the model's context")
	// ErrRateLimited is a request refused for now because too many were
	// sent: sending it again after ModelError.RetryAfter may succeed.
	ErrRateLimited = errors.New("agent: the model is rate limited")
	// ErrOverloaded is a model that cannot take the request now (HTTP
	// 503, 529): sending it again later, or to another model, may succeed.
	ErrOverloaded = errors.New("agent: the model is overloaded")
	// ErrRefused is a request the provider refused to answer for its
	// content (a content filter, a policy): sending it again, or to
	// another model, is not what the host asked for. A turn the model
	// ended with FinishContentFilter is a Reply, not this error.
	ErrRefused = errors.New("agent: the model refused the request")
	// ErrUnreachable is a request that got no answer: the connection was
	// refused, the name did not resolve, the connection broke before an
	// answer came.
	ErrUnreachable = errors.New("agent: the model is unreachable")
	// ErrBadRequest is a request the provider refused as malformed or
	// unsupported (HTTP 400, 404, 422...): it fails the same way if sent
	// again.
	ErrBadRequest = errors.New("agent: the model rejected the request")
	// ErrAuth is a request whose credentials are missing or refused (HTTP
	// 401, 403).
	ErrAuth = errors.New("agent: the model refused the credentials")
	// ErrServer is a server that failed (HTTP 500 and other 5xx) or
	// answered with something that is not a turn (a malformed body, a
	// stream cut before the turn ended): sending it again may succeed.
	ErrServer = errors.New("agent: the model server failed")
)

// ModelError is a failure of a model call, classified. It matches its Kind
// with errors.Is, and unwraps to the driver's own error, Err, which a
// caller that knows the driver may inspect with errors.As (for the
// OpenAI-compatible driver, an *openai.APIError).
type ModelError struct {
	// Kind is one of ErrContextExceeded, ErrRateLimited, ErrOverloaded,
	// ErrRefused, ErrUnreachable, ErrBadRequest, ErrAuth or ErrServer.
	Kind error
	// StatusCode is the status of the provider's answer (HTTP status);
	// 0 when no answer came or the protocol has none.
	StatusCode int
	// RetryAfter is the wait the provider asked for before another
	// request (an HTTP Retry-After header); 0 when it asked for none.
	RetryAfter time.Duration
	// PromptTokens and ContextSize are, for ErrContextExceeded, the
	// request's size and the context's, in tokens, when the provider
	// says; 0 otherwise.
	PromptTokens, ContextSize int
	// Err is the driver's error, which says what happened; nil leaves
	// Kind to say it.
	Err error
}

// Error returns Err's text, which names the endpoint and the status, or
// Kind's when Err is nil.
func (e *ModelError) Error() string {
	switch {
	case e.Err != nil:
		return e.Err.Error()
	case e.Kind != nil:
		return e.Kind.Error()
	}
	return "agent: model call failed"
}

// Unwrap returns Kind and Err.
func (e *ModelError) Unwrap() []error { return []error{e.Kind, e.Err} }

// CapableModel is a [Model] that says what it can do. A Model that does not
// implement it claims nothing: the zero [Capabilities].
type CapableModel interface {
	Model
	// Capabilities says what the model can do. It is called when a run
	// starts and at other moments the agent needs to know, so it must be
	// cheap; it must be safe for concurrent use.
	Capabilities() Capabilities
}

// Capabilities says what a [Model] can do, for the agent and for a host
// that chooses how to use a model. The zero value claims nothing, which
// is always safe: a capability not claimed is not relied on.
type Capabilities struct {
	// Local says every request reaches a server on this machine, through
	// a loopback address or a unix socket. The agent offers the tools of
	// local-only servers (config.EgressLocal) only to a local model.
	Local bool
	// Streaming says Chat delivers the answer to onDelta in pieces as
	// they arrive, not once whole.
	Streaming bool
	// Schema says ChatRequest.Schema is sent, so that the reply's text is
	// JSON the schema accepts as far as the provider enforces it (the
	// agent still validates it). A model without it gets typed answers
	// asked for through AnswerTool.
	Schema bool
	// NamedToolChoice says a ToolChoice naming a tool is sent; see
	// ToolChoice for the servers that ignore it anyway.
	NamedToolChoice bool
	// ParallelToolCalls says a turn may hold several tool calls.
	ParallelToolCalls bool
	// Reasoning says the model may report its reasoning (Delta.Reasoning).
	Reasoning bool
	// Caching says the provider caches the prompt's prefix between
	// requests.
	Caching bool
	// ContextWindow is the model's context, in tokens; 0 when unknown.
	ContextWindow int
}

// CapabilitiesOf returns what m says it can do: its Capabilities if it is a
// [CapableModel], else the zero value.
func CapabilitiesOf(m Model) Capabilities {
	if c, ok := m.(CapableModel); ok {
		return c.Capabilities()
	}
	return Capabilities{}
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
	// bound the Model has of its own (the openai driver sends the smaller). A
	// Model that cannot bound a reply should fail the request rather than
	// ignore it: the agent sets it for MCP sampling, whose limit is a
	// must (see Sampler).
	MaxTokens int
	// Schema, if set, asks for a reply whose text is JSON it accepts (see
	// Capabilities.Schema); the agent sets it only without Tools, and only
	// for a model that claims Capabilities.Schema.
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
	// Model names the model that produced the turn, as the model's
	// provider knows it ("" when the Model does not say): a driver sets
	// it, and a wrapper such as Fallback keeps the name of the model that
	// answered. The agent reports it in TurnFinished.Model.
	Model string
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

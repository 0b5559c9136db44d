package permission

import (
	"context"
	"errors"
)

// SamplingTool is the Tool of a sampling question (Request.Sampling). A
// server may still name a tool so: the Policy tells the two apart by
// Request.Sampling, never by this name.
const SamplingTool = "sampling/createMessage"

// Sampling describes a server's request for a completion by the host's
// model (MCP sampling), as the user is asked about it: the server wants to
// send Messages, under SystemPrompt, to Model, for at most MaxTokens
// tokens. Every string comes from the server and is untrusted text.
//
// A [Policy] settles a sampling question as a tool call's, with these
// differences: the server's sampling mode decides, not its tools' mode
// ([WithSamplingMode], [WithServerSamplingMode]; [ModeAsk] unless set, so
// a server whose tools run without asking still has its sampling asked);
// an AllowTool or AllowServer answer allows the server's later sampling
// requests for the session (and none of its tools); an AllowServer given
// for its tools does not allow its sampling; and what the Policy
// remembers for the server's sampling is kept apart from its tools, a
// tool named SamplingTool included.
type Sampling struct {
	// SystemPrompt is the system prompt the server asks for, if any.
	SystemPrompt string `json:"system_prompt,omitempty"`
	// Messages are the conversation to complete, rendered as text (an
	// image or a tool result is named, not shown).
	Messages []SamplingMessage `json:"messages"`
	// MaxTokens is the most tokens the completion may have, after the
	// host's cap.
	MaxTokens int `json:"max_tokens"`
	// InputBytes is the size of what the request sends to the model (its
	// system prompt, messages and tools), and InputTokens an estimate of
	// its tokens: with MaxTokens, what the request costs. Zero when the
	// asker did not measure it.
	InputBytes  int `json:"input_bytes,omitempty"`
	InputTokens int `json:"input_tokens,omitempty"`
	// Tools name the server's tools offered to the model in this request.
	Tools []string `json:"tools,omitempty"`
	// Model is the model that would answer.
	Model string `json:"model,omitempty"`
	// Completion is set when the answer is reviewed (Policy.ReviewSampling):
	// the model's text, about to go back to the server.
	Completion string `json:"completion,omitempty"`
}

// SamplingMessage is one message of a sampling request: its role ("user"
// or "assistant") and its content as text.
type SamplingMessage struct {
	Role string `json:"role"`
	Text string `json:"text"`
}

// ReviewSampling shows the completion of an allowed sampling request
// (req.Sampling.Completion set) to the Approver before it goes back to
// the server, as the MCP specification recommends. The Decision allows
// sending it, possibly edited (Decision.Edited.Completion); a denial, an
// Approver error, a timeout or a done ctx withhold it (fail closed). It
// remembers nothing, and reports one audit Event.
func (p *Policy) ReviewSampling(ctx context.Context, req Request) (Decision, error) {
	if req.Sampling == nil {
		return Decision{Verdict: Deny, Reason: "not a sampling request"}, errors.New("permission: ReviewSampling of a request without Sampling")
	}
	req.Tool = SamplingTool
	d, src, err := p.consult(ctx, req)
	p.report(&req, p.modeFor(&req), src, d, err)
	return d, err
}

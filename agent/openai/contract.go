package openai

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"git.rickub.com/bots-garden/mini-me/agent"
)

// A Model is the contract's every side.
var (
	_ agent.CapableModel   = (*Model)(nil)
	_ agent.DescribedModel = (*Model)(nil)
)

// Chat implements [agent.Model]: it sends one chat completions request and
// returns the turn, streamed unless NoStream is set. Its errors are those
// of the contract: an [*agent.ModelError] whose Kind says what failed and
// whose Err is an [*APIError] (an error answer) or an [*EndpointError]
// (no answer, or one not understood); an error matching [ErrRequest] for
// a request that cannot be made; or one wrapping ctx.Err().
func (m *Model) Chat(ctx context.Context, req *agent.ChatRequest, onDelta func(agent.Delta)) (*agent.Reply, error) {
	reply, err := m.chat(ctx, req, onDelta)
	if err != nil {
		return nil, classify(err)
	}
	reply.Model = m.Model
	return reply, nil
}

// classify wraps a driver error in the contract's ModelError.
func classify(err error) error {
	var api *APIError
	var ee *EndpointError
	switch {
	case errors.As(err, &api):
		return &agent.ModelError{Kind: api.kind(), StatusCode: api.StatusCode, RetryAfter: api.RetryAfter,
			PromptTokens: api.PromptTokens, ContextSize: api.ContextSize, Err: err}
	case errors.As(err, &ee):
		kind := agent.ErrServer
		if errors.Is(ee.Kind, agent.ErrUnreachable) {
			kind = agent.ErrUnreachable
		}
		return &agent.ModelError{Kind: kind, StatusCode: ee.StatusCode, Err: err}
	}
	return err
}

// kind classifies an error answer.
func (e *APIError) kind() error {
	switch {
	case e.Type == "exceed_context_size_error" || e.Code == "context_length_exceeded":
		return agent.ErrContextExceeded
	case e.Code == "content_filter" || e.Code == "content_policy_violation":
		return agent.ErrRefused
	case e.StatusCode == http.StatusTooManyRequests:
		return agent.ErrRateLimited
	case e.StatusCode == http.StatusServiceUnavailable || e.StatusCode == 529:
		return agent.ErrOverloaded
	case e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden:
		return agent.ErrAuth
	case e.StatusCode == http.StatusRequestTimeout || e.StatusCode >= 500 || e.StatusCode < 400:
		// A status below 400 is an error object sent inside a stream.
		return agent.ErrServer
	}
	return agent.ErrBadRequest
}

// ModelInfo describes the model for the trace hooks: Model as its name,
// "openai" as its provider, and BaseURL's host and port as its server. It
// implements [agent.DescribedModel].
func (m *Model) ModelInfo() agent.ModelInfo {
	info := agent.ModelInfo{Name: m.Model, Provider: "openai"}
	if u, err := url.Parse(m.BaseURL); err == nil {
		info.Address = u.Hostname()
		info.Port, _ = strconv.Atoi(u.Port())
		if info.Port == 0 {
			info.Port = map[string]int{"http": 80, "https": 443}[u.Scheme]
		}
	}
	return info
}

// Capabilities says what the model can do, as far as the chat completions
// API lets a client know: Local (see [Model.Local]), Streaming unless
// NoStream is set, Schema unless NoResponseFormat is set, NamedToolChoice,
// ParallelToolCalls and Reasoning (the API has them; a server may ignore
// them, see agent.ToolChoice), and ContextWindow. It implements
// [agent.CapableModel].
func (m *Model) Capabilities() agent.Capabilities {
	return agent.Capabilities{
		Local:             m.Local(),
		Streaming:         !m.NoStream,
		Schema:            !m.NoResponseFormat,
		NamedToolChoice:   true,
		ParallelToolCalls: true,
		Reasoning:         true,
		ContextWindow:     m.ContextWindow,
	}
}

// Package openai is the [agent.Model] of OpenAI-compatible chat
// completions endpoints: OpenAI itself and the servers that copy its API
// (Ollama, llama.cpp's llama-server, vLLM, Docker Model Runner, LM
// Studio), over plain net/http and Server-Sent Events, with no dependency
// beyond the SDK's own. It is the embedded default: it needs nothing but
// a model server, local or remote.
//
//	a := &agent.Agent{
//		Model: &openai.Model{BaseURL: "http://localhost:11434/v1", Model: "qwen3:4b"},
//		Tools: ts,
//	}
//
// Its errors are the contract's (see [agent.Model]): an [*agent.ModelError]
// whose Kind says what failed, wrapping an [*APIError] for an error answer
// or an [*EndpointError] for no answer or one not understood.
package openai

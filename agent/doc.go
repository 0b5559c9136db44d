// Package agent runs a conversation with a model that calls tools: MCP
// tools gathered by a toolset.Toolset, and local Go functions. The host gives
// it a model endpoint, the tools and a conversation, and gets back the
// answer, while it sees and controls every step.
//
// An [Agent] holds the model, the tools and the permission policy, and
// [Agent.Run] runs a conversation to its answer ([Agent.RunStream] reports
// each step as it happens):
//
//	a := &agent.Agent{
//		Model:  &openai.Model{BaseURL: "http://localhost:11434/v1", Model: "qwen3:4b"},
//		Tools:  tools, // a *toolset.Toolset, from toolset.Discover
//		Policy: agent.PolicyFromConfig(cfg, permission.NewTerminal(os.Stdin, os.Stdout)),
//	}
//	res, err := a.Run(ctx, []agent.Message{agent.UserMessage("What changed today?")})
//
// # The pieces
//
// [Model] is the one-method interface to a chat model: messages and tool
// definitions in, one streamed assistant turn out, and every failure the
// agent reacts to typed ([ModelError]). Package agent/openai implements it
// over net/http for OpenAI-compatible chat completions endpoints, which is
// what Docker Model Runner, Ollama, llama.cpp's llama-server, vLLM, LM
// Studio and the hosted services speak. [Fallback] and [Retry] wrap
// Models into Models.
//
// [Agent] holds the model, the tools ([ToolSource], which *toolset.Toolset
// implements, and [Func] for Go functions), the permission policy ([permission.Checker],
// which *permission.Policy implements) and the limits. [Agent.Run] runs a
// conversation to its answer; [Agent.RunStream] does the same and reports
// every step as an [Event]: text as it streams, each tool call proposed,
// the approval asked and decided, the call started and its result, each
// turn finished with its token usage, and warnings. [RunTyped] runs a
// conversation to an answer of a Go type, asked for with its JSON Schema.
//
// A conversation is a []Message that the host owns. It encodes to JSON and
// back, and the [Result] of a run always holds a consistent conversation
// (every tool call answered), whether the run ended with an answer, a
// limit, an error or a cancellation, so the host can store it and carry on
// later.
//
// # Where the details are
//
//   - the loop (lookup, validation, repeats, approval, parallel calls) and
//     cancellation: [Agent.Run];
//   - the safety limits, on by default: [Agent];
//   - approvals that wait, and resuming: [State], [Agent.Resume];
//   - tool output as data, in delimiters: [DefaultSystemPrompt];
//   - small local models (schema projection, argument repair): [ToolSource];
//   - typed parts, and data that stays local (egress): [Message];
//   - MCP Apps: [ToolView], [Inbox]; tracing: [Trace].
package agent

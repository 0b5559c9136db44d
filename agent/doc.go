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
// # The loop
//
// Each turn, the agent sends the conversation and the tool definitions to
// the model. If the model answers in text, the run is over. If it asks for
// tools, each call is, in the model's order:
//
//  1. looked up: an unknown tool name gets the list of known ones back;
//  2. validated against the tool's input schema (with
//     github.com/google/jsonschema-go), after dropping the null values
//     small models send for optional fields; invalid arguments get the
//     validation error back, and the tool is not called;
//  3. checked against the calls of the previous turn: the same call with
//     the same arguments is not run again, the model is told so, and if
//     it insists the run stops;
//  4. put to the permission policy, which may ask the host; a refusal
//     reaches the model as the call's result.
//
// The approved calls then run concurrently (Agent.MaxParallel), and their
// results go back to the model in its order. A tool that reports an error
// (isError) is an ordinary result the model reads; so are refusals and
// validation errors. None of them fails the run.
//
// # Approvals that wait
//
// A host whose user cannot answer now (a web page, a chat bot) has its
// Approver return permission.ErrDeferred. The other calls of the turn are
// settled as usual, and the approved ones run; then the run stops with
// StopPendingApproval and [ErrPendingApproval], and Result.Pending holds
// a [State]: the conversation, the calls waiting (each with its ID and
// the request the Approver was asked) and the limits used. It is plain
// JSON with no credential in it. Later, in the same process or another,
// [Agent.Resume] takes it back with one decision per pending call: the
// approved calls run, once, the denied ones are told so, and the run goes
// on. Resume checks the State, which is untrusted input, before anything
// runs (see [ResumeError]); resuming a State twice is the host's to
// prevent (State.ID).
//
// # MCP Apps
//
// A tool whose MCP Apps visibility (package mcp/apps) lacks "model" is
// never offered to the model, nor found by tool search: it is there for
// its server's views, which call it through an apps.Bridge. A call of a
// tool that has a view is followed, right after its ToolStarted, by a
// [ToolView] event naming the view's ui:// resource, so that the host can
// start the view while the tool runs, and give it the call's result from
// the ToolFinished. What the view sends back comes into the run through an
// [Inbox] attached to its context ([WithInbox]): its messages, and its
// latest context for the model, at the next model call.
//
// # Safety limits, on by default
//
//   - Agent.MaxTurns bounds the model calls of a run (default 10); the
//     overall deadline is the ctx given to Run.
//   - A repeated call, or a loop of two or three turns making the same
//     calls again, is refused once, then stops the run. Only a call that
//     returned a result counts: a failed call may be retried.
//   - Whatever stops a run, Result keeps the conversation so far and says
//     why in Result.Stop; Agent.FinalAnswer asks the model, without tools,
//     for a last answer.
//   - A tool's output above Agent.MaxToolOutput (default 16 KiB) is cut:
//     its head and tail are kept, with a marker saying how many bytes were
//     cut; the host gets the whole output in the ToolFinished event.
//   - Before each model call, the conversation's estimated size is held
//     under Agent.ContextBudget (default 16,384 tokens) by cutting the
//     oldest tool outputs first. When the server still finds the request
//     longer than the model's context ([ErrContextExceeded]), the budget
//     is lowered from the server's figures for the rest of the run and the
//     request sent once more; if nothing is left to shorten, or it is
//     still too long, the run stops with that error.
//   - A reply cut at the output limit (finish reason length) in the
//     middle of a tool call does not run it: the model is told that its
//     reply was cut and to call again with shorter arguments, and the host
//     gets a WarnTruncatedAnswer warning.
//
// # Tool output is data
//
// What a tool returns travels only in tool messages, wrapped in
// delimiters that name the server and the tool:
//
//	<tool_output server="github" tool="search_code">
//	...
//	</tool_output>
//
// Anything in the output that looks like those delimiters is defused (its
// '<' becomes '['), so an output cannot close its frame early; in the
// attribute values (a server's tool name, a resource URI) '&', '<' and '>'
// are written as &amp;, &lt; and &gt;, and quotes, control and bidi
// characters are escaped, so a name cannot close the frame either. The default
// system prompt ([DefaultSystemPrompt]) tells the model that such content
// is data, not instructions; nothing from a tool is ever put in the system
// prompt.
//
// # Small local models
//
// Local servers turn tool schemas into grammars or prompt templates, and
// reject or ignore much of JSON Schema. So the schema shown to the model is
// a conservative projection of the tool's input schema, while arguments
// are still validated against the tool's own schema (types corrected):
//
//   - types that are not JSON Schema types are mapped (float, double →
//     number; int, long → integer; bool → boolean; str → string; any
//     case, stray spaces) or dropped, with a warning: llama-server rejects
//     every request that carries a tool with such a type. Arguments are
//     validated against the corrected schema;
//   - local references ($ref to "#/$defs/...", "#/definitions/...", or
//     any pointer into the schema) are inlined and $defs dropped; a
//     recursive, remote or dangling reference becomes the empty schema;
//   - only type, properties, required, items, prefixItems,
//     additionalProperties, enum, const, anyOf, oneOf, allOf, minimum,
//     maximum, minItems, maxItems, minLength, maxLength, default,
//     description and the formats date, time, date-time and uuid are kept;
//     a dropped pattern or format is mentioned in the description;
//   - null is removed from types, enums and anyOf/oneOf branches, and a
//     single remaining branch is merged into its parent: arguments the
//     model sends as null for optional fields are dropped before
//     validation anyway;
//   - property order is kept, and the root is always an object schema
//     with properties: a root whose type does not allow an object is
//     replaced, for the model and for validation, by an object schema
//     with no declared properties, with a warning;
//   - parts nested deeper than 32 levels, or beyond four times the
//     schema's own size (at least 64 KiB) once references are inlined, are
//     replaced by the empty schema, with a warning.
//
// Before validation, the arguments of a call are repaired when small
// models commonly get them wrong: an object in a code fence, sent as a
// JSON string, with single quotes or trailing commas, or with null for an
// optional field. ToolFinished.Repairs says what was repaired; a repair the
// schema then rejects is not made. An invalid call is told every problem
// of its arguments at once (at most 8), so that one round trip fixes it.
//
// Local servers also differ in how they stream tool calls (in fragments,
// whole, with or without an index or an id); the openai driver reassembles all of
// these, and reads both reasoning fields in use (reasoning_content and
// reasoning). A conversation the agent returns only holds tool-call
// arguments that are JSON objects, since some servers reject any other.
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
//
// # Tracing
//
// A [Trace] attached with [WithTrace] to the context given to Run is
// called at the start and end of the run, of each model call and of each
// tool call, and with each approval; an [mcp.ClientTrace] on the same
// context sees the MCP requests beneath. The nested module agent/otel
// turns both into OpenTelemetry spans and metrics.
//
// # Cancellation
//
// Cancelling the ctx given to Run stops the model's stream and the tool
// calls in flight; Run returns promptly, with the conversation so far and
// an error matching ctx.Err(), and leaves no goroutine behind.
package agent

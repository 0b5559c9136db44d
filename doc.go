// Package minime is mini-me, an embeddable Go SDK that lets any Go program
// run a tool-calling AI agent whose tools come from MCP (Model Context
// Protocol) servers.
//
// The SDK is one pipeline of small packages, each with one job:
//
//	YAML file ─► config.Load ─► toolset.Discover ─► agent.Run ─► answer
//	                                 ▲               │
//	                                 └─ permission ◄─┘  (the host approves each call)
//
// The packages:
//
//   - [git.rickub.com/bots-garden/mini-me/config] parses and validates the
//     list of MCP servers: URL or command, auth from environment
//     variables, tool allowlist, permission mode.
//   - [git.rickub.com/bots-garden/mini-me/sse] decodes Server-Sent Events,
//     with an event size limit and an idle timeout.
//   - [git.rickub.com/bots-garden/mini-me/mcp] is a hand-written MCP client
//     for Streamable HTTP (and the deprecated HTTP+SSE transport) and
//     stdio. It speaks both the stateless 2026-07-28 revision and the
//     initialize-based 2025 revisions, detecting which one a server uses.
//   - [git.rickub.com/bots-garden/mini-me/mcp/toolset] is the host's entry
//     point to MCP: Discover connects to the servers of a configuration and
//     gathers their tools, prompts, resources and skills into one Toolset.
//   - [git.rickub.com/bots-garden/mini-me/mcp/apps] is the host side of
//     MCP Apps: tool visibility, servers' ui:// views checked and served
//     under a deny-by-default CSP, and the bridge that checks every
//     message a view sends.
//   - [git.rickub.com/bots-garden/mini-me/permission] lets the host decide
//     which tool calls run, through the one-method Approver interface.
//   - [git.rickub.com/bots-garden/mini-me/agent] runs the tool-calling loop
//     against an OpenAI-compatible chat endpoint; beside it,
//     [git.rickub.com/bots-garden/mini-me/agent/modelenv] picks the model
//     from environment variables and
//     [git.rickub.com/bots-garden/mini-me/agent/render] prints discovery and
//     a run's events on a terminal.
//
// A host program is examples/host/main.go, whole (the README shows it): it
// loads the file with config.Load, discovers the tools with
// toolset.Discover, builds an agent.Agent whose Policy follows the file's
// permissions (agent.PolicyFromConfig) and runs a conversation with Agent.Run. The
// package example (Example_pipeline) runs that pipeline against test doubles.
//
// # Examples
//
// The examples directory holds programs that run on a fresh machine with
// go run: ./examples/quickstart (two local MCP servers, discovery, one
// approved tool call), ./examples/chat (a terminal agent on the user's own
// mini-me.yaml, installable with go install), ./examples/stdio (a local
// stdio server driven by the agent) and ./examples/approver (a host with
// its own approval UI). Each folder builds when copied into another
// module. They use a model named by environment variables (agent/modelenv:
// MINIME_MODEL_URL, OPENAI_API_KEY, OLLAMA_HOST, or Docker Model Runner
// when it answers), and without one say how to start one.
package minime

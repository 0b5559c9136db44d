// Package minime is mini-me, an embeddable Go SDK that lets any Go program
// run a tool-calling AI agent whose tools come from MCP (Model Context
// Protocol) servers.
//
// The SDK is one pipeline of small packages, each with one job:
//
//	YAML file ─► config.Load ─► mcp.Discover ─► agent.Run ─► answer
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
//     initialize-based 2025 revisions, detecting which one a server uses,
//     and gathers the tools of many servers into one Toolset.
//   - [git.rickub.com/bots-garden/mini-me/permission] lets the host decide
//     which tool calls run, through the one-method Approver interface.
//   - [git.rickub.com/bots-garden/mini-me/agent] runs the tool-calling loop
//     against an OpenAI-compatible chat endpoint.
//
// A host program in short:
//
//	cfg, err := config.Load("servers.yaml")
//	if err != nil {
//		return err
//	}
//	tools, err := mcp.Discover(ctx, cfg.Servers, nil)
//	if err != nil {
//		return err
//	}
//	defer tools.Close(ctx)
//	for _, w := range tools.Warnings() {
//		fmt.Println("warning:", w)
//	}
//	res, err := tools.Call(ctx, "github_search_code", map[string]any{"q": "mini-me"})
package minime

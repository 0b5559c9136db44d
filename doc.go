// Package minime is mini-me, an embeddable Go SDK that lets any Go program
// run a tool-calling AI agent whose tools come from MCP (Model Context
// Protocol) servers.
//
// The SDK is one pipeline of small packages, each with one job:
//
//	YAML file ─► config.Load ─► mcp.Connect per server ─► permission ─► agent
//
//   - [git.rickub.com/bots-garden/mini-me/config] parses and validates the
//     list of MCP servers (URL or command, auth from environment
//     variables, tool allowlist, permission mode).
//   - [git.rickub.com/bots-garden/mini-me/sse] decodes Server-Sent Events,
//     with a size limit and an idle timeout.
//   - [git.rickub.com/bots-garden/mini-me/mcp] is a hand-written MCP client
//     for Streamable HTTP (and the deprecated HTTP+SSE transport) that
//     speaks both the stateless 2026-07-28 revision and the
//     initialize-based 2025 revisions, detecting which one a server uses.
//   - [git.rickub.com/bots-garden/mini-me/permission] lets the host decide
//     which tool calls run, through a one-method Approver interface.
//
// A short sketch of a host program:
//
//	cfg, err := config.Load("servers.yaml")
//	if err != nil { ... }
//	for _, s := range cfg.Servers {
//		c, err := mcp.Connect(ctx, &mcp.HTTPTransport{URL: s.URL}, nil)
//		if err != nil { ... }
//		tools, err := c.ListTools(ctx)
//		...
//		res, err := c.CallTool(ctx, tools[0].Name, map[string]any{"q": "go"})
//		...
//		c.Close()
//	}
package minime

// Package agenttest helps a host test code that runs an agent, as
// net/http/httptest helps test HTTP code. Its [Model] is an [agent.Model]
// that plays scripted turns in process (text, reasoning, tool calls,
// errors, delays, a turn that hangs until its context ends) and records
// what it was sent, for assertions; it needs no server and no network.
//
// To test over the real wire instead (the agent/openai driver, an
// OpenAI-compatible server's streaming and errors), use the scripted
// server of package agent/openai/openaitest. For an MCP server that
// serves the test's own tools, see package mcp/mcptest.
//
// The package depends on no test framework: [Model.Verify] returns an
// error a test reports as it likes.
package agenttest

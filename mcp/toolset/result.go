package toolset

import (
	"git.rickub.com/bots-garden/mini-me/mcp"
)

// ToolResult is the answer of a Toolset call: the server's result, whole,
// and where it came from. It is plain data, safe for concurrent reads. (The
// agent's ToolResult is the event that reports a call of a run.)
type ToolResult struct {
	// Name is the tool's name in the Toolset (empty for AwaitTask, which
	// knows only the task), Server the server that ran it.
	Name, Server string
	// Result is the result exactly as the server sent it.
	Result *mcp.CallToolResult
}

// IsError reports whether the tool reported an execution error, which the
// model should see.
func (r *ToolResult) IsError() bool { return r.Result.IsError }

// Text renders the result for a model that reads text only (see
// mcp.CallToolResult.Text).
func (r *ToolResult) Text() string { return r.Result.Text() }

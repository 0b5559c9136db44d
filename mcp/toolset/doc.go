// Package toolset is a host's catalogue of many MCP servers: it connects
// to every server of a configuration (package config) with package mcp's
// Client, and offers their tools, prompts, resources and skills as one
// catalogue an agent reads and calls.
//
// [Discover] connects to every server of a configuration at once and
// returns a [Toolset]: one catalogue of tools named "{server}_{tool}"
// ([ToolName]), calls routed back to each tool's server under its original
// name, refreshes when a server says its tools changed, and [Warning]
// values for every server skipped and every tool left out, cut, renamed
// or changed since first seen. Tool definitions are bounded as they come
// in, since every request to the model carries them: descriptions are cut
// to [MaxToolDescription], and a tool whose input schema is over
// [MaxToolSchema] is left out.
//
// Beside the tools, the Toolset gathers each server's prompts
// ([Toolset.Prompts], named like tools), resources and resource templates
// ([Toolset.Resources], [Toolset.ResourceTemplates]), each refreshed on its
// own list_changed notification. [Toolset.GetPrompt] routes a prompt by
// name; [Toolset.ReadResource] sends a URI only to the server that listed
// it or one of whose templates matches it, and refuses any other with
// [ErrUnknownResource].
package toolset

// Package interop tests the mini-me MCP client against MCP servers written
// by others: the official Go SDK's server (github.com/modelcontextprotocol/go-sdk)
// in both of its HTTP modes, and the reference TypeScript server
// @modelcontextprotocol/server-everything, run as a subprocess.
//
// It is a nested module, so that these third-party dependencies never reach
// the SDK's users, and it has no code outside its tests. Run it with run.sh
// (which calls setup.sh to install the pinned npm packages first); see the
// README-style comments at the top of both scripts.
package interop

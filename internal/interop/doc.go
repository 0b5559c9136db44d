// Package interop tests the mini-me MCP client against MCP servers written
// by others: the official Go SDK's server (github.com/modelcontextprotocol/go-sdk)
// in both of its HTTP modes, and the reference TypeScript server
// @modelcontextprotocol/server-everything, run as a subprocess; servers
// built on other and older SDK releases (go-sdk v1.2.0, v1.6.1 and v1.8.0
// narrowed to the handshake versions, mcp-go v0.44.1, the TypeScript SDK
// 1.12.1 and 1.x recent), each a small program of testdata/servers (one
// module per release, built by the test into the interop cache) or
// testdata/node/tssdk-server.cjs, tapped to count on the server's side
// what the client sent; and the
// agent's OpenAI-compatible client against llama.cpp's llama-server (the
// server of Docker Model Runner and LM Studio too), built from source by
// the shared script ../shared/llamacpp/start.sh and serving a tiny
// generated model: the wire format, its errors, and whole agent runs; and
// the OAuth client (mcp/oauth) against oidc-provider, a certified
// authorization server run as a subprocess (testdata/node/oidc.mjs), in
// front of a go-sdk server that verifies its JWT access tokens.
//
// It is a nested module, so that these third-party dependencies never reach
// the SDK's users, and it has no code outside its tests. Run it with run.sh
// (which calls setup.sh to install the pinned npm packages and builds
// llama-server first); see the README-style comments at the top of both
// scripts.
package interop

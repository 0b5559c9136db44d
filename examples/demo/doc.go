// Package demo holds the small MCP servers the examples run, so that they
// work on a fresh machine:
//
//   - [Text], text tools (count, transform, sort lines), all read-only;
//   - [Notes], a notepad kept in memory: read tools, a write tool and a
//     destructive one;
//   - [Finance], a personal-finance ledger with profiles: read tools, a
//     profile selection kept for the life of the process, and a write tool
//     that changes a transaction.
//
// A [Server] speaks the stateless 2026-07-28 revision, the
// initialize-based 2025-11-25 one, or both ([Server.Versions]), over
// Streamable HTTP ([Serve], [Server.ServeHTTP]) or stdio
// ([Server.ServeStdio]). [Discover] runs Text and Notes on 127.0.0.1 and
// returns the configuration pointing at them and their tools. Without a
// model, a [Fallback] makes the calls a model would, through the same
// permission policy.
//
// This is scaffolding for the examples, not a server SDK: enough of MCP to
// list and call tools (no prompts, resources, notifications or
// pagination), answered one request at a time. It is importable, so that
// an example copied into another module still builds and runs, but it is
// not part of the SDK's API: it may change in any release. A host of your
// own lists its servers in a configuration file instead (config.Load).
package demo

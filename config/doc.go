// Package config reads and validates the YAML file that lists the MCP
// servers a mini-me agent may use.
//
// [Load] reads a file, [Parse] a byte slice and [Decode] a reader. Each
// returns a [Config] with every default filled in, or an [*Error] listing
// every problem of the file at once, each with the file, line, column and
// path of the key concerned:
//
//	config: servers.yaml:7:15: mcp.servers[1].auth.type: unknown auth type "oath" (want bearer, apikey or oauth)
//
// Get the list with [errors.As]. The package never reads environment
// variables and never opens a connection; the functions are safe for
// concurrent use.
//
// The file format is documented on [Config] (the top level and mcp keys,
// with a complete example), [Server] (the keys of a server) and [Auth] (the
// keys of auth); the strictness rules and limits on [Parse].
package config

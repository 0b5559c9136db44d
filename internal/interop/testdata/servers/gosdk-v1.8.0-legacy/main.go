// Command gosdk-v1.8.0-legacy is the interop tests' server (package gosdk)
// built with go-sdk v1.8.0 and narrowed to the handshake versions: it knows
// server/discover, and answers it -32022 listing only those.
package main

import (
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"interop/gosdk"
)

func main() {
	gosdk.Main("gosdk-v1.8.0-legacy", &sdk.ServerOptions{
		SupportedProtocolVersions: []string{"2025-11-25", "2025-06-18", "2025-03-26"},
	})
}

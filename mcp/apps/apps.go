package apps

import (
	"encoding/json"

	"git.rickub.com/bots-garden/mini-me/mcp"
)

// Identifiers of MCP Apps.
const (
	// Extension is the extension's identifier in capabilities.
	Extension = "io.modelcontextprotocol/ui"
	// MIMEType is the media type of a view's HTML document; a resource of
	// any other type is not rendered.
	MIMEType = "text/html;profile=mcp-app"
	// ProtocolVersion is the Apps dialect spoken between host and view,
	// independent of the MCP protocol version spoken with the server.
	ProtocolVersion = "2026-01-26"
	// Scheme is the URI scheme of view resources.
	Scheme = "ui"
)

// Declare advertises MCP Apps in the client capabilities o declares, in
// both eras (see mcp.Options.Extensions): a server offers UI tools only to
// a host that declares it. Use it on toolset.Options.Client to declare
// it to every server of a Toolset.
func Declare(o *mcp.Options) {
	if o.Extensions == nil {
		o.Extensions = map[string]json.RawMessage{}
	}
	o.Extensions[Extension] = json.RawMessage(`{"mimeTypes":["` + MIMEType + `"]}`)
}

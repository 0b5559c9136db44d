package mcp

import (
	"context"
	"encoding/json"
)

// ResourceTemplate is a family of resources a server can read, named by an
// RFC 6570 URI template.
type ResourceTemplate struct {
	// URITemplate is the template, such as "file:///logs/{day}".
	URITemplate string `json:"uriTemplate"`
	// Name is the template's programmatic name.
	Name string `json:"name"`
	// Title is a human-readable name, for display.
	Title string `json:"title,omitempty"`
	// Description says what the resources are.
	Description string `json:"description,omitempty"`
	// MIMEType is the media type of every matching resource, if one.
	MIMEType string `json:"mimeType,omitempty"`
	// Annotations are the template's audience, priority and lastModified hints.
	Annotations json.RawMessage `json:"annotations,omitempty"`
	// Icons are images a client may show for the template.
	Icons []Icon `json:"icons,omitempty"`
	// Meta is the template's _meta object.
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// ListResourceTemplates lists every resource template of the server,
// following every page.
func (c *Client) ListResourceTemplates(ctx context.Context) ([]ResourceTemplate, error) {
	return listAll(ctx, c, "resources/templates/list", func(p *templatesPage) ([]ResourceTemplate, *string) {
		return p.ResourceTemplates, p.NextCursor
	})
}

type templatesPage struct {
	complete
	ResourceTemplates []ResourceTemplate `json:"resourceTemplates"`
	NextCursor        *string            `json:"nextCursor"`
}

// watchesPrompts reports a host that wants prompt list changes from a
// server that sends them.
func (c *Client) watchesPrompts(caps ServerCapabilities) bool {
	return c.opts.OnPromptsChanged != nil && caps.Prompts != nil && caps.Prompts.ListChanged
}

// listenFilter is the subscriptions/listen request that asks for the list
// changes the host watches.
func (c *Client) listenFilter(meta json.RawMessage) listenParams {
	caps := c.Capabilities()
	p := listenParams{Meta: meta}
	p.Notifications.ToolsListChanged = true
	p.Notifications.ResourcesListChanged = c.watchesResources(caps)
	p.Notifications.PromptsListChanged = c.watchesPrompts(caps)
	return p
}

package apps

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"git.rickub.com/bots-garden/mini-me/mcp"
)

// DefaultMaxHTML bounds a view's document, in bytes, when Cache.MaxHTML
// is zero.
const DefaultMaxHTML = 2 << 20

// maxCached bounds the resources one Cache keeps.
const maxCached = 64

// ErrNotApp is the error of a resource that is not a view: not exactly one
// content item of URI asked and type MIMEType, or listed with another
// type.
var ErrNotApp = errors.New("apps: not an MCP App resource")

// Server is the MCP server a view belongs to, the only one its requests
// reach. *mcp.Client implements it. Every method must be safe for
// concurrent use and honour ctx; results are read, never modified.
type Server interface {
	// ListTools lists the server's tools, app-only ones included.
	ListTools(ctx context.Context) ([]mcp.Tool, error)
	// CallTool calls the tool the server lists as name.
	CallTool(ctx context.Context, name string, args any) (*mcp.CallToolResult, error)
	// ListResources lists the server's resources.
	ListResources(ctx context.Context) ([]mcp.Resource, error)
	// ReadResource reads the resource uri.
	ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error)
}

// Resource is a view's document and its metadata, as its server served
// it.
type Resource struct {
	// URI is the resource's ui:// URI.
	URI string
	// HTML is the document, decoded when the server sent it as a blob.
	HTML []byte
	// Meta is the resource's _meta.ui: from the content item read, or
	// else from the resources/list entry.
	Meta ResourceMeta
}

// ResourceMeta is a view resource's _meta.ui: what its document needs.
type ResourceMeta struct {
	// CSP lists the origins the document may reach; nil when it declares
	// none, which gives the strictest policy (see ContentSecurityPolicy).
	CSP *CSP `json:"csp,omitempty"`
	// Permissions are the browser features the view asks for; the host
	// may grant some (Permissions.Grant).
	Permissions Permissions `json:"permissions"`
	// Domain is the dedicated sandbox origin the server asks for, in a
	// host-defined format; informative only.
	Domain string `json:"domain,omitempty"`
	// PrefersBorder says whether the view would like a visible border;
	// nil when it does not say.
	PrefersBorder *bool `json:"prefersBorder,omitempty"`
}

// CSP is the origins a view declares, by use. Entries are kept as the
// server sent them; ContentSecurityPolicy drops the malformed ones.
type CSP struct {
	// ConnectDomains may be reached by fetch, XHR and WebSocket.
	ConnectDomains []string `json:"connectDomains,omitempty"`
	// ResourceDomains may serve scripts, styles, images, fonts and media.
	ResourceDomains []string `json:"resourceDomains,omitempty"`
	// FrameDomains may be loaded in nested frames.
	FrameDomains []string `json:"frameDomains,omitempty"`
	// BaseURIDomains may be the document's base URI.
	BaseURIDomains []string `json:"baseUriDomains,omitempty"`
}

// Cache fetches views' resources from one server and keeps them for the
// session: the host keeps one Cache per server connection, and calls
// Forget when the server says its resources changed. The zero value needs
// only Server; a Cache is safe for concurrent use.
type Cache struct {
	// Server is the server the resources are read from: the one whose
	// tool names the view.
	Server Server
	// MaxHTML bounds a document, in bytes; zero means DefaultMaxHTML.
	MaxHTML int

	mu   sync.Mutex
	docs map[string]*Resource
}

// Get returns the view resource uri, reading it from the server the first
// time. The resource is checked: uri is a ui:// URI (ErrBadURI); the read
// returns exactly one content item, of that URI and of type MIMEType, and
// a listing that names the URI gives it no other type (ErrNotApp); the
// document is at most MaxHTML bytes. A resource need not be listed; when
// it is, the listing's _meta.ui stands in for a content item without one.
// A failed read is not cached. The Resource returned is shared: read it,
// never modify it.
func (c *Cache) Get(ctx context.Context, uri string) (*Resource, error) {
	if err := CheckURI(uri); err != nil {
		return nil, err
	}
	c.mu.Lock()
	r := c.docs[uri]
	c.mu.Unlock()
	if r != nil {
		return r, nil
	}
	r, err := c.fetch(ctx, uri)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.docs == nil || len(c.docs) >= maxCached {
		c.docs = map[string]*Resource{}
	}
	c.docs[uri] = r
	return r, nil
}

// Forget drops every cached resource: the next Get reads again.
func (c *Cache) Forget() {
	c.mu.Lock()
	c.docs = nil
	c.mu.Unlock()
}

func (c *Cache) fetch(ctx context.Context, uri string) (*Resource, error) {
	listed, err := c.listed(ctx, uri)
	if err != nil {
		return nil, err
	}
	res, err := c.Server.ReadResource(ctx, uri)
	if err != nil {
		return nil, fmt.Errorf("apps: reading %s: %w", uri, err)
	}
	if len(res.Contents) != 1 {
		return nil, fmt.Errorf("%w: %s: %d content items, want 1", ErrNotApp, uri, len(res.Contents))
	}
	item := res.Contents[0]
	switch {
	case item.URI != uri:
		return nil, fmt.Errorf("%w: %s: the content is of %.80q", ErrNotApp, uri, item.URI)
	case item.MIMEType != MIMEType:
		return nil, fmt.Errorf("%w: %s: content type %.80q", ErrNotApp, uri, item.MIMEType)
	}
	html, err := c.document(item)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrNotApp, uri, err)
	}
	r := &Resource{URI: uri, HTML: html}
	meta, found, err := metaUI(item.Meta)
	if err == nil && !found && listed != nil {
		meta, _, err = metaUI(listed.Meta)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: _meta.ui: %w", ErrNotApp, uri, err)
	}
	r.Meta = meta
	return r, nil
}

// listed finds uri in the server's listing and checks its type there; nil
// when it is not listed. A server that lists no resources at all (no
// resources capability, or an error) is taken to list none: listing is
// optional for views.
func (c *Cache) listed(ctx context.Context, uri string) (*mcp.Resource, error) {
	all, err := c.Server.ListResources(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, nil
	}
	for i := range all {
		if all[i].URI != uri {
			continue
		}
		if t := all[i].MIMEType; t != "" && t != MIMEType {
			return nil, fmt.Errorf("%w: %s: listed with type %.80q", ErrNotApp, uri, t)
		}
		return &all[i], nil
	}
	return nil, nil
}

// document decodes the item's text or blob, within the size bound.
func (c *Cache) document(item mcp.ResourceContents) ([]byte, error) {
	limit := c.MaxHTML
	if limit <= 0 {
		limit = DefaultMaxHTML
	}
	switch {
	case item.Text != "" && item.Blob != "":
		return nil, errors.New("both text and blob")
	case item.Blob != "":
		if base64.StdEncoding.DecodedLen(len(item.Blob)) > limit+2 {
			return nil, fmt.Errorf("document over %d bytes", limit)
		}
		b, err := base64.StdEncoding.DecodeString(item.Blob)
		if err != nil {
			return nil, fmt.Errorf("blob: %w", err)
		}
		if len(b) > limit {
			return nil, fmt.Errorf("document over %d bytes", limit)
		}
		return b, nil
	case len(item.Text) > limit:
		return nil, fmt.Errorf("document over %d bytes", limit)
	case item.Text == "":
		return nil, errors.New("empty document")
	}
	return []byte(item.Text), nil
}

// metaUI reads _meta.ui from a _meta object; found is false when there is
// none.
func metaUI(raw json.RawMessage) (m ResourceMeta, found bool, err error) {
	if len(raw) == 0 {
		return m, false, nil
	}
	var outer struct {
		UI *ResourceMeta `json:"ui"`
	}
	if err := json.Unmarshal(raw, &outer); err != nil {
		return m, false, err
	}
	if outer.UI == nil {
		return m, false, nil
	}
	return *outer.UI, true, nil
}

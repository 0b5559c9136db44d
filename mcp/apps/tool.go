package apps

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"git.rickub.com/bots-garden/mini-me/mcp"
)

// Audiences of a tool (ToolUI.Visibility).
const (
	// Model: the agent sees the tool and may call it.
	Model = "model"
	// App: the server's views may call it.
	App = "app"
)

// maxURI bounds a ui:// URI, in bytes.
const maxURI = 2048

// ErrBadURI is the error of a resource URI that is not a usable ui:// URI.
var ErrBadURI = errors.New("apps: not a ui:// resource URI")

// ToolUI is a tool's _meta.ui: which view shows its results and who may
// call it.
type ToolUI struct {
	// ResourceURI is the ui:// resource of the tool's view, on the tool's
	// own server; empty when the tool has no view.
	ResourceURI string
	// Visibility lists the audiences, Model and App; nil when the tool
	// does not say, which means both. An empty, non-nil list means
	// neither.
	Visibility []string
}

// uiMeta is the part of a tool's _meta that MCP Apps reads.
type uiMeta struct {
	UI *struct {
		ResourceURI *string  `json:"resourceUri"`
		Visibility  []string `json:"visibility"`
	} `json:"ui"`
	// LegacyURI is the deprecated flat key, read when ui.resourceUri is
	// absent.
	LegacyURI *string `json:"ui/resourceUri"`
}

// ToolMeta reads t's _meta.ui. The view's URI is _meta.ui.resourceUri, or
// else the deprecated _meta["ui/resourceUri"]. A _meta that is not an
// object, or a ui object of the wrong shape, is an error and the zero
// ToolUI, as is a URI that is not a ui:// URI (ErrBadURI): the host must
// not render such a tool's view, and should log why. A tool with no
// _meta.ui gives the zero ToolUI and no error: no view, both audiences.
func ToolMeta(t mcp.Tool) (ToolUI, error) {
	if len(t.Meta) == 0 || string(t.Meta) == "null" {
		return ToolUI{}, nil
	}
	var m uiMeta
	if err := json.Unmarshal(t.Meta, &m); err != nil {
		return ToolUI{}, fmt.Errorf("apps: tool %q: _meta.ui: %w", t.Name, err)
	}
	var ui ToolUI
	uri := m.LegacyURI
	if m.UI != nil {
		ui.Visibility = m.UI.Visibility
		if m.UI.ResourceURI != nil {
			uri = m.UI.ResourceURI
		}
	}
	if uri != nil {
		if err := CheckURI(*uri); err != nil {
			return ToolUI{Visibility: ui.Visibility}, fmt.Errorf("apps: tool %q: %w", t.Name, err)
		}
		ui.ResourceURI = *uri
	}
	return ui, nil
}

// CheckURI returns nil when uri is a ui:// URI a host may fetch: the
// scheme, something after it, no more than 2048 bytes, no control
// characters or spaces.
func CheckURI(uri string) error {
	rest, ok := strings.CutPrefix(uri, Scheme+"://")
	if !ok || rest == "" || len(uri) > maxURI || strings.ContainsFunc(uri, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return fmt.Errorf("%w: %.80q", ErrBadURI, uri)
	}
	return nil
}

// ForModel reports whether t may be offered to a model: its visibility is
// absent or includes Model. A tool whose _meta.ui cannot be read is kept
// from the model, since it may be meant for apps only.
func ForModel(t mcp.Tool) bool { return visibleTo(t, Model) }

// ForApp reports whether a view of t's server may call t: its visibility
// is absent or includes App. A tool whose _meta.ui cannot be read is not
// callable by a view.
func ForApp(t mcp.Tool) bool { return visibleTo(t, App) }

func visibleTo(t mcp.Tool, audience string) bool {
	ui, err := ToolMeta(t)
	if err != nil && !errors.Is(err, ErrBadURI) {
		return false
	}
	return ui.Visibility == nil || slices.Contains(ui.Visibility, audience)
}

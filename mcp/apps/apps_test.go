package apps_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/apps"
)

// The extension is declared in initialize (legacy) and in the _meta of
// every request (2026-07-28), with the MIME type of views.
func TestDeclare(t *testing.T) {
	for _, version := range []string{mcptest.Legacy, mcptest.Modern} {
		t.Run(version, func(t *testing.T) {
			s := &mcptest.Server{Versions: []string{version}}
			url := s.Start()
			defer s.Close()
			var opts mcp.Options
			apps.Declare(&opts)
			c, err := mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: url}, &opts)
			require.NoError(t, err)
			defer c.Close()
			_, err = c.ListTools(context.Background())
			require.NoError(t, err)
			seen := 0
			for _, r := range s.Requests() {
				if r.Method == "" || strings.HasPrefix(r.Method, "notifications/") {
					continue
				}
				var m struct {
					Params struct {
						Capabilities json.RawMessage `json:"capabilities"`
						Meta         struct {
							Caps json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
						} `json:"_meta"`
					} `json:"params"`
				}
				require.NoError(t, json.Unmarshal(r.Body, &m))
				caps := m.Params.Meta.Caps
				if version == mcptest.Legacy {
					if r.Method != "initialize" {
						continue
					}
					caps = m.Params.Capabilities
				}
				var c struct {
					Extensions map[string]struct {
						MIMETypes []string `json:"mimeTypes"`
					} `json:"extensions"`
				}
				require.NoError(t, json.Unmarshal(caps, &c), "%s: %s", r.Method, caps)
				assert.Equal(t, []string{apps.MIMEType}, c.Extensions[apps.Extension].MIMETypes, "%s", r.Method)
				seen++
			}
			assert.Positive(t, seen)
		})
	}
}

func TestDeclareBadSettings(t *testing.T) {
	opts := mcp.Options{Extensions: map[string]json.RawMessage{"x/y": json.RawMessage(`[1]`)}}
	_, err := mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: "http://127.0.0.1:1/mcp"}, &opts)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not a JSON object")
}

func tool(meta string) mcp.Tool {
	return mcp.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`), Meta: json.RawMessage(meta)}
}

func TestToolMeta(t *testing.T) {
	for _, tc := range []struct {
		name, meta string
		uri        string
		bad        bool
		model, app bool
		badURI     bool
		visibility []string
	}{
		{"no meta", ``, "", false, true, true, false, nil},
		{"other keys", `{"x":1}`, "", false, true, true, false, nil},
		{"nested", `{"ui":{"resourceUri":"ui://a/b.html"}}`, "ui://a/b.html", false, true, true, false, nil},
		{"legacy flat key", `{"ui/resourceUri":"ui://a/old.html"}`, "ui://a/old.html", false, true, true, false, nil},
		{"nested wins", `{"ui":{"resourceUri":"ui://a/new"},"ui/resourceUri":"ui://a/old"}`, "ui://a/new", false, true, true, false, nil},
		{"app only", `{"ui":{"visibility":["app"]}}`, "", false, false, true, false, []string{"app"}},
		{"model only", `{"ui":{"visibility":["model"]}}`, "", false, true, false, false, []string{"model"}},
		{"empty visibility is neither", `{"ui":{"visibility":[]}}`, "", false, false, false, false, []string{}},
		{"both", `{"ui":{"visibility":["model","app"]}}`, "", false, true, true, false, []string{"model", "app"}},
		{"https uri", `{"ui":{"resourceUri":"https://evil.example/x"}}`, "", true, true, true, true, nil},
		{"ui:// with nothing", `{"ui":{"resourceUri":"ui://"}}`, "", true, true, true, true, nil},
		{"uri with newline", `{"ui":{"resourceUri":"ui://a/\nb"}}`, "", true, true, true, true, nil},
		{"bad uri keeps visibility", `{"ui":{"resourceUri":"javascript:x","visibility":["app"]}}`, "", true, false, true, true, []string{"app"}},
		{"ui not an object", `{"ui":"x"}`, "", true, false, false, false, nil},
		{"visibility not a list", `{"ui":{"visibility":"app"}}`, "", true, false, false, false, nil},
		{"meta not an object", `[1]`, "", true, false, false, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ui, err := apps.ToolMeta(tool(tc.meta))
			if tc.bad {
				require.Error(t, err)
				assert.Equal(t, tc.badURI, errors.Is(err, apps.ErrBadURI), "%v", err)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tc.uri, ui.ResourceURI)
			assert.Equal(t, tc.visibility, ui.Visibility)
			assert.Equal(t, tc.model, apps.ForModel(tool(tc.meta)), "ForModel")
			assert.Equal(t, tc.app, apps.ForApp(tool(tc.meta)), "ForApp")
		})
	}
}

func TestCheckURIBound(t *testing.T) {
	require.NoError(t, apps.CheckURI("ui://x/"+strings.Repeat("a", 2000)))
	require.ErrorIs(t, apps.CheckURI("ui://x/"+strings.Repeat("a", 2050)), apps.ErrBadURI)
	require.ErrorIs(t, apps.CheckURI("UI://x"), apps.ErrBadURI)
}

// A client is what a Bridge and a Cache are given (toolset.AppServer is
// too, asserted in its package).
var _ apps.Server = (*mcp.Client)(nil)

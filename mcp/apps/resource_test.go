package apps_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/apps"
)

const viewURI = "ui://srv/view.html"

func contents(items ...mcp.ResourceContents) func(string) (*mcp.ReadResourceResult, error) {
	return func(string) (*mcp.ReadResourceResult, error) { return &mcp.ReadResourceResult{Contents: items}, nil }
}

func TestCacheGet(t *testing.T) {
	html := "<!doctype html><p>hi</p>"
	meta := json.RawMessage(`{"ui":{"csp":{"connectDomains":["https://api.example.com"]},"permissions":{"camera":{}},"prefersBorder":true}}`)
	s := &fakeServer{read: contents(mcp.ResourceContents{URI: viewURI, MIMEType: apps.MIMEType, Text: html, Meta: meta})}
	c := &apps.Cache{Server: s}
	r, err := c.Get(context.Background(), viewURI)
	require.NoError(t, err)
	assert.Equal(t, html, string(r.HTML))
	assert.Equal(t, []string{"https://api.example.com"}, r.Meta.CSP.ConnectDomains)
	assert.True(t, r.Meta.Permissions.Camera)
	require.NotNil(t, r.Meta.PrefersBorder)
	assert.True(t, *r.Meta.PrefersBorder)

	again, err := c.Get(context.Background(), viewURI)
	require.NoError(t, err)
	assert.Same(t, r, again)
	assert.Equal(t, 1, s.readCount(), "cached for the session")
	c.Forget()
	_, err = c.Get(context.Background(), viewURI)
	require.NoError(t, err)
	assert.Equal(t, 2, s.readCount())
}

func TestCacheBlob(t *testing.T) {
	html := "<!doctype html><b>blob</b>"
	s := &fakeServer{read: contents(mcp.ResourceContents{URI: viewURI, MIMEType: apps.MIMEType, Blob: base64.StdEncoding.EncodeToString([]byte(html))})}
	r, err := (&apps.Cache{Server: s}).Get(context.Background(), viewURI)
	require.NoError(t, err)
	assert.Equal(t, html, string(r.HTML))
	assert.Nil(t, r.Meta.CSP, "no csp: the default policy")
}

// The listing's _meta.ui stands in for the content item's, which wins
// when it has one.
func TestCacheMetaFromListing(t *testing.T) {
	listed := []mcp.Resource{{URI: viewURI, Name: "v", MIMEType: apps.MIMEType,
		Meta: json.RawMessage(`{"ui":{"csp":{"resourceDomains":["https://listed.example.com"]}}}`)}}
	s := &fakeServer{resources: listed, read: contents(mcp.ResourceContents{URI: viewURI, MIMEType: apps.MIMEType, Text: "<p>"})}
	r, err := (&apps.Cache{Server: s}).Get(context.Background(), viewURI)
	require.NoError(t, err)
	assert.Equal(t, []string{"https://listed.example.com"}, r.Meta.CSP.ResourceDomains)

	s.read = contents(mcp.ResourceContents{URI: viewURI, MIMEType: apps.MIMEType, Text: "<p>",
		Meta: json.RawMessage(`{"ui":{"csp":{"resourceDomains":["https://item.example.com"]}}}`)})
	r, err = (&apps.Cache{Server: s}).Get(context.Background(), viewURI)
	require.NoError(t, err)
	assert.Equal(t, []string{"https://item.example.com"}, r.Meta.CSP.ResourceDomains)
}

func TestCacheRefuses(t *testing.T) {
	ok := mcp.ResourceContents{URI: viewURI, MIMEType: apps.MIMEType, Text: "<p>"}
	with := func(f func(*mcp.ResourceContents)) mcp.ResourceContents { c := ok; f(&c); return c }
	for _, tc := range []struct {
		name   string
		server *fakeServer
		uri    string
		want   error
		inErr  string
	}{
		{"not ui://", &fakeServer{read: contents(ok)}, "https://x/view", apps.ErrBadURI, ""},
		{"no content", &fakeServer{read: contents()}, viewURI, apps.ErrNotApp, "0 content items"},
		{"two items", &fakeServer{read: contents(ok, ok)}, viewURI, apps.ErrNotApp, "2 content items"},
		{"other uri", &fakeServer{read: contents(with(func(c *mcp.ResourceContents) { c.URI = "ui://srv/other" }))}, viewURI, apps.ErrNotApp, "content is of"},
		{"plain html", &fakeServer{read: contents(with(func(c *mcp.ResourceContents) { c.MIMEType = "text/html" }))}, viewURI, apps.ErrNotApp, "content type"},
		{"no type", &fakeServer{read: contents(with(func(c *mcp.ResourceContents) { c.MIMEType = "" }))}, viewURI, apps.ErrNotApp, "content type"},
		{"empty", &fakeServer{read: contents(with(func(c *mcp.ResourceContents) { c.Text = "" }))}, viewURI, apps.ErrNotApp, "empty"},
		{"bad blob", &fakeServer{read: contents(with(func(c *mcp.ResourceContents) { c.Text = ""; c.Blob = "%%%" }))}, viewURI, apps.ErrNotApp, "blob"},
		{"text and blob", &fakeServer{read: contents(with(func(c *mcp.ResourceContents) { c.Blob = "AA==" }))}, viewURI, apps.ErrNotApp, "both"},
		{"too large", &fakeServer{read: contents(with(func(c *mcp.ResourceContents) { c.Text = strings.Repeat("x", apps.DefaultMaxHTML+1) }))}, viewURI, apps.ErrNotApp, "over"},
		{"too large blob", &fakeServer{read: contents(with(func(c *mcp.ResourceContents) {
			c.Text = ""
			c.Blob = base64.StdEncoding.EncodeToString(make([]byte, apps.DefaultMaxHTML+1))
		}))}, viewURI, apps.ErrNotApp, "over"},
		{"bad meta", &fakeServer{read: contents(with(func(c *mcp.ResourceContents) { c.Meta = json.RawMessage(`{"ui":{"csp":"all"}}`) }))}, viewURI, apps.ErrNotApp, "_meta.ui"},
		{"listed with another type", &fakeServer{read: contents(ok), resources: []mcp.Resource{{URI: viewURI, Name: "v", MIMEType: "text/html"}}}, viewURI, apps.ErrNotApp, "listed with type"},
		{"read fails", &fakeServer{}, viewURI, nil, "resource not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &apps.Cache{Server: tc.server}
			r, err := c.Get(context.Background(), tc.uri)
			require.Error(t, err)
			assert.Nil(t, r)
			if tc.want != nil {
				assert.True(t, errors.Is(err, tc.want), "%v", err)
			}
			assert.Contains(t, err.Error(), tc.inErr)
			// Not cached: a second Get reads again.
			_, _ = c.Get(context.Background(), tc.uri)
			switch {
			case tc.want == apps.ErrBadURI:
				assert.Equal(t, 0, tc.server.readCount(), "a bad URI is never read")
			case tc.server.resources != nil:
				assert.Equal(t, 0, tc.server.readCount(), "refused on the listing, before the read")
			default:
				assert.Equal(t, 2, tc.server.readCount())
			}
		})
	}
}

func TestCacheMaxHTML(t *testing.T) {
	s := &fakeServer{read: contents(mcp.ResourceContents{URI: viewURI, MIMEType: apps.MIMEType, Text: "0123456789"})}
	_, err := (&apps.Cache{Server: s, MaxHTML: 9}).Get(context.Background(), viewURI)
	require.ErrorIs(t, err, apps.ErrNotApp)
	_, err = (&apps.Cache{Server: s, MaxHTML: 10}).Get(context.Background(), viewURI)
	require.NoError(t, err)
}

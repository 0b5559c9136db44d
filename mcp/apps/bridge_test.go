package apps_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/apps"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// view is the other end of a Bridge in a test: what the bridge sent.
type view struct {
	t   *testing.T
	b   *apps.Bridge
	out chan json.RawMessage
}

type wire struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// allowAll, denyAll and a recording policy.
type policyFunc func(context.Context, permission.Request) (permission.Decision, error)

func (f policyFunc) Check(ctx context.Context, r permission.Request) (permission.Decision, error) {
	return f(ctx, r)
}

var allow = policyFunc(func(context.Context, permission.Request) (permission.Decision, error) {
	return permission.Decision{Verdict: permission.AllowOnce}, nil
})

func appTools() []mcp.Tool {
	return []mcp.Tool{
		{Name: "get-time", InputSchema: json.RawMessage(`{"type":"object"}`), Meta: json.RawMessage(`{"ui":{"resourceUri":"ui://srv/view.html"}}`)},
		{Name: "poll", InputSchema: json.RawMessage(`{"type":"object"}`), Meta: json.RawMessage(`{"ui":{"visibility":["app"]}}`),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: ptr(true)}},
		{Name: "model-only", InputSchema: json.RawMessage(`{"type":"object"}`), Meta: json.RawMessage(`{"ui":{"visibility":["model"]}}`)},
	}
}

func ptr[T any](v T) *T { return &v }

// newView makes a bridge over srv with the given changes, not yet
// initialized.
func newView(t *testing.T, srv apps.Server, set func(*apps.Bridge)) *view {
	v := &view{t: t, out: make(chan json.RawMessage, 64)}
	v.b = &apps.Bridge{Server: srv, ServerName: "srv", ResourceURI: viewURI, Policy: allow,
		Send: func(m []byte) error { v.out <- append(json.RawMessage(nil), m...); return nil }}
	if set != nil {
		set(v.b)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // no view answers the teardown here
		_ = v.b.Close(ctx)
	})
	return v
}

// ready makes the handshake and returns the initialize result.
func (v *view) ready() json.RawMessage {
	v.t.Helper()
	require.NoError(v.t, v.b.Handle([]byte(`{"jsonrpc":"2.0","id":0,"method":"ui/initialize","params":{"protocolVersion":"2026-01-26","appInfo":{"name":"a","version":"1"},"appCapabilities":{"availableDisplayModes":["inline","fullscreen"]}}}`)))
	r := v.next()
	require.Nil(v.t, r.Error)
	require.NoError(v.t, v.b.Handle([]byte(`{"jsonrpc":"2.0","method":"ui/notifications/initialized","params":{}}`)))
	return r.Result
}

func (v *view) next() wire {
	v.t.Helper()
	select {
	case m := <-v.out:
		var w wire
		require.NoError(v.t, json.Unmarshal(m, &w), "%s", m)
		return w
	case <-time.After(10 * time.Second):
		v.t.Fatal("the bridge sent nothing")
		return wire{}
	}
}

func (v *view) none() {
	v.t.Helper()
	select {
	case m := <-v.out:
		v.t.Fatalf("unexpected message %s", m)
	default:
	}
}

// ask sends a request and returns its answer.
func (v *view) ask(method, params string) wire {
	v.t.Helper()
	_ = v.b.Handle([]byte(`{"jsonrpc":"2.0","id":"r1","method":"` + method + `","params":` + params + `}`))
	w := v.next()
	require.Equal(v.t, `"r1"`, string(w.ID))
	return w
}

func refusedWith(t *testing.T, w wire, code int, text string) {
	t.Helper()
	require.NotNil(t, w.Error, "result %s", w.Result)
	assert.Equal(t, code, w.Error.Code)
	assert.Contains(t, w.Error.Message, text)
}

func TestBridgeInitialize(t *testing.T) {
	v := newView(t, &fakeServer{}, func(b *apps.Bridge) {
		b.HostInfo = mcp.Implementation{Name: "host", Version: "9"}
		b.Context = apps.HostContext{Theme: "dark", Platform: "web", DisplayMode: "inline", Locale: "fr-FR"}
		b.Message = func(context.Context, []mcp.Content) error { return nil }
		b.Sandbox = apps.Sandbox{CSP: &apps.CSP{ConnectDomains: []string{"https://a.example.com"}}, Permissions: apps.Permissions{Camera: true}}
	})
	var res struct {
		ProtocolVersion  string                     `json:"protocolVersion"`
		HostInfo         mcp.Implementation         `json:"hostInfo"`
		HostCapabilities map[string]json.RawMessage `json:"hostCapabilities"`
		HostContext      apps.HostContext           `json:"hostContext"`
	}
	require.NoError(t, json.Unmarshal(v.ready(), &res))
	assert.Equal(t, apps.ProtocolVersion, res.ProtocolVersion)
	assert.Equal(t, "host", res.HostInfo.Name)
	assert.Equal(t, "dark", res.HostContext.Theme)
	assert.Equal(t, "fr-FR", res.HostContext.Locale)
	assert.Contains(t, res.HostCapabilities, "serverTools")
	assert.Contains(t, res.HostCapabilities, "message")
	assert.NotContains(t, res.HostCapabilities, "openLinks", "no OpenLink: not advertised")
	assert.NotContains(t, res.HostCapabilities, "updateModelContext")
	assert.NotContains(t, res.HostCapabilities, "downloadFile")
	assert.JSONEq(t, `{"csp":{"connectDomains":["https://a.example.com"]},"permissions":{"camera":{}}}`, string(res.HostCapabilities["sandbox"]))
}

// Nothing reaches the view before ui/notifications/initialized; then the
// tool input comes once, before the result, which is sent unchanged.
func TestBridgeToolNotificationsWaitForInitialized(t *testing.T) {
	v := newView(t, &fakeServer{}, nil)
	require.ErrorIs(t, v.b.ToolResult(&mcp.CallToolResult{}), apps.ErrOrder, "result before input")
	require.NoError(t, v.b.ToolInput(json.RawMessage(`{"tz":"UTC"}`)))
	require.ErrorIs(t, v.b.ToolInput(json.RawMessage(`{}`)), apps.ErrOrder, "input twice")
	res := &mcp.CallToolResult{Content: []mcp.Content{{Type: "text", Text: "12:00"}}, StructuredContent: json.RawMessage(`{"time":"12:00"}`)}
	require.NoError(t, v.b.ToolResult(res))
	require.ErrorIs(t, v.b.ToolCancelled("x"), apps.ErrOrder, "result twice")
	require.NoError(t, v.b.Handle([]byte(`{"jsonrpc":"2.0","id":0,"method":"ui/initialize","params":{}}`)))
	assert.Nil(t, v.next().Error)
	v.none()
	require.NoError(t, v.b.Handle([]byte(`{"jsonrpc":"2.0","method":"ui/notifications/initialized"}`)))
	in := v.next()
	assert.Equal(t, "ui/notifications/tool-input", in.Method)
	assert.JSONEq(t, `{"arguments":{"tz":"UTC"}}`, string(in.Params))
	out := v.next()
	assert.Equal(t, "ui/notifications/tool-result", out.Method)
	assert.JSONEq(t, `{"content":[{"type":"text","text":"12:00"}],"structuredContent":{"time":"12:00"}}`, string(out.Params))
	v.none()
}

func TestBridgeToolCancelled(t *testing.T) {
	v := newView(t, &fakeServer{}, nil)
	v.ready()
	require.NoError(t, v.b.ToolInput(nil))
	assert.JSONEq(t, `{"arguments":{}}`, string(v.next().Params))
	require.NoError(t, v.b.ToolCancelled("denied"))
	w := v.next()
	assert.Equal(t, "ui/notifications/tool-cancelled", w.Method)
	assert.JSONEq(t, `{"reason":"denied"}`, string(w.Params))
	require.Error(t, newView(t, &fakeServer{}, nil).b.ToolInput(json.RawMessage(`[1]`)))
}

// Before the handshake ends only ui/initialize and ping are answered.
func TestBridgeRequestsBeforeInitialized(t *testing.T) {
	s := &fakeServer{tools: appTools()}
	v := newView(t, s, nil)
	assert.Nil(t, v.ask("ping", `{}`).Error)
	refusedWith(t, v.ask("tools/call", `{"name":"get-time"}`), apps.CodeRefused, "not initialized")
	refusedWith(t, v.ask("ui/request-display-mode", `{"mode":"fullscreen"}`), apps.CodeRefused, "not initialized")
	assert.Empty(t, s.called())
}

func TestBridgeMalformed(t *testing.T) {
	v := newView(t, &fakeServer{}, func(b *apps.Bridge) { b.MaxMessageSize = 4096 })
	v.ready()
	for _, tc := range []struct {
		name, msg string
		code      int // 0: dropped, nothing sent
	}{
		{"not json", `{"jsonrpc":`, apps.CodeParse},
		{"a string", `"hello"`, apps.CodeParse},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, apps.CodeParse},
		{"empty", ``, apps.CodeParse},
		{"version 1", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, apps.CodeInvalidRequest},
		{"params an array", `{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}`, apps.CodeInvalidRequest},
		{"id an object", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, 0},
		{"id too long", `{"jsonrpc":"2.0","id":"` + strings.Repeat("x", 200) + `","method":"ping"}`, 0},
		{"method too long", `{"jsonrpc":"2.0","id":1,"method":"` + strings.Repeat("m", 200) + `"}`, apps.CodeInvalidRequest},
		{"oversized", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("x", 5000) + `"}}`, 0},
		{"bad size-changed", `{"jsonrpc":"2.0","method":"ui/notifications/size-changed","params":{"width":"wide"}}`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := v.b.Handle([]byte(tc.msg))
			require.ErrorIs(t, err, apps.ErrBadMessage)
			if tc.code == 0 {
				v.none()
				return
			}
			w := v.next()
			require.NotNil(t, w.Error)
			assert.Equal(t, tc.code, w.Error.Code)
		})
	}
	refusedWith(t, v.ask("eval", `{"code":"alert(1)"}`), apps.CodeUnknownMethod, "method not found")
	refusedWith(t, v.ask("ui/download-file", `{}`), apps.CodeUnknownMethod, "method not found")
	require.NoError(t, v.b.Handle([]byte(`{"jsonrpc":"2.0","method":"ui/notifications/unknown","params":{}}`)))
	v.none()
}

func TestBridgeToolsCall(t *testing.T) {
	var seen []permission.Request
	var mu sync.Mutex
	s := &fakeServer{tools: appTools()}
	v := newView(t, s, func(b *apps.Bridge) {
		b.Policy = policyFunc(func(_ context.Context, r permission.Request) (permission.Decision, error) {
			mu.Lock()
			seen = append(seen, r)
			mu.Unlock()
			return permission.Decision{Verdict: permission.AllowOnce}, nil
		})
	})
	v.ready()
	w := v.ask("tools/call", `{"name":"poll","arguments":{"n":1}}`)
	require.Nil(t, w.Error)
	assert.JSONEq(t, `{"content":[{"type":"text","text":"poll {\"n\":1}"}]}`, string(w.Result))
	w = v.ask("tools/call", `{"name":"get-time"}`)
	require.Nil(t, w.Error)
	assert.JSONEq(t, `{"content":[{"type":"text","text":"get-time {}"}]}`, string(w.Result))
	assert.Equal(t, []string{"poll", "get-time"}, s.called())
	require.Len(t, seen, 2)
	assert.Equal(t, "srv", seen[0].Server)
	assert.Equal(t, "poll", seen[0].Tool)
	assert.Equal(t, "app "+viewURI, seen[0].Caller)
	assert.JSONEq(t, `{"n":1}`, string(seen[0].Arguments))
	assert.True(t, *seen[0].Annotations.ReadOnlyHint)
	assert.Equal(t, 1, s.lists, "the tool list is fetched once per view")
}

// A view reaches only app-visible tools of its own server.
func TestBridgeToolsCallRefused(t *testing.T) {
	own := &fakeServer{tools: appTools()}
	other := &fakeServer{tools: []mcp.Tool{{Name: "delete-all", InputSchema: json.RawMessage(`{"type":"object"}`)}}}
	v := newView(t, own, nil)
	v.ready()
	refusedWith(t, v.ask("tools/call", `{"name":"model-only"}`), apps.CodeRefused, "not visible to apps")
	refusedWith(t, v.ask("tools/call", `{"name":"delete-all"}`), apps.CodeRefused, "not a tool of this view's server")
	refusedWith(t, v.ask("tools/call", `{"name":""}`), apps.CodeInvalidParams, "tool name")
	refusedWith(t, v.ask("tools/call", `{"name":"poll","arguments":[1]}`), apps.CodeInvalidParams, "must be an object")
	refusedWith(t, v.ask("tools/call", `{"name":7}`), apps.CodeInvalidParams, "invalid params")
	assert.Empty(t, own.called())
	assert.Empty(t, other.called())
}

func TestBridgeToolsCallPolicy(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy permission.Checker
		text   string
	}{
		{"no policy", nil, "allows no tool calls"},
		{"denied", policyFunc(func(context.Context, permission.Request) (permission.Decision, error) {
			return permission.Decision{Verdict: permission.Deny, Reason: "the user said no"}, nil
		}), "the user said no"},
		{"deferred", policyFunc(func(context.Context, permission.Request) (permission.Decision, error) {
			return permission.Decision{}, permission.ErrDeferred
		}), "not allowed"},
		{"error", policyFunc(func(context.Context, permission.Request) (permission.Decision, error) {
			return permission.Decision{}, errors.New("approver unreachable")
		}), "not allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &fakeServer{tools: appTools()}
			v := newView(t, s, func(b *apps.Bridge) { b.Policy = tc.policy })
			v.ready()
			refusedWith(t, v.ask("tools/call", `{"name":"poll"}`), apps.CodeRefused, tc.text)
			assert.Empty(t, s.called())
		})
	}
}

func TestBridgeToolsCallErrors(t *testing.T) {
	s := &fakeServer{tools: appTools(), call: func(_ context.Context, name string, _ json.RawMessage) (*mcp.CallToolResult, error) {
		switch name {
		case "poll":
			return nil, &mcp.RPCError{Code: -32602, Message: "bad arguments"}
		case "get-time":
			return nil, errors.New("post http://10.0.0.7:9999/mcp: connection refused")
		}
		return &mcp.CallToolResult{Content: []mcp.Content{{Type: "text", Text: strings.Repeat("x", 2000)}}}, nil
	}}
	s.tools = append(s.tools, mcp.Tool{Name: "big", InputSchema: json.RawMessage(`{"type":"object"}`)})
	v := newView(t, s, func(b *apps.Bridge) { b.MaxResult = 1000 })
	v.ready()
	refusedWith(t, v.ask("tools/call", `{"name":"poll"}`), -32602, "bad arguments")
	w := v.ask("tools/call", `{"name":"get-time"}`)
	refusedWith(t, w, -32603, "tools/call failed")
	assert.NotContains(t, w.Error.Message, "10.0.0.7", "the host's endpoints stay out of the view")
	refusedWith(t, v.ask("tools/call", `{"name":"big"}`), apps.CodeRefused, "over the limit")
}

func TestBridgeToolsList(t *testing.T) {
	v := newView(t, &fakeServer{tools: appTools()}, nil)
	v.ready()
	w := v.ask("tools/list", `{}`)
	require.Nil(t, w.Error)
	var res struct{ Tools []mcp.Tool }
	require.NoError(t, json.Unmarshal(w.Result, &res))
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	assert.Equal(t, []string{"get-time", "poll"}, names)
}

func TestBridgeResourcesRead(t *testing.T) {
	s := &fakeServer{read: func(uri string) (*mcp.ReadResourceResult, error) {
		if uri == "ui://srv/big" {
			return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{URI: uri, Text: strings.Repeat("x", 3000)}}}, nil
		}
		if uri == "ui://srv/data.json" {
			return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: "{}"}}}, nil
		}
		return nil, &mcp.RPCError{Code: -32002, Message: "resource not found"}
	}}
	v := newView(t, s, func(b *apps.Bridge) { b.MaxResult = 2000 })
	v.ready()
	w := v.ask("resources/read", `{"uri":"ui://srv/data.json"}`)
	require.Nil(t, w.Error)
	assert.JSONEq(t, `{"contents":[{"uri":"ui://srv/data.json","mimeType":"application/json","text":"{}"}]}`, string(w.Result))
	refusedWith(t, v.ask("resources/read", `{"uri":"file:///etc/passwd"}`), -32002, "not found")
	refusedWith(t, v.ask("resources/read", `{"uri":"ui://srv/big"}`), apps.CodeRefused, "over the limit")
	refusedWith(t, v.ask("resources/read", `{}`), apps.CodeInvalidParams, "needs a URI")
	refusedWith(t, v.ask("resources/read", `{"uri":"ui://`+strings.Repeat("a", 3000)+`"}`), apps.CodeInvalidParams, "needs a URI")
	assert.Equal(t, 3, s.readCount(), "each read reaches the view's own server, the bad ones none")
}

func TestBridgeMessage(t *testing.T) {
	var got [][]mcp.Content
	var mu sync.Mutex
	refuse := false
	v := newView(t, &fakeServer{}, func(b *apps.Bridge) {
		b.Message = func(_ context.Context, c []mcp.Content) error {
			mu.Lock()
			defer mu.Unlock()
			if refuse {
				return errors.New("user declined")
			}
			got = append(got, c)
			return nil
		}
	})
	v.ready()
	assert.Nil(t, v.ask("ui/message", `{"role":"user","content":[{"type":"text","text":"what time is it in Paris?"}]}`).Error)
	assert.Nil(t, v.ask("ui/message", `{"role":"user","content":{"type":"text","text":"one block"}}`).Error)
	refusedWith(t, v.ask("ui/message", `{"role":"assistant","content":[{"type":"text","text":"x"}]}`), apps.CodeInvalidParams, "role")
	refusedWith(t, v.ask("ui/message", `{"role":"user","content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}`), apps.CodeRefused, "only text")
	refusedWith(t, v.ask("ui/message", `{"role":"user","content":[]}`), apps.CodeInvalidParams, "empty")
	refusedWith(t, v.ask("ui/message", `{"role":"user"}`), apps.CodeInvalidParams, "missing")
	refusedWith(t, v.ask("ui/message", `{"role":"user","content":[{"type":"text","text":"`+strings.Repeat("x", 70000)+`"}]}`), apps.CodeRefused, "over the limit")
	mu.Lock()
	refuse = true
	mu.Unlock()
	refusedWith(t, v.ask("ui/message", `{"role":"user","content":[{"type":"text","text":"x"}]}`), apps.CodeRefused, "refused the message")
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, [][]mcp.Content{{{Type: "text", Text: "what time is it in Paris?"}}, {{Type: "text", Text: "one block"}}}, got)

	none := newView(t, &fakeServer{}, nil)
	none.ready()
	refusedWith(t, none.ask("ui/message", `{"role":"user","content":[{"type":"text","text":"x"}]}`), apps.CodeRefused, "no messages")
}

func TestBridgeModelContext(t *testing.T) {
	var text string
	var structured json.RawMessage
	v := newView(t, &fakeServer{}, func(b *apps.Bridge) {
		b.ModelContext = func(_ context.Context, c []mcp.Content, s json.RawMessage) error {
			text, structured = c[0].Text, s
			return nil
		}
	})
	v.ready()
	assert.Nil(t, v.ask("ui/update-model-context", `{"content":[{"type":"text","text":"code 4711"}],"structuredContent":{"code":4711}}`).Error)
	assert.Equal(t, "code 4711", text)
	assert.JSONEq(t, `{"code":4711}`, string(structured))
	refusedWith(t, v.ask("ui/update-model-context", `{"structuredContent":[1]}`), apps.CodeInvalidParams, "must be an object")
	refusedWith(t, v.ask("ui/update-model-context", `{"structuredContent":{"x":"`+strings.Repeat("y", 70000)+`"}}`), apps.CodeRefused, "over the limit")
}

func TestBridgeOpenLink(t *testing.T) {
	var asked []string
	consent := true
	var mu sync.Mutex
	v := newView(t, &fakeServer{}, func(b *apps.Bridge) {
		b.OpenLink = func(_ context.Context, u *url.URL) error {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, u.String())
			if !consent {
				return errors.New("the user said no")
			}
			return nil
		}
	})
	v.ready()
	assert.Nil(t, v.ask("ui/open-link", `{"url":"https://modelcontextprotocol.io/docs"}`).Error)
	for _, bad := range []string{"javascript:alert(1)", "file:///etc/passwd", "data:text/html,x", "vscode://x", "https://user:pw@example.com/", "https:///nohost"} {
		refusedWith(t, v.ask("ui/open-link", `{"url":"`+bad+`"}`), apps.CodeRefused, "only http and https")
	}
	refusedWith(t, v.ask("ui/open-link", `{"url":"https://`+strings.Repeat("a", 3000)+`"}`), apps.CodeInvalidParams, "URL")
	mu.Lock()
	consent = false
	mu.Unlock()
	refusedWith(t, v.ask("ui/open-link", `{"url":"https://example.com/"}`), apps.CodeRefused, "not opened")
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"https://modelcontextprotocol.io/docs", "https://example.com/"}, asked, "only http(s) links reach the user")
}

func TestBridgeDisplayMode(t *testing.T) {
	var told []string
	v := newView(t, &fakeServer{}, func(b *apps.Bridge) {
		b.Context = apps.HostContext{DisplayMode: "inline", AvailableDisplayModes: []string{"inline", "fullscreen", "pip"}}
		b.DisplayModeChanged = func(m string) { told = append(told, m) }
	})
	v.ready() // the view offers inline and fullscreen
	w := v.ask("ui/request-display-mode", `{"mode":"pip"}`)
	assert.JSONEq(t, `{"mode":"inline"}`, string(w.Result), "not offered by the view: the current mode")
	_ = v.b.Handle([]byte(`{"jsonrpc":"2.0","id":"r1","method":"ui/request-display-mode","params":{"mode":"fullscreen"}}`))
	first, second := v.next(), v.next()
	if first.Method == "" {
		first, second = second, first
	}
	assert.Equal(t, "ui/notifications/host-context-changed", first.Method)
	assert.JSONEq(t, `{"displayMode":"fullscreen"}`, string(first.Params))
	assert.JSONEq(t, `{"mode":"fullscreen"}`, string(second.Result))
	assert.JSONEq(t, `{"mode":"fullscreen"}`, string(v.ask("ui/request-display-mode", `{"mode":"bogus"}`).Result))
	assert.Equal(t, []string{"fullscreen"}, told)

	h := newView(t, &fakeServer{}, nil)
	h.ready()
	assert.JSONEq(t, `{"mode":"inline"}`, string(h.ask("ui/request-display-mode", `{"mode":"fullscreen"}`).Result), "the host offers only inline")
}

func TestBridgeSizeAndContext(t *testing.T) {
	var sizes [][2]int
	v := newView(t, &fakeServer{}, func(b *apps.Bridge) {
		b.Context = apps.HostContext{ContainerDimensions: &apps.Dimensions{MaxHeight: 600}}
		b.Resize = func(w, h int) { sizes = append(sizes, [2]int{w, h}) }
	})
	v.ready()
	for _, m := range []string{`{"height":300}`, `{"width":500,"height":9000}`, `{"height":-5}`, `{"height":1e300}`} {
		require.NoError(t, v.b.Handle([]byte(`{"jsonrpc":"2.0","method":"ui/notifications/size-changed","params":`+m+`}`)))
	}
	assert.Equal(t, [][2]int{{0, 300}, {500, 600}, {0, 600}}, sizes)
	require.NoError(t, v.b.SetContext(apps.HostContext{Theme: "light"}))
	w := v.next()
	assert.Equal(t, "ui/notifications/host-context-changed", w.Method)
	assert.JSONEq(t, `{"theme":"light"}`, string(w.Params))
}

// A view has a bounded number of requests in flight; Close asks it to
// tear down, cancels what it still runs, and refuses what comes after.
func TestBridgeInFlightAndClose(t *testing.T) {
	started := make(chan struct{}, 4)
	s := &fakeServer{tools: appTools(), call: func(ctx context.Context, _ string, _ json.RawMessage) (*mcp.CallToolResult, error) {
		started <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	v := newView(t, s, func(b *apps.Bridge) { b.MaxInFlight = 1 })
	v.ready()
	require.NoError(t, v.b.Handle([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"poll"}}`)))
	<-started
	refusedWith(t, v.ask("tools/call", `{"name":"poll"}`), apps.CodeRefused, "too many requests")

	closed := make(chan error, 1)
	go func() { closed <- v.b.Close(context.Background()) }()
	td := v.next()
	require.Equal(t, "ui/resource-teardown", td.Method)
	assert.JSONEq(t, `{}`, string(td.Params))
	require.NoError(t, v.b.Handle([]byte(`{"jsonrpc":"2.0","id":`+string(td.ID)+`,"result":{}}`)))
	require.NoError(t, <-closed)
	w := v.next()
	assert.Equal(t, "1", string(w.ID))
	require.NotNil(t, w.Error, "the call in flight was cancelled")
	require.ErrorIs(t, v.b.Handle([]byte(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)), apps.ErrClosed)
	require.ErrorIs(t, v.b.ToolInput(nil), apps.ErrClosed)
	require.NoError(t, v.b.Close(context.Background()), "idempotent")
}

func TestBridgeCloseUnanswered(t *testing.T) {
	v := newView(t, &fakeServer{}, func(b *apps.Bridge) { b.TeardownWait = 50 * time.Millisecond })
	v.ready()
	err := v.b.Close(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "did not answer")
	assert.Equal(t, "ui/resource-teardown", v.next().Method)

	// A view never initialized is not asked.
	n := newView(t, &fakeServer{}, nil)
	require.NoError(t, n.b.Close(context.Background()))
	n.none()
}

func TestBridgeTeardownRequested(t *testing.T) {
	asked := 0
	v := newView(t, &fakeServer{}, func(b *apps.Bridge) { b.TeardownRequested = func() { asked++ } })
	v.ready()
	require.NoError(t, v.b.Handle([]byte(`{"jsonrpc":"2.0","method":"ui/notifications/request-teardown","params":{}}`)))
	require.NoError(t, v.b.Handle([]byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hello"}}`)))
	assert.Equal(t, 1, asked)
	v.none()
}

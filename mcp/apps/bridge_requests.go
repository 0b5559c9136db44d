package apps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"git.rickub.com/bots-garden/mini-me/internal/jsonrpc"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// displayModes are the modes of the spec.
var displayModes = []string{"inline", "fullscreen", "pip"}

// request answers one request of the view.
func (b *Bridge) request(id jsonrpc.ID, method string, params json.RawMessage) error {
	b.Logger.Info("apps: view request", "method", method)
	switch method {
	case "ui/initialize":
		return b.initialize(id, params)
	case "ping":
		b.reply(id, struct{}{}, nil)
		return nil
	}
	b.mu.Lock()
	ready := b.ready
	b.mu.Unlock()
	var run func(ctx context.Context, params json.RawMessage) (any, *jsonrpc.Error)
	switch method {
	case "tools/call":
		run = b.callTool
	case "tools/list":
		run = b.listTools
	case "resources/read":
		run = b.readResource
	case "ui/message":
		run = b.message
	case "ui/update-model-context":
		run = b.modelContext
	case "ui/open-link":
		run = b.openLink
	case "ui/request-display-mode":
		res, e := b.displayMode(params)
		if e != nil {
			return b.fail(id, method, e.Code, e.Message)
		}
		b.reply(id, res, nil)
		return nil
	default:
		return b.fail(id, method, CodeUnknownMethod, "method not found")
	}
	if !ready {
		return b.fail(id, method, CodeRefused, "the view is not initialized")
	}
	select {
	case b.slots <- struct{}{}:
	default:
		return b.fail(id, method, CodeRefused, "too many requests in flight")
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		defer func() { <-b.slots }()
		ctx, cancel := context.WithTimeout(b.life, limit(b.CallTimeout, DefaultCallTimeout))
		defer cancel()
		res, e := run(ctx, params)
		if e != nil {
			_ = b.fail(id, method, e.Code, e.Message)
			return
		}
		b.reply(id, res, nil)
	}()
	return nil
}

// refused and badParams make the errors of a request.
func refused(format string, args ...any) *jsonrpc.Error {
	return &jsonrpc.Error{Code: CodeRefused, Message: fmt.Sprintf(format, args...)}
}

func badParams(format string, args ...any) *jsonrpc.Error {
	return &jsonrpc.Error{Code: CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// decode reads params into v, strictly: unknown fields are allowed (the
// dialect grows), wrong types are not.
func decode(params json.RawMessage, v any) *jsonrpc.Error {
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	if err := json.Unmarshal(params, v); err != nil {
		return badParams("invalid params")
	}
	return nil
}

func (b *Bridge) initialize(id jsonrpc.ID, params json.RawMessage) error {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
		AppCapabilities struct {
			AvailableDisplayModes []string `json:"availableDisplayModes"`
		} `json:"appCapabilities"`
	}
	if e := decode(params, &p); e != nil {
		return b.fail(id, "ui/initialize", e.Code, e.Message)
	}
	var modes []string
	for _, m := range p.AppCapabilities.AvailableDisplayModes {
		if slices.Contains(displayModes, m) && !slices.Contains(modes, m) {
			modes = append(modes, m)
		}
	}
	caps := map[string]any{
		"serverTools":     struct{}{},
		"serverResources": struct{}{},
		"logging":         struct{}{},
		"sandbox":         b.Sandbox,
	}
	if b.OpenLink != nil {
		caps["openLinks"] = struct{}{}
	}
	if b.Message != nil {
		caps["message"] = map[string]any{"text": struct{}{}}
	}
	if b.ModelContext != nil {
		caps["updateModelContext"] = map[string]any{"text": struct{}{}, "structuredContent": struct{}{}}
	}
	b.mu.Lock()
	b.modes = modes
	hc := b.Context
	b.mu.Unlock()
	info := b.HostInfo
	if info.Name == "" {
		info = mcp.Implementation{Name: "mini-me", Version: "0.1.0"}
	}
	// Only one dialect exists: a view asking for another is answered with
	// it, and decides whether it can go on.
	b.reply(id, map[string]any{"protocolVersion": ProtocolVersion, "hostInfo": info,
		"hostCapabilities": caps, "hostContext": hc}, nil)
	return nil
}

// serverTools lists the tools of the view's server the first time it is
// asked, and then keeps the list for the view's life: a tool the server
// adds later is refused, one it removes is refused by the server.
func (b *Bridge) serverTools(ctx context.Context) ([]mcp.Tool, *jsonrpc.Error) {
	b.mu.Lock()
	tools, listed := b.tools, b.listed
	b.mu.Unlock()
	if listed {
		return tools, nil
	}
	all, err := b.Server.ListTools(ctx)
	if err != nil {
		b.Logger.Warn("apps: listing the server's tools", "err", err)
		return nil, refused("the server's tools could not be listed")
	}
	b.mu.Lock()
	b.tools, b.listed = all, true
	b.mu.Unlock()
	return all, nil
}

// appTool finds name among the app-visible tools of the view's server.
func (b *Bridge) appTool(ctx context.Context, name string) (*mcp.Tool, *jsonrpc.Error) {
	tools, e := b.serverTools(ctx)
	if e != nil {
		return nil, e
	}
	i := slices.IndexFunc(tools, func(t mcp.Tool) bool { return t.Name == name })
	switch {
	case i < 0:
		return nil, refused("tool %.128q is not a tool of this view's server", name)
	case !ForApp(tools[i]):
		return nil, refused("tool %.128q is not visible to apps", name)
	}
	return &tools[i], nil
}

func (b *Bridge) callTool(ctx context.Context, params json.RawMessage) (any, *jsonrpc.Error) {
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if e := decode(params, &p); e != nil {
		return nil, e
	}
	if p.Name == "" || len(p.Name) > maxMethod {
		return nil, badParams("tools/call needs a tool name of at most %d bytes", maxMethod)
	}
	if len(p.Arguments) == 0 || string(p.Arguments) == "null" {
		p.Arguments = json.RawMessage("{}")
	} else if !isObjectJSON(p.Arguments) {
		return nil, badParams("tools/call arguments must be an object")
	}
	t, e := b.appTool(ctx, p.Name)
	if e != nil {
		return nil, e
	}
	if b.Policy == nil {
		return nil, refused("the host allows no tool calls from apps")
	}
	req := permission.Request{Server: b.ServerName, Tool: t.Name, Title: t.DisplayName(), Description: t.Description,
		InputSchema: t.InputSchema, Arguments: p.Arguments, Caller: "app " + b.ResourceURI}
	if a := t.Annotations; a != nil {
		req.Annotations = permission.Annotations{ReadOnlyHint: a.ReadOnlyHint, DestructiveHint: a.DestructiveHint,
			IdempotentHint: a.IdempotentHint, OpenWorldHint: a.OpenWorldHint}
	}
	d, err := b.Policy.Check(ctx, req)
	if err != nil || !d.Allowed() {
		reason := d.Reason
		if errors.Is(err, permission.ErrDeferred) || reason == "" {
			reason = "not allowed"
		}
		return nil, refused("tools/call %.128q denied: %.200s", p.Name, reason)
	}
	res, err := b.Server.CallTool(ctx, t.Name, p.Arguments)
	if err != nil {
		return nil, b.serverError("tools/call", err)
	}
	return b.bounded(res)
}

func (b *Bridge) listTools(ctx context.Context, params json.RawMessage) (any, *jsonrpc.Error) {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	if e := decode(params, &p); e != nil {
		return nil, e
	}
	tools, e := b.serverTools(ctx)
	if e != nil {
		return nil, e
	}
	out := []mcp.Tool{}
	for _, t := range tools {
		if ForApp(t) {
			out = append(out, t)
		}
	}
	return map[string]any{"tools": out}, nil
}

func (b *Bridge) readResource(ctx context.Context, params json.RawMessage) (any, *jsonrpc.Error) {
	var p struct {
		URI string `json:"uri"`
	}
	if e := decode(params, &p); e != nil {
		return nil, e
	}
	if p.URI == "" || len(p.URI) > maxURI {
		return nil, badParams("resources/read needs a URI of at most %d bytes", maxURI)
	}
	res, err := b.Server.ReadResource(ctx, p.URI)
	if err != nil {
		return nil, b.serverError("resources/read", err)
	}
	return b.bounded(res)
}

// serverError turns a failed call into the view's error: the server's
// own JSON-RPC error as it sent it, anything else (a transport's failure,
// which may name the host's endpoints) as a bare statement.
func (b *Bridge) serverError(method string, err error) *jsonrpc.Error {
	b.Logger.Warn("apps: "+method+" for the view failed", "err", err)
	var rpc *mcp.RPCError
	if errors.As(err, &rpc) {
		return &jsonrpc.Error{Code: rpc.Code, Message: truncate(rpc.Message, 200)}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: method + " failed"}
}

// bounded encodes a result for the view, refusing one over MaxResult.
func (b *Bridge) bounded(res any) (any, *jsonrpc.Error) {
	out, err := json.Marshal(res)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the result could not be encoded"}
	}
	if max := limit(b.MaxResult, DefaultMaxResult); len(out) > max {
		return nil, refused("the result is %d bytes, over the limit of %d", len(out), max)
	}
	return json.RawMessage(out), nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func isRuneStart(c byte) bool { return c&0xC0 != 0x80 }

// textBlocks reads content blocks a view sends for the conversation: an
// array, or one block as the spec's text shows; text blocks only, within
// maxText bytes in all.
func textBlocks(raw json.RawMessage, optional bool) ([]mcp.Content, *jsonrpc.Error) {
	t := strings.TrimSpace(string(raw))
	if t == "" || t == "null" {
		if optional {
			return nil, nil
		}
		return nil, badParams("content is missing")
	}
	var blocks []mcp.Content
	if strings.HasPrefix(t, "{") {
		blocks = make([]mcp.Content, 1)
		if json.Unmarshal(raw, &blocks[0]) != nil {
			return nil, badParams("content is not a content block")
		}
	} else if json.Unmarshal(raw, &blocks) != nil {
		return nil, badParams("content is not an array of content blocks")
	}
	n := 0
	out := make([]mcp.Content, 0, len(blocks))
	for _, c := range blocks {
		if c.Type != "text" {
			return nil, refused("only text content is accepted, not %.40q", c.Type)
		}
		n += len(c.Text)
		out = append(out, mcp.Content{Type: "text", Text: c.Text})
	}
	if n > maxText {
		return nil, refused("the text is %d bytes, over the limit of %d", n, maxText)
	}
	if len(out) == 0 && !optional {
		return nil, badParams("content is empty")
	}
	return out, nil
}

func (b *Bridge) message(ctx context.Context, params json.RawMessage) (any, *jsonrpc.Error) {
	var p struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if e := decode(params, &p); e != nil {
		return nil, e
	}
	if p.Role != "user" {
		return nil, badParams(`ui/message role must be "user"`)
	}
	content, e := textBlocks(p.Content, false)
	if e != nil {
		return nil, e
	}
	if b.Message == nil {
		return nil, refused("the host takes no messages from apps")
	}
	if err := b.Message(ctx, content); err != nil {
		b.Logger.Info("apps: ui/message refused by the host", "err", err)
		return nil, refused("the host refused the message")
	}
	return struct{}{}, nil
}

func (b *Bridge) modelContext(ctx context.Context, params json.RawMessage) (any, *jsonrpc.Error) {
	var p struct {
		Content           json.RawMessage `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	if e := decode(params, &p); e != nil {
		return nil, e
	}
	content, e := textBlocks(p.Content, true)
	if e != nil {
		return nil, e
	}
	sc := p.StructuredContent
	if string(sc) == "null" {
		sc = nil
	}
	if len(sc) > 0 && !isObjectJSON(sc) {
		return nil, badParams("structuredContent must be an object")
	}
	if len(sc) > maxText {
		return nil, refused("structuredContent is %d bytes, over the limit of %d", len(sc), maxText)
	}
	if b.ModelContext == nil {
		return nil, refused("the host takes no model context from apps")
	}
	if err := b.ModelContext(ctx, content, sc); err != nil {
		b.Logger.Info("apps: ui/update-model-context refused by the host", "err", err)
		return nil, refused("the host refused the model context")
	}
	return struct{}{}, nil
}

func (b *Bridge) openLink(ctx context.Context, params json.RawMessage) (any, *jsonrpc.Error) {
	var p struct {
		URL string `json:"url"`
	}
	if e := decode(params, &p); e != nil {
		return nil, e
	}
	u, err := url.Parse(p.URL)
	switch {
	case len(p.URL) > maxURI || err != nil:
		return nil, badParams("ui/open-link needs a URL of at most %d bytes", maxURI)
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.User != nil:
		return nil, refused("only http and https links without credentials are opened")
	case b.OpenLink == nil:
		return nil, refused("the host opens no links for apps")
	}
	if err := b.OpenLink(ctx, u); err != nil {
		b.Logger.Info("apps: ui/open-link refused", "err", err)
		return nil, refused("the link was not opened")
	}
	return struct{}{}, nil
}

// displayMode answers ui/request-display-mode: the mode switches only to
// one both sides offer, and the answer is always the resulting mode.
func (b *Bridge) displayMode(params json.RawMessage) (any, *jsonrpc.Error) {
	var p struct {
		Mode string `json:"mode"`
	}
	if e := decode(params, &p); e != nil {
		return nil, e
	}
	b.mu.Lock()
	if !b.ready {
		b.mu.Unlock()
		return nil, refused("the view is not initialized")
	}
	cur := b.Context.DisplayMode
	if cur == "" {
		cur = "inline"
	}
	host := b.Context.AvailableDisplayModes
	if host == nil {
		host = []string{"inline"}
	}
	switched := p.Mode != cur && slices.Contains(host, p.Mode) && slices.Contains(b.modes, p.Mode)
	if switched {
		b.Context.DisplayMode = p.Mode
		cur = p.Mode
	}
	b.mu.Unlock()
	if switched {
		_ = b.notify("ui/notifications/host-context-changed", HostContext{DisplayMode: cur})
		if b.DisplayModeChanged != nil {
			b.DisplayModeChanged(cur)
		}
	}
	return map[string]string{"mode": cur}, nil
}

// notification takes one notification of the view.
func (b *Bridge) notification(method string, params json.RawMessage) error {
	switch method {
	case "ui/notifications/initialized":
		b.mu.Lock()
		if b.ready {
			b.mu.Unlock()
			return nil
		}
		b.ready = true
		queue := b.queue
		b.queue = nil
		b.mu.Unlock()
		for _, m := range queue {
			b.send(m)
		}
		return nil
	case "ui/notifications/size-changed":
		var p struct {
			Width  *float64 `json:"width"`
			Height *float64 `json:"height"`
		}
		if decode(params, &p) != nil {
			return fmt.Errorf("%w: size-changed params", ErrBadMessage)
		}
		w, h := b.clamp(p.Width, p.Height)
		if b.Resize != nil && (w > 0 || h > 0) {
			b.Resize(w, h)
		}
		return nil
	case "notifications/message":
		var p struct {
			Level  string          `json:"level"`
			Logger string          `json:"logger"`
			Data   json.RawMessage `json:"data"`
		}
		if decode(params, &p) != nil {
			return fmt.Errorf("%w: log params", ErrBadMessage)
		}
		b.Logger.Info("apps: view log", "level", truncate(p.Level, 16), "logger", truncate(p.Logger, 64), "data", truncate(string(p.Data), 512))
		return nil
	case "ui/notifications/request-teardown":
		if b.TeardownRequested != nil {
			b.TeardownRequested()
		}
		return nil
	}
	b.Logger.Debug("apps: view notification ignored", "method", truncate(method, maxMethod))
	return nil
}

// clamp bounds a size the view asks for to the container's maximum, and
// to 0..100000 px.
func (b *Bridge) clamp(w, h *float64) (int, int) {
	b.mu.Lock()
	d := b.Context.ContainerDimensions
	b.mu.Unlock()
	px := func(v *float64, max int) int {
		if v == nil || *v != *v || *v <= 0 {
			return 0
		}
		n := int(min(*v, 100000))
		if max > 0 && n > max {
			n = max
		}
		return n
	}
	var mw, mh int
	if d != nil {
		mw, mh = d.MaxWidth, d.MaxHeight
	}
	return px(w, mw), px(h, mh)
}

package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/apps"
)

// maxViews bounds the views kept open; the oldest is torn down first.
const maxViews = 16

// view is one MCP App rendered in the page.
type view struct {
	id, server, uri string
	call            string // the model's call ID that opened it
	bridge          *apps.Bridge
	res             *apps.Resource
	granted         apps.Permissions
	csp             string

	mu      sync.Mutex
	seq     int
	asks    map[int]chan bool // the user's answers awaited (open-link, ui/message)
	asking  bool              // a ui/message waits for the user
	sandbox                   // the view's own origin
}

// viewSet holds the views.
type viewSet struct {
	mu      sync.Mutex
	byID    map[string]*view
	byCall  map[string]*view
	order   []string
	caches  map[string]*apps.Cache
	serving sync.WaitGroup // the views' sandbox servers
}

func (s *viewSet) init() {
	s.byID, s.byCall, s.caches = map[string]*view{}, map[string]*view{}, map[string]*apps.Cache{}
}

func (s *viewSet) get(id string) *view {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byID[id]
}

func randomID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// openView starts the view of a call: its bridge at once, so that the
// call's input and result wait for it; the resource is fetched beside the
// call, and the page told to frame the view once it is there.
func (h *Host) openView(e *agent.ToolView) {
	srv, ok := h.Servers.App(e.Server)
	if !ok {
		h.Log.Warn("web: no server for a view", "server", e.Server)
		return
	}
	v := &view{id: randomID(), server: e.Server, uri: e.ResourceURI, call: e.Call.ID, asks: map[int]chan bool{}}
	v.bridge = &apps.Bridge{
		Server: srv, ServerName: e.Server, ResourceURI: e.ResourceURI, Policy: h.AppPolicy,
		HostInfo: mcp.Implementation{Name: "mini-me-web", Version: "0.1.0"},
		Context: apps.HostContext{Theme: "light", Platform: "web", DisplayMode: "inline", AvailableDisplayModes: []string{"inline"},
			ContainerDimensions: &apps.Dimensions{MaxHeight: 800}, Locale: "en-US", UserAgent: "mini-me-web"},
		Logger: h.Log.With("view", v.id),
		Send: func(msg []byte) error {
			h.publish("view-msg", map[string]any{"id": v.id, "msg": json.RawMessage(msg)})
			return nil
		},
		Message: func(ctx context.Context, content []mcp.Content) error { return h.askMessage(ctx, v, joinText(content)) },
		ModelContext: func(_ context.Context, content []mcp.Content, structured json.RawMessage) error {
			text := joinText(content)
			if len(structured) > 0 {
				text += "\n" + string(structured)
			}
			h.inbox.SetContext(v.id, agent.Message{Role: agent.RoleUser, Server: e.Server,
				Parts: agent.Parts(fmt.Sprintf("[Context from the app %s of server %s, as data:]\n%s", e.ResourceURI, e.Server, text))})
			return nil
		},
		OpenLink: func(ctx context.Context, u *url.URL) error { return h.askLink(ctx, v, u) },
		Resize: func(_, height int) {
			h.publish("view-size", map[string]any{"id": v.id, "height": height})
		},
	}
	args := json.RawMessage(e.Call.Arguments)
	if !json.Valid(args) {
		args = nil
	}
	_ = v.bridge.ToolInput(args)
	h.views.add(h, v)
	h.runs.Add(1)
	go func() {
		defer h.runs.Done()
		ctx, cancel := context.WithTimeout(h.life, 30*time.Second)
		defer cancel()
		res, err := h.views.cache(e.Server, srv).Get(ctx, e.ResourceURI)
		if err != nil {
			h.Log.Warn("web: the view's resource is not shown", "uri", e.ResourceURI, "err", err)
			return
		}
		v.res = res
		v.granted = res.Meta.Permissions.Grant(apps.Permissions{}) // this host grants none
		policy, dropped := apps.ContentSecurityPolicyFor(res.Meta.CSP, h.Reach[e.Server])
		if len(dropped) > 0 {
			h.Log.Warn("web: CSP entries dropped", "uri", e.ResourceURI, "dropped", dropped)
		}
		v.csp = policy + "; frame-ancestors " + h.HostOrigin
		v.bridge.Sandbox = apps.Sandbox{CSP: apps.AppliedCSP(res.Meta.CSP, h.Reach[e.Server]), Permissions: v.granted}
		src, err := h.views.serve(h, v)
		if err != nil {
			h.Log.Warn("web: the view's sandbox is not served", "uri", e.ResourceURI, "err", err)
			return
		}
		h.Log.Info("web: view opened", "view", v.id, "uri", e.ResourceURI, "origin", v.origin, "csp", policy)
		h.publish("view", map[string]string{"id": v.id, "server": v.server, "uri": v.uri,
			"src": src, "origin": v.origin, "allow": v.granted.Allow()})
	}()
}

func joinText(content []mcp.Content) string {
	r := mcp.CallToolResult{Content: content}
	return r.Text()
}

// askLink asks the page's user whether to open u.
func (h *Host) askLink(ctx context.Context, v *view, u *url.URL) error {
	return h.ask(ctx, v, "link", map[string]any{"url": u.String()})
}

// errUnanswered refuses a view's ui/message while its last one still waits
// for the user: a view has one question on the page at a time.
var errUnanswered = errors.New("an earlier message of this app waits for the user")

// askMessage asks the page's user whether a view's ui/message goes to the
// model; if so, it joins the conversation, attributed to the view, and
// starts a run (or joins the run going on).
func (h *Host) askMessage(ctx context.Context, v *view, text string) error {
	v.mu.Lock()
	busy := v.asking
	v.asking = true
	v.mu.Unlock()
	if busy {
		return errUnanswered
	}
	err := h.ask(ctx, v, "app-message", map[string]any{"server": v.server, "uri": v.uri, "text": text})
	v.mu.Lock()
	v.asking = false
	v.mu.Unlock()
	if err != nil {
		return err
	}
	return h.Ask(agent.Message{Role: agent.RoleUser, Parts: agent.Parts(text), Server: v.server}, v.from())
}

// from names the view in the conversation.
func (v *view) from() string { return "app " + v.uri + " of server " + v.server }

// ask publishes a question about v to the pages, with what the question
// shows (fields), and waits for the user's answer (POST
// /view/{id}/answer) or the end of ctx.
func (h *Host) ask(ctx context.Context, v *view, typ string, fields map[string]any) error {
	v.mu.Lock()
	v.seq++
	seq, c := v.seq, make(chan bool, 1)
	v.asks[seq] = c
	v.mu.Unlock()
	defer func() {
		v.mu.Lock()
		delete(v.asks, seq)
		v.mu.Unlock()
	}()
	fields["id"], fields["seq"] = v.id, seq
	h.publish(typ, fields)
	select {
	case ok := <-c:
		if !ok {
			return errors.New("the user said no")
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// answer gives the user's answer to the question seq about v.
func (v *view) answer(seq int, ok bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if c := v.asks[seq]; c != nil {
		delete(v.asks, seq)
		c <- ok
	}
}

func (s *viewSet) cache(server string, srv apps.Server) *apps.Cache {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.caches[server]
	if c == nil {
		c = &apps.Cache{Server: srv}
		s.caches[server] = c
	}
	return c
}

// add keeps v, tearing the oldest view down past maxViews.
func (s *viewSet) add(h *Host, v *view) {
	s.mu.Lock()
	s.byID[v.id], s.byCall[v.call] = v, v
	s.order = append(s.order, v.id)
	var old *view
	if len(s.order) > maxViews {
		old = s.byID[s.order[0]]
		s.order = s.order[1:]
		delete(s.byID, old.id)
		delete(s.byCall, old.call)
	}
	s.mu.Unlock()
	if old != nil {
		h.runs.Add(1)
		go func() {
			defer h.runs.Done()
			old.close(h.life)
			h.publish("view-closed", map[string]string{"id": old.id})
		}()
	}
}

// finished gives the view of a call the call's outcome.
func (s *viewSet) finished(e *agent.ToolFinished) {
	s.mu.Lock()
	v := s.byCall[e.Call.ID]
	s.mu.Unlock()
	if v == nil {
		return
	}
	if e.Result != nil && (e.Status == agent.StatusOK || e.Status == agent.StatusToolError) {
		_ = v.bridge.ToolResult(e.Result)
	} else {
		_ = v.bridge.ToolCancelled(string(e.Status))
	}
}

func (s *viewSet) closeAll(ctx context.Context) {
	s.mu.Lock()
	all := make([]*view, 0, len(s.byID))
	for _, v := range s.byID {
		all = append(all, v)
	}
	s.byID, s.byCall = map[string]*view{}, map[string]*view{}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, v := range all {
		wg.Add(1)
		go func() { defer wg.Done(); v.close(ctx) }()
	}
	wg.Wait()
	s.serving.Wait()
}

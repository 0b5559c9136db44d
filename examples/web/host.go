package main

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"html/template"
	"io"
	"log/slog"
	"net/http"
	"sync"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/mcp/apps"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
	"git.rickub.com/bots-garden/mini-me/permission"
)

//go:embed static
var static embed.FS

var pages = template.Must(template.ParseFS(static, "static/index.html", "static/proxy.html"))

// maxBody bounds a request body from the page.
const maxBody = 1 << 20

// AppServers gives the MCP server a view belongs to, by its name in the
// configuration: the same connection the model's calls use.
type AppServers interface {
	App(server string) (apps.Server, bool)
}

// Host is the web host: one conversation, streamed to every page open on
// it, with its tool approvals and its MCP App views.
type Host struct {
	// Agent runs the conversation; its Policy must defer its approvals
	// (deferAll) for the page to answer them.
	Agent *agent.Agent
	// Servers gives each view its server.
	Servers AppServers
	// AppPolicy decides the tool calls views make.
	AppPolicy permission.Checker
	// HostOrigin is the page's origin, "http://127.0.0.1:port". Each view
	// gets an origin of its own, another port of 127.0.0.1 (see sandbox).
	HostOrigin string
	// Reach gives, by server name, the local networks the origins its
	// views declare may be on (apps.ContentSecurityPolicyFor): the
	// server's own network (apps.ServerNetworks). A server absent has
	// none: its views reach public origins only.
	Reach map[string]apps.Networks
	// Log receives the audit of the views and the host's errors.
	Log *slog.Logger

	life context.Context // ends with Close
	stop context.CancelFunc
	runs sync.WaitGroup

	mu      sync.Mutex
	msgs    []agent.Message
	running bool
	pending *agent.State
	answers map[string]permission.Decision
	inbox   agent.Inbox
	subs    map[chan event]struct{}
	views   viewSet
	ts      *toolset.Toolset
	about   about // set by NewHost
}

// event is one Server-Sent Event for the pages.
type event struct {
	Type string
	Data any
}

func (h *Host) init() {
	h.life, h.stop = context.WithCancel(context.Background())
	h.subs = map[chan event]struct{}{}
	h.views.init()
}

// Close stops the runs and tears the views down.
func (h *Host) Close(ctx context.Context) {
	h.stop()
	h.runs.Wait()
	h.views.closeAll(ctx)
}

// publish sends an event to every page. A page too slow to keep up is
// dropped (its stream ends; the browser reconnects).
func (h *Host) publish(typ string, data any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.subs {
		select {
		case c <- event{typ, data}:
		default:
			delete(h.subs, c)
			close(c)
		}
	}
}

// Handler serves the host origin: the page, its events and its requests.
func (h *Host) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		// The views' origins are ports of 127.0.0.1 opened as they come.
		w.Header().Set("Content-Security-Policy", "default-src 'self'; frame-src http://127.0.0.1:*; object-src 'none'; base-uri 'none'; frame-ancestors 'none'")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = pages.ExecuteTemplate(w, "index.html", h.about)
	})
	mux.HandleFunc("GET /static/{file}", func(w http.ResponseWriter, r *http.Request) {
		switch r.PathValue("file") {
		case "app.js", "app.css":
			http.ServeFileFS(w, r, static, "static/"+r.PathValue("file"))
		default:
			http.NotFound(w, r)
		}
	})
	mux.HandleFunc("GET /events", h.events)
	mux.HandleFunc("POST /chat", func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Text string }
		if !readJSON(w, r, &body) || body.Text == "" {
			return
		}
		if err := h.Ask(agent.UserMessage(body.Text), "user"); err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
		}
	})
	mux.HandleFunc("POST /approve", func(w http.ResponseWriter, r *http.Request) {
		var body struct{ ID, Verdict string }
		if !readJSON(w, r, &body) {
			return
		}
		if err := h.decide(body.ID, body.Verdict == "allow"); err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
		}
	})
	mux.HandleFunc("POST /view/{id}/rpc", func(w http.ResponseWriter, r *http.Request) {
		v := h.views.get(r.PathValue("id"))
		if v == nil {
			http.NotFound(w, r)
			return
		}
		msg, err := io.ReadAll(http.MaxBytesReader(w, r.Body, apps.DefaultMaxMessageSize))
		if err != nil {
			http.Error(w, "message too large", http.StatusRequestEntityTooLarge)
			return
		}
		if err := v.bridge.Handle(msg); err != nil {
			h.Log.Info("web: view message", "view", v.id, "err", err)
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /view/{id}/html", func(w http.ResponseWriter, r *http.Request) {
		v := h.views.get(r.PathValue("id"))
		if v == nil || v.res == nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"html": string(v.res.HTML), "allow": v.granted.Allow(), "permissions": v.granted})
	})
	mux.HandleFunc("POST /view/{id}/answer", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Seq int
			OK  bool
		}
		v := h.views.get(r.PathValue("id"))
		if v == nil {
			http.NotFound(w, r)
			return
		}
		if readJSON(w, r, &body) {
			v.answer(body.Seq, body.OK)
		}
	})
	return h.guard(mux)
}

// guard refuses what no page of this host sends: a request for another
// host name (DNS rebinding), and a POST from another origin (a page
// elsewhere submitting a form to 127.0.0.1). No response of the host's
// origin may be framed, so that no site can overlay the page and have
// the user click its Allow buttons (clickjacking).
func (h *Host) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("Content-Security-Policy", "frame-ancestors 'none'")
		if "http://"+r.Host != h.HostOrigin || r.Method == http.MethodPost && r.Header.Get("Origin") != h.HostOrigin {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody)).Decode(v); err != nil {
		http.Error(w, "bad request body", http.StatusBadRequest)
		return false
	}
	return true
}

// events streams the conversation's events to one page.
func (h *Host) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	c := make(chan event, 1024)
	h.mu.Lock()
	h.subs[c] = struct{}{}
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		if _, ok := h.subs[c]; ok {
			delete(h.subs, c)
			close(c)
		}
		h.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = io.WriteString(w, ": hello\n\n")
	fl.Flush()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-h.life.Done():
			return
		case e, ok := <-c:
			if !ok {
				return
			}
			b, err := json.Marshal(e.Data)
			if err != nil {
				h.Log.Error("web: encoding an event", "err", err)
				continue
			}
			if _, err := io.WriteString(w, "event: "+e.Type+"\ndata: "+string(b)+"\n\n"); err != nil {
				return
			}
			fl.Flush()
		}
	}
}

// errBusy refuses a question while a run goes on or waits for approvals.
var errBusy = errors.New("a run is going on")

// Ask adds m to the conversation and starts a run. from is "user", or the
// view a ui/message came from (once the user let it through, askMessage).
// While a run goes on, a view's message is posted to the run's Inbox
// instead; the user's is refused.
func (h *Host) Ask(m agent.Message, from string) error {
	h.mu.Lock()
	if h.running || h.pending != nil {
		h.mu.Unlock()
		if from == "user" {
			return errBusy
		}
		h.inbox.Post(m)
		h.publish("user", map[string]string{"text": m.Text(), "from": from})
		return nil
	}
	h.running = true
	msgs := append(append(h.msgs, h.inbox.Take()...), m)
	h.mu.Unlock()
	h.publish("user", map[string]string{"text": m.Text(), "from": from})
	h.start(func(ctx context.Context, on func(agent.Event)) (agent.Result, error) {
		return h.Agent.RunStream(ctx, msgs, on)
	})
	return nil
}

// decide records the page's decision about a pending call; the run
// resumes once every pending call has one.
func (h *Host) decide(id string, allow bool) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := h.pending
	if st == nil {
		return errors.New("no call waits for approval")
	}
	known := false
	for _, p := range st.Pending {
		known = known || p.ID == id
	}
	if !known {
		return errors.New("unknown call")
	}
	d := permission.Decision{Verdict: permission.Deny, Reason: "the user said no"}
	if allow {
		d = permission.Decision{Verdict: permission.AllowOnce}
	}
	h.answers[id] = d
	if len(h.answers) < len(st.Pending) {
		return nil
	}
	answers := h.answers
	h.pending, h.answers, h.running = nil, nil, true
	h.start(func(ctx context.Context, on func(agent.Event)) (agent.Result, error) {
		return h.Agent.ResumeStream(ctx, st, answers, on)
	})
	return nil
}

// start runs a run (a new one, or a resumed one) on a goroutine of the
// host. h.running is set.
func (h *Host) start(run func(context.Context, func(agent.Event)) (agent.Result, error)) {
	h.runs.Add(1)
	go func() {
		defer h.runs.Done()
		h.publish("running", struct{}{})
		res, err := run(agent.WithInbox(h.life, &h.inbox), h.onEvent)
		h.mu.Lock()
		h.msgs, h.running = res.Messages, false
		if res.Stop == agent.StopPendingApproval && res.Pending != nil {
			h.pending, h.answers = res.Pending, map[string]permission.Decision{}
		}
		paused := h.pending != nil
		var late []agent.Message
		if !paused {
			late = h.inbox.Take()
		}
		h.mu.Unlock()
		if paused {
			for _, p := range res.Pending.Pending {
				h.publish("approval", approval(p.ID, p.Request))
			}
			return
		}
		done := map[string]string{"answer": res.Answer}
		if err != nil {
			done["error"] = err.Error()
		}
		h.publish("done", done)
		// A view spoke once the run had ended: carry on with it.
		if len(late) > 0 && h.life.Err() == nil {
			h.mu.Lock()
			h.running = true
			msgs := append(h.msgs, late...)
			h.mu.Unlock()
			h.start(func(ctx context.Context, on func(agent.Event)) (agent.Result, error) {
				return h.Agent.RunStream(ctx, msgs, on)
			})
		}
	}()
}

// onEvent renders the run's events for the pages, and opens the views.
func (h *Host) onEvent(e agent.Event) {
	switch e := e.(type) {
	case *agent.TextDelta:
		if e.Reasoning != "" { // shown apart from the answer
			h.publish("reasoning", map[string]string{"text": e.Reasoning})
		}
		if e.Text != "" {
			h.publish("delta", map[string]string{"text": e.Text})
		}
	case *agent.ToolCallProposed:
		h.publish("tool", map[string]string{"id": e.Call.ID, "name": e.Call.Name, "status": "proposed"})
	case *agent.ToolStarted:
		h.publish("tool", map[string]string{"id": e.Call.ID, "name": e.Call.Name, "status": "running"})
	case *agent.ToolView:
		h.openView(e)
	case *agent.ToolFinished:
		// What the tool returned, if it ran; otherwise the page says why
		// from the status, for the user, not the text meant for the model
		// ("Do not retry this call...").
		out := e.Output
		if e.Status != agent.StatusOK && e.Status != agent.StatusToolError {
			out = ""
		}
		if len(out) > 300 {
			out = out[:300] + "…"
		}
		h.publish("tool", map[string]string{"id": e.Call.ID, "name": e.Call.Name, "status": string(e.Status), "output": out})
		h.views.finished(e)
	}
}

// Package mcptest is an in-process MCP server for tests and benchmarks. It
// speaks the stateless 2026-07-28 revision, the initialize-based 2025-11-25
// one, or both, over Streamable HTTP, answers with JSON or SSE, and can
// misbehave on purpose through Intercept or a Fault (fault.go holds the
// library of misbehaviours: resets, truncations, trickles, floods, lost
// sessions, wrong ids and content types, proxies' error pages...).
package mcptest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"time"

	"git.rickub.com/bots-garden/mini-me/internal/jsonrpc"
)

// Modern and Legacy are the versions the server speaks.
const (
	Modern = "2026-07-28"
	Legacy = "2025-11-25"
)

// Tool is a tool the server offers.
type Tool struct {
	// Def is the tool definition as listed; its "name" is the tool's name.
	Def json.RawMessage
	// Call runs the tool. send delivers a notification on the request's
	// stream (SSE mode only). The returned value is the result object.
	Call func(ctx context.Context, args json.RawMessage, send func(method string, params any)) (any, error)
	// Task, when set with Server.Tasks, runs the tool as a task when the
	// call asks for one (see Tasks); its value is the result. A call that
	// does not ask gets Call, or an error when Call is nil.
	Task func(ctx context.Context, args json.RawMessage, run *TaskRun) (any, error)
}

// Request is what the server saw of one POST.
type Request struct {
	// Method is the JSON-RPC method; empty for a response.
	Method string
	// Header is the HTTP request's header.
	Header http.Header
	// Body is the raw request body.
	Body []byte
}

// Server is an MCP server. Configure it before Start; it is safe for
// concurrent use after.
type Server struct {
	// Versions lists the versions spoken: Modern, Legacy or both.
	Versions []string
	// SSE answers requests with text/event-stream instead of JSON.
	SSE bool
	// Tools are offered in order; PageSize > 0 paginates tools/list.
	Tools []Tool
	// PageSize is the number of tools per tools/list page; 0 lists them all.
	PageSize int
	// TTL is the lifetime (ttlMs) given with tools/list; 0 gives none.
	TTL time.Duration
	// Skills, when set, serves skills (SEP-2640) beside the tools.
	Skills *Skills
	// Catalog, when set, serves prompts, resources and resource templates
	// beside the tools.
	Catalog *Catalog
	// Intercept, when set, sees every POST first (with its decoded
	// message) and may answer it itself by returning true.
	Intercept func(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) bool
	// Fault, when set, misbehaves on the requests it matches (see Fault).
	Fault *Fault
	// Tasks, when set, serves tasks in both eras (see Tasks).
	Tasks *Tasks
	// Instructions are sent in the initialize and discover results.
	Instructions string

	mu       sync.Mutex
	sessions map[string]bool
	requests []Request
	deletes  int
	// faultHits counts the requests Fault hit.
	faultHits int
	// listeners are the open subscriptions/listen streams.
	listeners []*listener
	srv       *httptest.Server
}

// Start serves on 127.0.0.1 and returns the endpoint URL. Close stops it.
func (s *Server) Start() string {
	s.sessions = map[string]bool{}
	if s.Tasks != nil {
		s.Tasks.start()
	}
	s.srv = httptest.NewServer(s)
	return s.srv.URL + "/mcp"
}

// Close stops the server and closes its connections.
func (s *Server) Close() {
	if s.Tasks != nil {
		s.Tasks.end() // ends the tasks and the tasks/result streams
	}
	s.srv.CloseClientConnections()
	s.srv.Close()
	if s.Tasks != nil {
		s.Tasks.stop()
	}
}

// ExpireSessions forgets every legacy session, as a restarted server would.
func (s *Server) ExpireSessions() {
	s.mu.Lock()
	clear(s.sessions)
	s.mu.Unlock()
}

// Requests returns the POSTs seen so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// SetTools replaces the tools offered while the server runs; a tool's
// send can then tell the client with notifications/tools/list_changed.
func (s *Server) SetTools(tools []Tool) {
	s.mu.Lock()
	s.Tools = tools
	s.mu.Unlock()
}

func (s *Server) tools() []Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Tools
}

// Deletes returns how many session DELETEs arrived.
func (s *Server) Deletes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.deletes
}

func (s *Server) speaks(v string) bool { return slices.Contains(s.Versions, v) }

// ServeHTTP implements the Streamable HTTP transport.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodDelete:
		s.mu.Lock()
		s.deletes++
		delete(s.sessions, r.Header.Get("Mcp-Session-Id"))
		s.mu.Unlock()
		w.WriteHeader(http.StatusOK)
		return
	case http.MethodPost:
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, msg, ok := readMessage(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, Request{Method: msg.Method, Header: r.Header.Clone(), Body: body})
	s.mu.Unlock()
	if s.Intercept != nil && s.Intercept(w, r, msg) {
		return
	}
	if s.fault(w, r, msg) {
		return
	}
	if msg.Method == "" || len(msg.ID) == 0 {
		if msg.Method == "" && s.Tasks != nil {
			s.Tasks.respond(msg)
		}
		w.WriteHeader(http.StatusAccepted) // responses and notifications
		return
	}
	modern := r.Header.Get("Mcp-Protocol-Version") == Modern || isModernMeta(msg.Params)
	if modern && !s.speaks(Modern) {
		WriteError(w, http.StatusBadRequest, nil, -32000, "Bad Request: Server not initialized")
		return
	}
	if !modern && msg.Method != "initialize" {
		s.mu.Lock()
		ok := s.sessions[r.Header.Get("Mcp-Session-Id")]
		s.mu.Unlock()
		if !ok {
			WriteError(w, http.StatusNotFound, nil, -32001, "Session not found")
			return
		}
	}
	if modern && msg.Method == "subscriptions/listen" {
		s.listen(w, r, msg)
		return
	}
	if s.Tasks != nil && s.Tasks.handle(w, r, msg, modern) {
		return
	}
	s.answer(w, r, msg, modern)
}

// NotifyToolsChanged sends notifications/tools/list_changed on every open
// subscriptions/listen stream, as a modern server does when its tools
// change. It returns how many streams it reached.
func (s *Server) NotifyToolsChanged() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.notifyListeners("notifications/tools/list_changed")
}

// listener is one open listen stream.
type listener struct {
	ch chan note
	// lists is false for a stream that asked only for resource updates;
	// uris are the resources it subscribed to.
	lists bool
	uris  []string
}

// note is a notification for a listen stream; uri is set for
// notifications/resources/updated.
type note struct{ method, uri string }

// notifyListeners sends a list notification on every open listen stream
// that asked for list changes. s.mu is held.
func (s *Server) notifyListeners(method string) int {
	n := 0
	for _, l := range s.listeners {
		if l.lists {
			l.ch <- note{method: method}
			n++
		}
	}
	return n
}

// NotifyResourceUpdated sends notifications/resources/updated for uri on
// every listen stream subscribed to it (resourceSubscriptions); it returns
// how many it reached.
func (s *Server) NotifyResourceUpdated(uri string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, l := range s.listeners {
		if slices.Contains(l.uris, uri) {
			l.ch <- note{method: "notifications/resources/updated", uri: uri}
			n++
		}
	}
	return n
}

// Listeners returns how many subscriptions/listen streams are open.
func (s *Server) Listeners() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.listeners)
}

// listen serves a subscriptions/listen stream until the client leaves.
func (s *Server) listen(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) {
	var p struct {
		Notifications struct {
			Tools     bool     `json:"toolsListChanged"`
			Resources bool     `json:"resourcesListChanged"`
			Prompts   bool     `json:"promptsListChanged"`
			URIs      []string `json:"resourceSubscriptions"`
		} `json:"notifications"`
	}
	_ = json.Unmarshal(msg.Params, &p)
	f := p.Notifications
	l := &listener{ch: make(chan note, 8), lists: f.Tools || f.Resources || f.Prompts || len(f.URIs) == 0, uris: f.URIs}
	s.mu.Lock()
	s.listeners = append(s.listeners, l)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.listeners = slices.DeleteFunc(s.listeners, func(x *listener) bool { return x == l })
		s.mu.Unlock()
	}()
	out := newSSE(w)
	meta := map[string]any{"io.modelcontextprotocol/subscriptionId": msg.ID}
	out.send("notifications/subscriptions/acknowledged", map[string]any{"_meta": meta, "notifications": map[string]any{"toolsListChanged": true}})
	for {
		select {
		case n := <-l.ch:
			params := map[string]any{"_meta": meta}
			if n.uri != "" {
				params["uri"] = n.uri
			}
			out.send(n.method, params)
		case <-r.Context().Done():
			return
		}
	}
}

func isModernMeta(params json.RawMessage) bool {
	var p struct {
		Meta struct {
			Version string `json:"io.modelcontextprotocol/protocolVersion"`
		} `json:"_meta"`
	}
	return json.Unmarshal(params, &p) == nil && p.Meta.Version != ""
}

func (s *Server) answer(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message, modern bool) {
	var out stream
	if s.SSE {
		out = newSSE(w)
	} else {
		out = &jsonOut{w: w}
	}
	res, rerr := s.handle(r, msg, modern, out.send)
	if msg.Method == "initialize" && rerr == nil {
		id := newSessionID()
		s.mu.Lock()
		s.sessions[id] = true
		s.mu.Unlock()
		w.Header().Set("Mcp-Session-Id", id)
	}
	out.reply(msg.ID, res, rerr)
}

func (s *Server) handle(r *http.Request, msg *jsonrpc.Message, modern bool, send func(string, any)) (any, *jsonrpc.Error) {
	switch msg.Method {
	case "server/discover":
		if !modern {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found"}
		}
		return map[string]any{
			"supportedVersions": s.Versions,
			"capabilities":      s.capabilities(modern),
			"_meta":             map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "mcptest", "version": "1.0.0"}},
			"ttlMs":             0, "cacheScope": "public",
			"instructions": s.Instructions,
		}, nil
	case "initialize":
		if !s.speaks(Legacy) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found"}
		}
		return map[string]any{
			"protocolVersion": Legacy,
			"capabilities":    s.capabilities(modern),
			"serverInfo":      map[string]any{"name": "mcptest", "version": "1.0.0"},
			"instructions":    s.Instructions,
		}, nil
	case "ping":
		return struct{}{}, nil
	case "tools/list":
		return s.listTools(msg.Params)
	case "tools/call":
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal(msg.Params, &p); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		}
		for _, t := range s.tools() {
			if toolName(t.Def) == p.Name {
				if t.Task != nil && s.Tasks != nil && wantsTask(msg.Params, modern) {
					return s.Tasks.create(modern, p.Arguments, t.Task), nil
				}
				if t.Call == nil {
					if modern {
						return nil, &jsonrpc.Error{Code: jsonrpc.CodeMissingCapability, Message: "tool " + p.Name + " runs only as a task"}
					}
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Tool " + p.Name + " requires task augmentation"}
				}
				res, err := t.Call(r.Context(), p.Arguments, send)
				if err != nil {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
				}
				return res, nil
			}
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown tool " + p.Name}
	}
	if s.Skills != nil {
		if res, err, ok := s.Skills.handle(msg.Method, msg.Params); ok {
			return res, err
		}
	}
	if s.Catalog != nil {
		if res, err, ok := s.Catalog.handle(msg.Method, msg.Params); ok {
			return res, err
		}
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + msg.Method}
}

func (s *Server) listTools(params json.RawMessage) (any, *jsonrpc.Error) {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	_ = json.Unmarshal(params, &p)
	start := 0
	if p.Cursor != nil {
		if _, err := fmt.Sscanf(*p.Cursor, "c%d", &start); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad cursor"}
		}
	}
	tools := s.tools()
	end := len(tools)
	if s.PageSize > 0 && start+s.PageSize < end {
		end = start + s.PageSize
	}
	defs := make([]json.RawMessage, 0, end-start)
	for _, t := range tools[min(start, end):end] {
		defs = append(defs, t.Def)
	}
	res := map[string]any{"tools": defs}
	if s.TTL > 0 {
		res["ttlMs"], res["cacheScope"] = s.TTL.Milliseconds(), "public"
	}
	if end < len(tools) {
		res["nextCursor"] = fmt.Sprintf("c%d", end)
	}
	return res, nil
}

func toolName(def json.RawMessage) string {
	var d struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(def, &d)
	return d.Name
}

func newSessionID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// stream is where an answer goes: one JSON body or an SSE stream.
type stream interface {
	send(method string, params any)
	reply(id jsonrpc.ID, res any, err *jsonrpc.Error)
}

type jsonOut struct{ w http.ResponseWriter }

func (j *jsonOut) send(string, any) {}

func (j *jsonOut) reply(id jsonrpc.ID, res any, err *jsonrpc.Error) {
	j.w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(j.w).Encode(jsonrpc.Response{JSONRPC: jsonrpc.Version, ID: id, Result: res, Error: err})
}

type sseOut struct {
	w       http.ResponseWriter
	started bool
}

func newSSE(w http.ResponseWriter) *sseOut { return &sseOut{w: w} }

func (o *sseOut) event(v any) {
	if !o.started {
		o.w.Header().Set("Content-Type", "text/event-stream")
		o.w.WriteHeader(http.StatusOK)
		o.started = true
	}
	b, _ := json.Marshal(v)
	var buf bytes.Buffer
	buf.WriteString("event: message\ndata: ")
	buf.Write(b)
	buf.WriteString("\n\n")
	_, _ = o.w.Write(buf.Bytes())
	if f, ok := o.w.(http.Flusher); ok {
		f.Flush()
	}
}

func (o *sseOut) send(method string, params any) {
	o.event(jsonrpc.Request{JSONRPC: jsonrpc.Version, Method: method, Params: params})
}

func (o *sseOut) reply(id jsonrpc.ID, res any, err *jsonrpc.Error) {
	o.event(jsonrpc.Response{JSONRPC: jsonrpc.Version, ID: id, Result: res, Error: err})
}

// readMessage reads a POSTed JSON-RPC message, its result kept raw; it
// answers a parse error itself and then reports false.
func readMessage(w http.ResponseWriter, r *http.Request) ([]byte, *jsonrpc.Message, bool) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, nil, false
	}
	var raw json.RawMessage
	msg := &jsonrpc.Message{Result: &raw}
	if err := json.Unmarshal(body, msg); err != nil {
		WriteError(w, http.StatusBadRequest, nil, jsonrpc.CodeParseError, "parse error")
		return nil, nil, false
	}
	return body, msg, true
}

// WriteError answers with a JSON-RPC error body and an HTTP status.
func WriteError(w http.ResponseWriter, status int, id jsonrpc.ID, code int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(jsonrpc.Response{JSONRPC: jsonrpc.Version, ID: id, Error: &jsonrpc.Error{Code: code, Message: message}})
}

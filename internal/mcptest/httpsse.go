package mcptest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"

	"git.rickub.com/bots-garden/mini-me/internal/jsonrpc"
)

// HTTPSSEServer speaks the deprecated HTTP+SSE transport of 2024-11-05: a
// GET opens the event stream, whose first event names the URL to POST
// messages to; every answer travels on the stream. Its Streamable HTTP
// endpoint refuses POSTs with 405, as such servers do.
type HTTPSSEServer struct {
	// Tools are offered as by Server.
	Tools []Tool

	mu      sync.Mutex
	streams map[string]chan []byte
	srv     *httptest.Server
	inner   Server
}

// Start serves on 127.0.0.1 and returns the URL of the event stream.
func (s *HTTPSSEServer) Start() string {
	s.streams = map[string]chan []byte{}
	s.inner = Server{Versions: []string{"2024-11-05"}, Tools: s.Tools}
	s.srv = httptest.NewServer(s)
	return s.srv.URL + "/sse"
}

// Close stops the server.
func (s *HTTPSSEServer) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// ServeHTTP implements the transport.
func (s *HTTPSSEServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/sse":
		s.stream(w, r)
	case r.Method == http.MethodPost && r.URL.Path == "/messages":
		s.post(w, r)
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

func (s *HTTPSSEServer) stream(w http.ResponseWriter, r *http.Request) {
	id := newSessionID()
	ch := make(chan []byte, 16)
	s.mu.Lock()
	s.streams[id] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.streams, id)
		s.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "event: endpoint\ndata: /messages?session=%s\n\n", id)
	w.(http.Flusher).Flush()
	for {
		select {
		case msg := <-ch:
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", msg)
			w.(http.Flusher).Flush()
		case <-r.Context().Done():
			return
		}
	}
}

func (s *HTTPSSEServer) post(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	ch := s.streams[r.URL.Query().Get("session")]
	s.mu.Unlock()
	if ch == nil {
		http.Error(w, "unknown session", http.StatusNotFound)
		return
	}
	_, msg, ok := readMessage(w, r)
	if !ok {
		return
	}
	w.WriteHeader(http.StatusAccepted)
	if msg.Method == "" || len(msg.ID) == 0 {
		return
	}
	var res any
	var rerr *jsonrpc.Error
	if msg.Method == "initialize" {
		res = map[string]any{
			"protocolVersion": "2024-11-05",
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]any{"name": "mcptest-httpsse", "version": "1.0.0"},
		}
	} else {
		res, rerr = s.inner.handle(r, msg, false, func(string, any) {})
	}
	out, _ := json.Marshal(jsonrpc.Response{JSONRPC: jsonrpc.Version, ID: msg.ID, Result: res, Error: rerr})
	ch <- out
}

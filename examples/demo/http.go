package demo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"git.rickub.com/bots-garden/mini-me/internal/jsonrpc"
)

// Serve serves s over Streamable HTTP on 127.0.0.1, on a port of the
// system's choosing, and returns its endpoint URL. stop closes the
// listener and the connections, giving those busy up to two seconds to
// finish.
func Serve(s *Server) (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln) // returns http.ErrServerClosed once stopped
	}()
	return "http://" + ln.Addr().String() + "/mcp", func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if srv.Shutdown(ctx) != nil {
			_ = srv.Close()
		}
		<-done
	}, nil
}

// ServeHTTP implements the Streamable HTTP transport, answering every
// request with one JSON body. A modern request is stateless; a legacy one
// needs the session that initialize opened (Mcp-Session-Id), which a
// DELETE ends. There is no GET stream: the server never sends anything
// unasked.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
	case http.MethodDelete:
		s.mu.Lock()
		delete(s.sessions, r.Header.Get("Mcp-Session-Id"))
		s.mu.Unlock()
		w.WriteHeader(http.StatusOK)
		return
	default:
		w.Header().Set("Allow", "POST, DELETE")
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxMessageSize))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeJSON(w, http.StatusRequestEntityTooLarge, response(nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "message too large"}))
		}
		return
	}
	var msg jsonrpc.Message
	if err := json.Unmarshal(body, &msg); err != nil {
		writeJSON(w, http.StatusBadRequest, response(nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "parse error"}))
		return
	}
	if msg.Method == "" || len(msg.ID) == 0 {
		w.WriteHeader(http.StatusAccepted) // a notification or a response: nothing to answer
		return
	}
	modern, rerr := s.requestEra(msg.Params)
	if rerr != nil {
		writeJSON(w, http.StatusBadRequest, response(msg.ID, nil, rerr))
		return
	}
	if !modern && msg.Method != "initialize" {
		sid := r.Header.Get("Mcp-Session-Id")
		s.mu.Lock()
		known := s.sessions[sid]
		s.mu.Unlock()
		switch {
		case sid == "":
			writeJSON(w, http.StatusBadRequest, response(msg.ID, nil, &jsonrpc.Error{Code: -32000, Message: "Bad Request: no valid session ID"}))
			return
		case !known:
			writeJSON(w, http.StatusNotFound, response(msg.ID, nil, &jsonrpc.Error{Code: -32001, Message: "Session not found"}))
			return
		}
	}
	res, rerr := s.answer(r.Context(), msg.Method, msg.Params, modern)
	if msg.Method == "initialize" && rerr == nil {
		w.Header().Set("Mcp-Session-Id", s.newSession())
	}
	status := http.StatusOK
	if modern && rerr != nil {
		// Modern servers carry protocol errors in the HTTP status too.
		status = http.StatusBadRequest
		if rerr.Code == jsonrpc.CodeMethodNotFound {
			status = http.StatusNotFound
		}
	}
	writeJSON(w, status, response(msg.ID, res, rerr))
}

func (s *Server) newSession() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	id := hex.EncodeToString(b)
	s.mu.Lock()
	if s.sessions == nil {
		s.sessions = map[string]bool{}
	}
	s.sessions[id] = true
	s.mu.Unlock()
	return id
}

func writeJSON(w http.ResponseWriter, status int, resp jsonrpc.Response) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(resp)
}

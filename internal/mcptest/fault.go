package mcptest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"git.rickub.com/bots-garden/mini-me/internal/jsonrpc"
)

// Fault is a misbehaviour of a Server: it answers the requests it matches
// in place of the server, in a broken way. A Server checks its Fault after
// Intercept and before its own checks (session, era).
type Fault struct {
	// Match picks the requests hit; nil hits every request.
	Match func(*jsonrpc.Message) bool
	// Times is how many matching requests are hit, the first ones; 0 hits
	// them all.
	Times int
	// Hit, when set, receives a value (without blocking) each time the
	// fault hits, before Hold is waited on.
	Hit chan<- struct{}
	// Hold, when set, holds each hit request until it is closed or the
	// client goes away: a test acts while the faulty request is in flight.
	Hold <-chan struct{}
	// Do answers the hit request. run runs it as the server would, its
	// tool included, and returns the response as one JSON line: a fault
	// that breaks the answer after the work was done calls it first.
	Do DoFunc
}

// DoFunc answers a request a Fault hit. run runs the request as the server
// would, its tool included, and returns the response as one JSON line.
type DoFunc func(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message, run func() []byte)

// OnMethod matches the requests of method.
func OnMethod(method string) func(*jsonrpc.Message) bool {
	return func(m *jsonrpc.Message) bool { return m.Method == method }
}

// fault applies s.Fault to a request if it matches, and reports whether it
// answered.
func (s *Server) fault(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) bool {
	f := s.Fault
	if f == nil || f.Match != nil && !f.Match(msg) {
		return false
	}
	s.mu.Lock()
	hit := f.Times == 0 || s.faultHits < f.Times
	if hit {
		s.faultHits++
	}
	s.mu.Unlock()
	if !hit {
		return false
	}
	if f.Hit != nil {
		select {
		case f.Hit <- struct{}{}:
		default:
		}
	}
	if f.Hold != nil {
		select {
		case <-f.Hold:
		case <-r.Context().Done():
			return true
		}
	}
	run := func() []byte {
		modern := r.Header.Get("Mcp-Protocol-Version") == Modern || isModernMeta(msg.Params)
		res, rerr := s.handle(r, msg, modern, func(string, any) {})
		b, _ := json.Marshal(jsonrpc.Response{JSONRPC: jsonrpc.Version, ID: msg.ID, Result: res, Error: rerr})
		return b
	}
	f.Do(w, r, msg, run)
	return true
}

// FaultHits returns how many requests the Fault hit.
func (s *Server) FaultHits() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.faultHits
}

// The faults below are Do functions for a Fault.

// Reset starts a JSON answer (the tool has run) and resets the
// connection halfway through its body.
func Reset(w http.ResponseWriter, _ *http.Request, _ *jsonrpc.Message, run func() []byte) {
	body := run()
	head := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
	hangUp(w, true, append([]byte(head), body[:len(body)/2]...))
}

// TruncateByLength sends half of the JSON answer (the tool has run) under
// a Content-Length for all of it, then closes the connection.
func TruncateByLength(w http.ResponseWriter, _ *http.Request, _ *jsonrpc.Message, run func() []byte) {
	body := run()
	head := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
	hangUp(w, false, append([]byte(head), body[:len(body)/2]...))
}

// TruncateByEOF sends half of the JSON answer (the tool has run) as a
// complete HTTP body: the HTTP exchange is sound, the JSON is cut.
func TruncateByEOF(w http.ResponseWriter, _ *http.Request, _ *jsonrpc.Message, run func() []byte) {
	body := run()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body[:len(body)/2])
}

// TruncateInSSE sends an SSE event whose data is half of the answer (the
// tool has run), then ends the stream.
func TruncateInSSE(w http.ResponseWriter, _ *http.Request, _ *jsonrpc.Message, run func() []byte) {
	body := run()
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "event: message\ndata: %s\n\n", body[:len(body)/2])
}

// KillMidSSE runs the request, sends two progress notifications on an
// SSE stream and kills the connection before the response.
func KillMidSSE(w http.ResponseWriter, _ *http.Request, msg *jsonrpc.Message, run func() []byte) {
	run()
	var buf bytes.Buffer
	buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
	for i := range 2 {
		fmt.Fprintf(&buf, "event: message\ndata: %s\n\n", progress(msg, i+1))
	}
	hangUp(w, false, buf.Bytes())
}

// invalidUTF8 is a text with bytes that are not UTF-8: a Latin-1 "é" and
// a UTF-16 byte order mark.
const invalidUTF8 = "caf\xe9 \xff\xfe ok"

// InvalidUTF8 answers with a text result holding bytes that are not
// UTF-8, as JSON or, with sse, as an SSE event.
func InvalidUTF8(sse bool) DoFunc {
	return func(w http.ResponseWriter, _ *http.Request, msg *jsonrpc.Message, _ func() []byte) {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`+invalidUTF8+`"}]}}`, msg.ID)
		writeBody(w, sse, body)
	}
}

// HugeLine answers with one message of size bytes on a single line, as
// JSON or, with sse, as an SSE event, written in small pieces so that the
// server holds none of it, until the client stops reading.
func HugeLine(size int, sse bool) DoFunc {
	return func(w http.ResponseWriter, _ *http.Request, msg *jsonrpc.Message, _ func() []byte) {
		ct, head, tail := "application/json", "", "\n"
		if sse {
			ct, head, tail = "text/event-stream", "event: message\ndata: ", "\n\n"
		}
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(http.StatusOK)
		open := fmt.Sprintf(`%s{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, head, msg.ID)
		if _, err := flushWrite(w, []byte(open)); err != nil {
			return
		}
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		for n := 0; n < size; n += len(chunk) {
			if _, err := flushWrite(w, chunk); err != nil {
				return
			}
		}
		_, _ = flushWrite(w, []byte(`"}]}}`+tail))
	}
}

// Trickle sends the JSON answer (the tool has run) one byte every d,
// flushed, until done or the client goes away.
func Trickle(d time.Duration) DoFunc {
	return func(w http.ResponseWriter, r *http.Request, _ *jsonrpc.Message, run func() []byte) {
		body := run()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		t := time.NewTicker(d)
		defer t.Stop()
		for i := range body {
			if _, err := flushWrite(w, body[i:i+1]); err != nil {
				return
			}
			select {
			case <-t.C:
			case <-r.Context().Done():
				return
			}
		}
	}
}

// Endless opens an SSE stream that sends a log notification every d and
// never the response, until the client goes away.
func Endless(d time.Duration) DoFunc {
	return func(w http.ResponseWriter, r *http.Request, _ *jsonrpc.Message, _ func() []byte) {
		w.Header().Set("Content-Type", "text/event-stream")
		t := time.NewTicker(d)
		defer t.Stop()
		for i := 0; ; i++ {
			line := fmt.Sprintf("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":%d}}\n\n", i)
			if _, err := flushWrite(w, []byte(line)); err != nil {
				return
			}
			select {
			case <-t.C:
			case <-r.Context().Done():
				return
			}
		}
	}
}

// HTMLStatus answers with status, an HTML page (a proxy's error page) and
// Retry-After: retryAfter when it is not empty. echo, when set, names a
// request header whose value the page quotes, as some proxies do.
func HTMLStatus(status int, retryAfter, echo string) DoFunc {
	return func(w http.ResponseWriter, r *http.Request, _ *jsonrpc.Message, _ func() []byte) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.WriteHeader(status)
		fmt.Fprintf(w, "<html><head><title>%d %s</title></head><body><h1>%s</h1><p>request %s</p>%s</body></html>",
			status, http.StatusText(status), http.StatusText(status), r.Header.Get(echo), strings.Repeat("<!-- padding -->", 40))
	}
}

// ContentType answers with the correct JSON response (the tool has run)
// under the media type ct; "" sends no Content-Type at all.
func ContentType(ct string) DoFunc {
	return func(w http.ResponseWriter, _ *http.Request, _ *jsonrpc.Message, run func() []byte) {
		body := run()
		if ct == "" {
			w.Header()["Content-Type"] = nil // no sniffing either
		} else {
			w.Header().Set("Content-Type", ct)
		}
		_, _ = w.Write(body)
	}
}

// WrongID answers with the response (the tool has run) under another id,
// as JSON or, with sse, as the only event of an SSE stream.
func WrongID(sse bool) DoFunc {
	return func(w http.ResponseWriter, _ *http.Request, msg *jsonrpc.Message, run func() []byte) {
		var m map[string]any
		_ = json.Unmarshal(run(), &m)
		m["id"] = json.RawMessage(string(msg.ID) + "000")
		b, _ := json.Marshal(m)
		writeBody(w, sse, string(b))
	}
}

// LoseSession forgets every legacy session and answers 404, as a restarted
// server does; with afterRun, the request runs first, so the server lost
// the session after having done the work.
func (s *Server) LoseSession(afterRun bool) DoFunc {
	return func(w http.ResponseWriter, _ *http.Request, _ *jsonrpc.Message, run func() []byte) {
		if afterRun {
			run()
		}
		s.ExpireSessions()
		WriteError(w, http.StatusNotFound, nil, -32001, "Session not found")
	}
}

// Flood runs the request and answers on an SSE stream: n progress
// notifications for it, then the response.
func Flood(n int) DoFunc {
	return func(w http.ResponseWriter, _ *http.Request, msg *jsonrpc.Message, run func() []byte) {
		body := run()
		w.Header().Set("Content-Type", "text/event-stream")
		bw := bufio.NewWriterSize(w, 64<<10)
		for i := range n {
			fmt.Fprintf(bw, "event: message\ndata: %s\n\n", progress(msg, i+1))
		}
		fmt.Fprintf(bw, "event: message\ndata: %s\n\n", body)
		_ = bw.Flush()
	}
}

// UnsupportedVersion answers a modern request with -32022 listing only
// supported, as a server whose server/discover lied does.
func UnsupportedVersion(supported ...string) DoFunc {
	return func(w http.ResponseWriter, _ *http.Request, msg *jsonrpc.Message, _ func() []byte) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		data, _ := json.Marshal(map[string]any{"supported": supported, "requested": Modern})
		_ = json.NewEncoder(w).Encode(jsonrpc.Response{JSONRPC: jsonrpc.Version, ID: msg.ID,
			Error: &jsonrpc.Error{Code: jsonrpc.CodeUnsupportedVersion, Message: "Unsupported protocol version", Data: data}})
	}
}

// Challenge answers status (401 or 403) with the WWW-Authenticate
// challenge given, and a JSON body.
func Challenge(status int, challenge string) DoFunc {
	return func(w http.ResponseWriter, _ *http.Request, _ *jsonrpc.Message, _ func() []byte) {
		w.Header().Set("WWW-Authenticate", challenge)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":%q}`, strings.ToLower(strings.ReplaceAll(http.StatusText(status), " ", "_")))
	}
}

// Redirect answers with status (307 or 308) to location.
func Redirect(status int, location string) DoFunc {
	return func(w http.ResponseWriter, _ *http.Request, _ *jsonrpc.Message, _ func() []byte) {
		w.Header().Set("Location", location)
		w.WriteHeader(status)
	}
}

// progress is a progress notification for msg's progress token ("p" when
// it has none).
func progress(msg *jsonrpc.Message, n int) []byte {
	var p struct {
		Meta struct {
			Token json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(msg.Params, &p)
	token := p.Meta.Token
	if len(token) == 0 {
		token = json.RawMessage(`"p"`)
	}
	b, _ := json.Marshal(jsonrpc.Request{JSONRPC: jsonrpc.Version, Method: "notifications/progress",
		Params: map[string]any{"progressToken": token, "progress": n}})
	return b
}

// writeBody writes one JSON-RPC message as a JSON body or an SSE event.
func writeBody(w http.ResponseWriter, sse bool, body string) {
	if sse {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", body)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, body)
}

// flushWrite writes b and flushes it.
func flushWrite(w http.ResponseWriter, b []byte) (int, error) {
	n, err := w.Write(b)
	if err == nil {
		err = http.NewResponseController(w).Flush()
	}
	return n, err
}

// hangUp takes the connection over, writes raw and closes it: with reset,
// with a TCP RST instead of a FIN.
func hangUp(w http.ResponseWriter, reset bool, raw []byte) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	if len(raw) > 0 {
		_, _ = buf.Write(raw)
		_ = buf.Flush()
	}
	if tc, ok := conn.(*net.TCPConn); ok && reset {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

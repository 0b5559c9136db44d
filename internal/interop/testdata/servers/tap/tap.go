// Package tap records, on the server side, what an MCP client sends to a
// server built on another SDK, so that the interop tests can count it: each
// process start, each JSON-RPC method received, each HTTP session the
// server issued and each one the client ended with DELETE. It writes one
// line per event ("start PID", "method NAME", "session ID", "delete ID") to
// the file named by $MINIME_INTEROP_TAP, appending, so that every process a
// test starts writes to the same file. Without the variable it records
// nothing.
package tap

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"sync"
)

var mu sync.Mutex

// Record appends one event line to the tap file.
func Record(format string, args ...any) {
	path := os.Getenv("MINIME_INTEROP_TAP")
	if path == "" {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		log.Fatalf("tap: %v", err)
	}
	defer f.Close()
	if _, err := fmt.Fprintf(f, format+"\n", args...); err != nil {
		log.Fatalf("tap: %v", err)
	}
}

// Start records the start of this process.
func Start() { Record("start %d", os.Getpid()) }

// methods records the method of each JSON-RPC message in b: one message
// or a batch.
func methods(b []byte) {
	b = bytes.TrimSpace(b)
	var batch []struct{ Method string }
	if len(b) > 0 && b[0] == '[' {
		_ = json.Unmarshal(b, &batch)
	} else {
		var one struct{ Method string }
		_ = json.Unmarshal(b, &one)
		batch = append(batch, one)
	}
	for _, m := range batch {
		if m.Method != "" {
			Record("method %s", m.Method)
		}
	}
}

// Stdin returns os.Stdin as the server should read it: each line is
// recorded before the SDK sees it.
func Stdin() io.ReadCloser {
	r, w := io.Pipe()
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(make([]byte, 64*1024), 16<<20)
		for sc.Scan() {
			methods(sc.Bytes())
			if _, err := w.Write(append(sc.Bytes(), '\n')); err != nil {
				return
			}
		}
		w.CloseWithError(sc.Err())
	}()
	return r
}

// Stdout is os.Stdout for an SDK that wants an io.WriteCloser.
func Stdout() io.WriteCloser { return os.Stdout }

// Serve serves h, tapped, on 127.0.0.1 at a free port, and prints the
// address on stderr as "mini-me-interop: listening on ADDR".
func Serve(h http.Handler) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "mini-me-interop: listening on %s\n", l.Addr())
	log.Fatal(http.Serve(l, handler{h}))
}

// handler records the methods POSTed, the session ids issued and the
// sessions DELETEd.
type handler struct{ next http.Handler }

func (h handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		methods(body)
		r.Body = io.NopCloser(bytes.NewReader(body))
	case http.MethodDelete:
		Record("delete %s", r.Header.Get("Mcp-Session-Id"))
	}
	h.next.ServeHTTP(&sessionWriter{ResponseWriter: w, known: r.Header.Get("Mcp-Session-Id")}, r)
}

// sessionWriter records a session id the server issues in a response.
type sessionWriter struct {
	http.ResponseWriter
	known string
	seen  bool
}

func (w *sessionWriter) WriteHeader(code int) {
	if !w.seen {
		w.seen = true
		if id := w.Header().Get("Mcp-Session-Id"); id != "" && id != w.known && code < 300 {
			Record("session %s", id)
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *sessionWriter) Write(b []byte) (int, error) {
	if !w.seen {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Flush lets the SDK stream.
func (w *sessionWriter) Flush() {
	if !w.seen {
		w.WriteHeader(http.StatusOK)
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the real writer.
func (w *sessionWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

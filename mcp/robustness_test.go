package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"git.rickub.com/bots-garden/mini-me/mcp"
)

type rpcMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

func readMsg(r *http.Request) rpcMsg {
	b, _ := io.ReadAll(r.Body)
	var m rpcMsg
	_ = json.Unmarshal(b, &m)
	return m
}

func jsonReply(w http.ResponseWriter, id json.RawMessage, result string) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result)
}

const discoverOK = `{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"x","version":"1"}}}`

// strayServer is a 2026-07-28 server that answers each tools/call with an
// SSE stream of the events strays (each an event's data), then the call's
// response: the text "mine", or a result of the wrong shape for a tool
// named "unfit".
func strayServer(t *testing.T, strays ...string) *mcp.Client {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := readMsg(r)
		switch m.Method {
		case "server/discover":
			jsonReply(w, m.ID, discoverOK)
		case "tools/call":
			w.Header().Set("Content-Type", "text/event-stream")
			for _, data := range strays {
				fmt.Fprintf(w, "data: %s\n\n", data)
			}
			result := `{"content":[{"type":"text","text":"mine"}]}`
			if strings.Contains(string(m.Params), "unfit") {
				result = `{"content":"not a list"}`
			}
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":%s}\n\n", m.ID, result)
		}
	}))
	t.Cleanup(srv.Close)
	return connect(t, srv.URL, nil)
}

// A message on an SSE response stream that is not the call's response (a
// response to another id, or a notification or request carrying a result
// member, which JSON-RPC does not give them) is handled without leaving any
// of its fields in the caller's result, which is decoded in place.
func TestStrayResponseDoesNotLeakIntoResult(t *testing.T) {
	const leak = `"result":{"content":[{"type":"text","text":"other"}],"isError":true,"structuredContent":{"leak":1}}`
	c := strayServer(t,
		`{"jsonrpc":"2.0","id":999999,`+leak+`}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"},`+leak+`}`,
		`{"jsonrpc":"2.0","id":"r1","method":"ping",`+leak+`}`)
	res, err := c.CallTool(context.Background(), "t", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || res.StructuredContent != nil || res.Text() != "mine" {
		t.Fatalf("stray result leaked into the call's: isError=%v structured=%s text=%q", res.IsError, res.StructuredContent, res.Text())
	}
}

// A stray message whose result does not fit the call's result type (a
// response to another request, a notification with a result member) is
// skipped like any stray; the call's own response that does not fit is a
// protocol error.
func TestStrayResultOfAnotherShape(t *testing.T) {
	c := strayServer(t,
		`{"jsonrpc":"2.0","id":999999,"result":"a string"}`,
		`{"jsonrpc":"2.0","id":999998,"result":{"content":7,"isError":"yes"}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"},"result":[1]}`)
	res, err := c.CallTool(context.Background(), "fit", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || res.Text() != "mine" {
		t.Fatalf("isError=%v text=%q, want the call's own result", res.IsError, res.Text())
	}
	_, err = c.CallTool(context.Background(), "unfit", nil)
	if !errors.Is(err, mcp.ErrProtocol) {
		t.Fatalf("the call's own response of the wrong shape: %v, want ErrProtocol", err)
	}
}

// Client.Close ends the HTTP calls in flight at once.
func TestCloseEndsCallsInFlight(t *testing.T) {
	release, started := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := readMsg(r)
		switch m.Method {
		case "server/discover":
			jsonReply(w, m.ID, discoverOK)
		case "tools/call":
			close(started)
			select {
			case <-release:
			case <-r.Context().Done():
			}
			jsonReply(w, m.ID, `{"content":[]}`)
		}
	}))
	defer srv.Close()
	defer close(release)
	c, err := mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: srv.URL}, &mcp.Options{CallTimeout: 4 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan time.Time, 1)
	go func() { _, _ = c.CallTool(context.Background(), "slow", nil); done <- time.Now() }()
	<-started // the call is in flight
	closed := time.Now()
	_ = c.Close()
	end := <-done
	if d := end.Sub(closed); d > 2*time.Second { // CallTimeout is 4 s
		t.Fatalf("in-flight call survived Close for %v (until CallTimeout)", d.Round(time.Millisecond))
	}
}

// A fallback to HTTP+SSE whose initialize fails closes its GET stream.
func TestFailedHTTPSSEFallbackClosesItsStream(t *testing.T) {
	var getOpen atomic.Int32
	getClosed := make(chan struct{}, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/sse":
			getOpen.Add(1)
			defer func() { getOpen.Add(-1); getClosed <- struct{}{} }()
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "event: endpoint\ndata: /msg\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done() // never answers initialize
		case r.URL.Path == "/msg":
			w.WriteHeader(http.StatusAccepted)
		default:
			w.WriteHeader(http.StatusMethodNotAllowed)
		}
	}))
	defer srv.Close()
	defer srv.CloseClientConnections()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := mcp.Connect(ctx, &mcp.HTTPTransport{URL: srv.URL + "/sse"}, nil)
	if err == nil {
		t.Fatal("expected Connect to fail")
	}
	deadline := time.After(5 * time.Second)
	for getOpen.Load() != 0 {
		select {
		case <-getClosed:
		case <-deadline:
			t.Fatalf("Connect failed (%v) but %d HTTP+SSE GET stream(s) are still open 5 s later", err, getOpen.Load())
		}
	}
}

// expiringServer is a legacy server whose first session (s1) expires
// when expire is called; initialize answers through answer, given whether
// the session expired.
type expiringServer struct {
	mu      sync.Mutex
	expired bool
	srv     *httptest.Server
}

func newExpiringServer(t *testing.T, answer func(w http.ResponseWriter, id json.RawMessage, expired bool)) *expiringServer {
	e := &expiringServer{}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		m := readMsg(r)
		e.mu.Lock()
		exp := e.expired
		e.mu.Unlock()
		switch m.Method {
		case "server/discover":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"nope"}}`, m.ID)
		case "initialize":
			w.Header().Set("Mcp-Session-Id", map[bool]string{false: "s1", true: "s2"}[exp])
			answer(w, m.ID, exp)
		case "notifications/initialized":
			w.WriteHeader(http.StatusAccepted)
		case "tools/list":
			if exp && r.Header.Get("Mcp-Session-Id") == "s1" {
				w.WriteHeader(http.StatusNotFound)
				return
			}
			jsonReply(w, m.ID, `{"tools":[]}`)
		}
	}))
	t.Cleanup(func() {
		e.srv.CloseClientConnections()
		e.srv.Close()
	})
	return e
}

func (e *expiringServer) expire() {
	e.mu.Lock()
	e.expired = true
	e.mu.Unlock()
}

const initializeResult = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"l","version":"1"}}`

func TestReinitializeDoesNotBlockClose(t *testing.T) {
	reinit, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	defer close(release)
	e := newExpiringServer(t, func(w http.ResponseWriter, id json.RawMessage, expired bool) {
		if expired { // a re-initialize that does not end before the test
			once.Do(func() { close(reinit) })
			<-release
		}
		jsonReply(w, id, initializeResult)
	})
	c, err := mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: e.srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.expire()
	listed := make(chan struct{})
	go func() { _, _ = c.ListTools(context.Background()); close(listed) }()
	<-reinit // the re-initialize is under way
	start := time.Now()
	_ = c.Close()
	if d := time.Since(start); d > 5*time.Second { // the re-initialize never ends
		t.Fatalf("Close blocked %v behind a re-initialize", d.Round(time.Millisecond))
	}
	select {
	case <-listed:
	case <-time.After(5 * time.Second):
		t.Fatal("the call that re-initializes did not end with Close")
	}
}

func TestProbe503IsNotLegacy(t *testing.T) {
	// A server in trouble says nothing about the era: a 503 on the probe
	// is asked again instead of sending initialize.
	var n atomic.Int32
	var methods []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := readMsg(r)
		mu.Lock()
		methods = append(methods, r.Method+" "+m.Method)
		mu.Unlock()
		if m.Method == "server/discover" && n.Add(1) == 1 {
			http.Error(w, "upstream busy", http.StatusServiceUnavailable)
			return
		}
		if m.Method == "server/discover" {
			jsonReply(w, m.ID, discoverOK)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, m.ID)
	}))
	defer srv.Close()
	c, err := mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: srv.URL}, nil)
	if err == nil {
		defer c.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	if err != nil || strings.Contains(strings.Join(methods, ","), "initialize") {
		t.Fatalf("503 on the probe classified the modern server as legacy: err=%v requests=%v", err, methods)
	}
}

// A tools/list answered with input_required, invalid for that method, is
// a protocol error, not an empty list.
func TestInputRequiredOnListIsAnError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := readMsg(r)
		switch m.Method {
		case "server/discover":
			jsonReply(w, m.ID, discoverOK)
		case "tools/list":
			jsonReply(w, m.ID, `{"resultType":"input_required","requestState":"abc"}`)
		}
	}))
	defer srv.Close()
	c := connect(t, srv.URL, nil)
	tools, err := c.ListTools(context.Background())
	if err == nil {
		t.Fatalf("input_required on tools/list accepted as %d tools, no error", len(tools))
	}
}

// A listen stream the server ends at once is reopened with a growing
// backoff, and fires no OnToolsChanged since it never opened.
func TestListenStreamBacksOff(t *testing.T) {
	var listens atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := readMsg(r)
		switch m.Method {
		case "server/discover":
			jsonReply(w, m.ID, `{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":true}}}`)
		case "subscriptions/listen":
			listens.Add(1)
			jsonReply(w, m.ID, `{"resultType":"complete"}`)
		}
	}))
	defer srv.Close()
	var changed atomic.Int32
	c, err := mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: srv.URL}, &mcp.Options{OnToolsChanged: func() { changed.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	_ = c.Close()
	if listens.Load() > 3 {
		t.Fatalf("%d listen requests in 2s: no backoff", listens.Load())
	}
	if changed.Load() != 0 {
		t.Fatalf("OnToolsChanged fired %d times for streams that never opened", changed.Load())
	}
}

// A progress notification on the initialize stream of a re-initialize
// reaches the callback while the session is renewed: no lock is held
// across that round trip.
func TestProgressDuringReinitialize(t *testing.T) {
	e := newExpiringServer(t, func(w http.ResponseWriter, id json.RawMessage, _ bool) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"zz\",\"progress\":1}}\n\n")
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":%s}\n\n", id, initializeResult)
	})
	c, err := mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: e.srv.URL}, &mcp.Options{OnProgress: func(mcp.Progress) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	e.expire()
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := c.ListTools(ctx)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ListTools on the renewed session: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("ListTools with a 1s deadline still blocked after 10s: self-deadlock on Client.mu")
	}
}

// A token a server echoes in a JSON-RPC error is redacted: Toolset and
// agent hand err.Error() to the model.
func TestTokenNotInJSONRPCError(t *testing.T) {
	t.Setenv("REVIEW_TOKEN", "sk-secret-123")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := readMsg(r)
		switch m.Method {
		case "server/discover":
			jsonReply(w, m.ID, discoverOK)
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":"token %s lacks scope tools:write"}}`, m.ID, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		}
	}))
	defer srv.Close()
	c, err := mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: srv.URL, TokenEnv: "REVIEW_TOKEN"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.CallTool(context.Background(), "t", nil)
	if strings.Contains(err.Error(), "sk-secret-123") {
		t.Fatalf("token in error: %v", err)
	}
}

// Legacy SSE polling (2025-11-25): the server closes the stream after each
// event with retry; a long call that keeps making progress is resumed past
// maxResumes, which counts only resumptions that bring nothing.
func TestLegacyPollingKeepsResuming(t *testing.T) {
	var polls atomic.Int32
	var callID atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			if r.Header.Get("Last-Event-ID") == "" {
				w.WriteHeader(http.StatusMethodNotAllowed)
				return
			}
			n := polls.Add(1)
			w.Header().Set("Content-Type", "text/event-stream")
			if n < 8 {
				fmt.Fprintf(w, "id: e%d\nretry: 10\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"still working\"}}\n\n", n)
				return
			}
			fmt.Fprintf(w, "id: e%d\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"done\"}]}}\n\n", n, callID.Load())
			return
		}
		if r.Method == http.MethodDelete {
			return
		}
		m := readMsg(r)
		switch m.Method {
		case "server/discover":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"nope"}}`, m.ID)
		case "initialize":
			w.Header().Set("Mcp-Session-Id", "s")
			jsonReply(w, m.ID, `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"l","version":"1"}}`)
		case "notifications/initialized":
			w.WriteHeader(http.StatusAccepted)
		case "tools/call":
			callID.Store(string(m.ID))
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "id: e0\nretry: 10\ndata:\n\n")
		}
	}))
	defer srv.Close()
	c := connect(t, srv.URL, nil)
	res, err := c.CallTool(context.Background(), "long", nil)
	if err != nil {
		t.Fatalf("long legacy call under SSE polling failed after %d polls: %v", polls.Load(), err)
	}
	t.Log(res.Text())
}

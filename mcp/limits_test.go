package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/internal/jsonrpc"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
)

// TestInputRoundBound: one input_required round that asks for more input
// requests than a task may make in its whole life is refused before any
// handler runs (issue 35 #12: 500 roots/list were 500 handler calls).
func TestInputRoundBound(t *testing.T) {
	for _, tc := range []struct {
		n       int
		refused bool
	}{{mcp.MaxInputRequests, false}, {mcp.MaxInputRequests + 1, true}, {500, true}} {
		t.Run(fmt.Sprint(tc.n), func(t *testing.T) {
			reqs := make([]string, tc.n)
			for i := range reqs {
				reqs[i] = fmt.Sprintf(`"r%d":{"method":"roots/list","params":{}}`, i)
			}
			s := inputRoundServer(`{"resultType":"input_required","inputRequests":{` + strings.Join(reqs, ",") + `}}`)
			var calls atomic.Int32
			c := connect(t, mcptest.Start(t, s), &mcp.Options{Roots: func(context.Context) ([]mcp.Root, error) {
				calls.Add(1)
				return []mcp.Root{{URI: "file:///srv"}}, nil
			}})
			_, err := c.CallTool(context.Background(), "ask", nil)
			if !tc.refused {
				require.NoError(t, err)
				assert.EqualValues(t, tc.n, calls.Load())
				return
			}
			require.ErrorIs(t, err, mcp.ErrProtocol)
			assert.Contains(t, err.Error(), fmt.Sprintf("%d input requests", tc.n))
			assert.Zero(t, calls.Load(), "no handler runs for a round over the bound")
			assert.Equal(t, 1, s.Count("tools/call"), "the call is not retried")
		})
	}
}

// lister is a 2026-07-28 server whose listings (tools, prompts, resources,
// resource templates) each hold total items, made page by page as they are
// asked for, pageSize a page.
func lister(total, pageSize int) *mcptest.Server {
	items := map[string]struct{ key, item string }{
		"tools/list":               {"tools", `{"name":"t%d","inputSchema":{"type":"object"}}`},
		"prompts/list":             {"prompts", `{"name":"p%d"}`},
		"resources/list":           {"resources", `{"uri":"file:///r%d","name":"r"}`},
		"resources/templates/list": {"resourceTemplates", `{"uriTemplate":"file:///t%d/{x}","name":"t"}`},
	}
	s := &mcptest.Server{Versions: []string{mcptest.Modern}}
	s.Intercept = func(w http.ResponseWriter, _ *http.Request, msg *jsonrpc.Message) bool {
		list, ok := items[msg.Method]
		if !ok {
			return false
		}
		var p struct{ Cursor string }
		_ = json.Unmarshal(msg.Params, &p)
		from, _ := strconv.Atoi(p.Cursor)
		to := min(from+pageSize, total)
		page := make([]string, 0, to-from)
		for i := from; i < to; i++ {
			page = append(page, fmt.Sprintf(list.item, i))
		}
		next := ""
		if to < total {
			next = fmt.Sprintf(`,"nextCursor":"%d"`, to)
		}
		jsonReply(w, json.RawMessage(msg.ID), fmt.Sprintf(`{%q:[%s]%s}`, list.key, strings.Join(page, ","), next))
		return true
	}
	return s
}

// TestListBound: a listing is cut at Options.MaxListItems
// (DefaultMaxListItems when zero), the host told, and no page past the
// bound is asked for: a server listing 100,000 items costs the client
// 10,000 (issue 35 #8: 1,000,000 tools took 265 MiB).
func TestListBound(t *testing.T) {
	list := map[string]func(context.Context, *mcp.Client) (int, error){
		"tools/list": func(ctx context.Context, c *mcp.Client) (int, error) {
			l, err := c.ListTools(ctx)
			return len(l), err
		},
		"prompts/list": func(ctx context.Context, c *mcp.Client) (int, error) {
			l, err := c.ListPrompts(ctx)
			return len(l), err
		},
		"resources/list": func(ctx context.Context, c *mcp.Client) (int, error) {
			l, err := c.ListResources(ctx)
			return len(l), err
		},
		"resources/templates/list": func(ctx context.Context, c *mcp.Client) (int, error) {
			l, err := c.ListResourceTemplates(ctx)
			return len(l), err
		},
	}
	for _, tc := range []struct {
		name            string
		total, pageSize int
		max             int // Options.MaxListItems
		want, pages     int
		cut             bool
	}{
		{"default bound", 100000, 1000, 0, mcp.DefaultMaxListItems, mcp.DefaultMaxListItems/1000 + 1, true},
		{"bound inside a page", 95, 10, 42, 42, 5, true},
		{"exactly the bound", 50, 10, 50, 50, 5, false},
	} {
		for method, call := range list {
			t.Run(tc.name+"/"+method, func(t *testing.T) {
				s := lister(tc.total, tc.pageSize)
				var cuts []string
				c := connect(t, mcptest.Start(t, s), &mcp.Options{MaxListItems: tc.max, OnListCut: func(method string, limit int) {
					cuts = append(cuts, fmt.Sprint(method, " ", limit))
				}})
				n, err := call(context.Background(), c)
				require.NoError(t, err)
				assert.Equal(t, tc.want, n)
				assert.Equal(t, tc.pages, s.Count(method), "pages asked for")
				if tc.cut {
					assert.Equal(t, []string{fmt.Sprint(method, " ", tc.want)}, cuts)
				} else {
					assert.Empty(t, cuts)
				}
			})
		}
	}
}

// TestListCursorsNotKept: a listing remembers the cursors it was given,
// to end one that repeats, in a constant size each: a server that sends
// no items and a new 256 KiB cursor on each page made the client hold
// every cursor, up to maxPages of MaxMessageSize each (issue 35 #8,
// review: the items were bounded, the cursors not).
func TestListCursorsNotKept(t *testing.T) {
	const pages, size = 48, 256 << 10
	var first, last uint64 // live heap at the second page and the last
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	// A server of its own: mcptest's keeps every request's body.
	var listed atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var msg jsonrpc.Message
		if err := json.NewDecoder(r.Body).Decode(&msg); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		id := json.RawMessage(msg.ID)
		if msg.Method == "server/discover" {
			jsonReply(w, id, discoverOK)
			return
		}
		n := listed.Add(1)
		if n == 2 {
			first = heap()
		}
		if n == pages {
			last = heap()
			jsonReply(w, id, `{"tools":[]}`)
			return
		}
		jsonReply(w, id, fmt.Sprintf(`{"tools":[],"nextCursor":"%d-%s"}`, n, strings.Repeat("c", size)))
	}))
	defer srv.Close()
	c := connect(t, srv.URL, nil)
	tools, err := c.ListTools(context.Background())
	require.NoError(t, err)
	assert.Empty(t, tools)
	require.EqualValues(t, pages, listed.Load())
	grown := int64(last) - int64(first)
	t.Logf("live heap grown by %d bytes over %d pages", grown, pages)
	assert.Less(t, grown, int64(pages/4*size), "live heap grown over %d pages of new cursors", pages)
}

// TestListBytesBound: a listing whose pages add up to more than
// MaxListBytes ends after the page that passed it, over each transport's
// way of reading a response, whatever its item count: a few large tools
// a page took up to 1,000 pages of MaxMessageSize (issue 35 #8, review:
// the items were bounded, not their size).
func TestListBytesBound(t *testing.T) {
	const perPage, limit = 4, 8 << 10
	desc := strings.Repeat("d", 1<<10)
	// page answers tools/list request id with its page: perPage tools of
	// over 1 KiB each, and a next page, always.
	page := func(id json.RawMessage, cursor string) string {
		n, _ := strconv.Atoi(cursor)
		tools := make([]string, perPage)
		for i := range tools {
			tools[i] = fmt.Sprintf(`{"name":"t%d","description":%q,"inputSchema":{"type":"object"}}`, n*perPage+i, desc)
		}
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"tools":[%s],"nextCursor":"%d"}}`, id, strings.Join(tools, ","), n+1)
	}
	type request struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct{ Cursor string }
	}
	var pages atomic.Int32
	answer := func(in []byte) (string, bool) {
		var req request
		if json.Unmarshal(in, &req) != nil || req.ID == nil {
			return "", false
		}
		if req.Method == "server/discover" {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, discoverOK), true
		}
		pages.Add(1)
		return page(req.ID, req.Params.Cursor), true
	}
	httpServer := func(sse bool) mcp.Transport {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			out, _ := answer(body)
			if sse {
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, "data: %s\n\n", out)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, out)
		}))
		t.Cleanup(srv.Close)
		return &mcp.HTTPTransport{URL: srv.URL}
	}
	for name, tr := range map[string]func() mcp.Transport{
		"http json": func() mcp.Transport { return httpServer(false) },
		"http sse":  func() mcp.Transport { return httpServer(true) },
		"stream": func() mcp.Transport {
			return &mcp.StreamTransport{Dial: func(context.Context) (io.ReadWriteCloser, error) {
				ours, theirs := net.Pipe()
				go func() {
					defer theirs.Close()
					in := bufio.NewScanner(theirs)
					for in.Scan() {
						if out, ok := answer(in.Bytes()); ok {
							if _, err := fmt.Fprintln(theirs, out); err != nil {
								return
							}
						}
					}
				}()
				return ours, nil
			}}
		},
	} {
		t.Run(name, func(t *testing.T) {
			pages.Store(0)
			var cuts []string
			c, err := mcp.Connect(context.Background(), tr(), &mcp.Options{MaxListBytes: limit, OnListCut: func(method string, kept int) {
				cuts = append(cuts, fmt.Sprint(method, " ", kept))
			}})
			require.NoError(t, err)
			defer c.Close()
			tools, err := c.ListTools(context.Background())
			require.NoError(t, err)
			asked := int(pages.Load())
			size := len(page(json.RawMessage("2"), "0")) // of each page, give or take a digit
			assert.Equal(t, limit/size+1, asked, "pages asked for: until the one that passed the bound")
			assert.Len(t, tools, asked*perPage, "the pages' tools are kept")
			assert.Equal(t, []string{fmt.Sprint("tools/list ", len(tools))}, cuts)
		})
	}
}

// TestModernServerRequestsLogOnce: a 2026-07-28 server has no requests to
// send on a stream; those it sends anyway are ignored, and logged at Warn
// once per Client (then at Debug), with the method clipped: a server
// sending 200 of them, each with an 8 KiB method, wrote 200 warnings of
// 8 KiB (issue 35 #4, review).
func TestModernServerRequestsLogOnce(t *testing.T) {
	const n = 200
	method := strings.Repeat("m", 8<<10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := readMsg(r)
		switch m.Method {
		case "server/discover":
			jsonReply(w, m.ID, discoverOK)
		case "tools/call":
			w.Header().Set("Content-Type", "text/event-stream")
			bw := bufio.NewWriter(w)
			for i := range n {
				fmt.Fprintf(bw, "data: {\"jsonrpc\":\"2.0\",\"id\":\"srv-%d\",\"method\":%q}\n\n", i, method)
			}
			fmt.Fprintf(bw, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[]}}\n\n", m.ID)
			_ = bw.Flush()
		}
	}))
	defer srv.Close()
	logs := &logRecorder{}
	c := connect(t, srv.URL, &mcp.Options{Logger: slog.New(logs)})
	_, err := c.CallTool(context.Background(), "flood", nil)
	require.NoError(t, err)
	var bytes int
	ours := func(r logRecord) bool { return strings.Contains(r.msg, "sent a request") }
	logged := logs.count(func(r logRecord) bool {
		if ours(r) {
			bytes += len(r.attrs["method"])
		}
		return ours(r)
	})
	warned := logs.count(func(r logRecord) bool { return ours(r) && r.level >= slog.LevelWarn })
	assert.Equal(t, n, logged, "each request is logged")
	assert.Equal(t, 1, warned, "at Warn once")
	assert.Less(t, bytes, n*100, "methods clipped in the log")
}

// blockingElicit is an Elicit handler that holds every request until
// released (or its context ends), and records the most it held at once.
type blockingElicit struct {
	release        chan struct{}
	entered        chan struct{} // one value per request held
	inflight, most atomic.Int32
}

func newBlockingElicit(n int) *blockingElicit {
	return &blockingElicit{release: make(chan struct{}), entered: make(chan struct{}, n)}
}

func (b *blockingElicit) handle(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	cur := b.inflight.Add(1)
	defer b.inflight.Add(-1)
	for m := b.most.Load(); cur > m && !b.most.CompareAndSwap(m, cur); m = b.most.Load() {
	}
	b.entered <- struct{}{}
	select {
	case <-b.release:
		return &mcp.ElicitResult{Action: "decline"}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// check asserts that the flood of n requests, whose call has returned
// with res and err, was answered while limit handlers were held: the
// others got an error at once, and the goroutines counted during the
// flood grew by about limit, not n. Then it releases the handlers.
func (b *blockingElicit) check(t *testing.T, n, limit int, res *mcp.CallToolResult, err error, goroutines int) {
	t.Helper()
	defer close(b.release)
	assert.LessOrEqual(t, int(b.most.Load()), limit, "handlers in flight at once")
	require.NoError(t, err, "the requests over the bound were not answered at once")
	assert.JSONEq(t, fmt.Sprintf(`{"errors":%d,"results":0}`, n-limit), res.Text(), "answered while the first handlers still wait")
	for range limit {
		<-b.entered // the first handlers started, none of them done
	}
	assert.EqualValues(t, limit, b.most.Load())
	assert.Less(t, goroutines, limit+32, "goroutines added while the flood is answered")
}

// TestServerRequestFloodHTTP: a legacy server that sends 1,000
// elicitation/create requests on a call's SSE stream gets at most
// Options.MaxServerRequests handlers at once and an error answer for
// every other request while those handlers wait (issue 35 #4, over
// Streamable HTTP).
func TestServerRequestFloodHTTP(t *testing.T) {
	const n, limit = 1000, 4
	var errs, results atomic.Int32
	enough := make(chan struct{})
	s := &mcptest.Server{Versions: []string{mcptest.Legacy}, SSE: true}
	s.Intercept = func(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) bool {
		if msg.Method == "" && len(msg.ID) > 0 { // the client's answer to one request
			if msg.Error == nil {
				results.Add(1)
			} else if errs.Add(1) == n-limit {
				close(enough)
			}
			w.WriteHeader(http.StatusAccepted)
			return true
		}
		if msg.Method != "tools/call" {
			return false
		}
		w.Header().Set("Content-Type", "text/event-stream")
		bw := bufio.NewWriter(w)
		for i := range n {
			fmt.Fprintf(bw, "data: {\"jsonrpc\":\"2.0\",\"id\":\"srv-%d\",\"method\":\"elicitation/create\",\"params\":{\"message\":\"Name?\",\"requestedSchema\":{\"type\":\"object\",\"properties\":{}}}}\n\n", i)
		}
		_ = bw.Flush()
		w.(http.Flusher).Flush()
		select {
		case <-enough:
		case <-r.Context().Done():
			return true
		}
		tally, _ := json.Marshal(map[string]int32{"errors": errs.Load(), "results": results.Load()})
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":%q}]}}\n\n", msg.ID, tally)
		return true
	}
	url := mcptest.Start(t, s)
	b := newBlockingElicit(n)
	c := connect(t, url, &mcp.Options{MaxServerRequests: limit, Elicit: b.handle})
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, "flood", nil)
	b.check(t, n, limit, res, err, runtime.NumGoroutine()-before)
}

// TestTaskInputRoundBound: a 2026-07-28 task whose one input_required
// snapshot asks for more than MaxInputRequests inputs breaks the rules
// before any handler runs (issue 35 #12: the 64 first were asked first).
func TestTaskInputRoundBound(t *testing.T) {
	const n = 100
	reqs := make([]string, n)
	for i := range reqs {
		reqs[i] = fmt.Sprintf(`"r%d":{"method":"roots/list","params":{}}`, i)
	}
	head := `"taskId":"t1","status":"input_required","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","pollIntervalMs":50`
	s := &mcptest.Server{Versions: []string{mcptest.Modern}}
	s.Intercept = func(w http.ResponseWriter, _ *http.Request, msg *jsonrpc.Message) bool {
		switch msg.Method {
		case "tools/call":
			jsonReply(w, json.RawMessage(msg.ID), `{"resultType":"task",`+head+`}`)
		case "tasks/get":
			jsonReply(w, json.RawMessage(msg.ID), `{"resultType":"complete",`+head+`,"inputRequests":{`+strings.Join(reqs, ",")+`}}`)
		case "tasks/cancel", "tasks/update":
			jsonReply(w, json.RawMessage(msg.ID), `{}`)
		default:
			return false
		}
		return true
	}
	var calls atomic.Int32
	c := connect(t, mcptest.Start(t, s), &mcp.Options{Roots: func(context.Context) ([]mcp.Root, error) {
		calls.Add(1)
		return nil, nil
	}})
	_, err := c.CallTool(context.Background(), "ask", nil)
	require.ErrorIs(t, err, mcp.ErrTaskMisbehaved)
	assert.Zero(t, calls.Load(), "no handler runs for a round over the bound")
	assert.Zero(t, s.Count("tasks/update"))
}

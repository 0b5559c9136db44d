package mcp_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/mcp"
)

// bigServer answers tools/call with one text block of a fixed large text,
// written from bytes made once, so that it allocates next to nothing
// itself: what a call allocates is the client's.
type bigServer struct {
	modern, sse bool
	result      []byte // the tools/call result
	pad         string // over SSE: lines written before the event's (made once, like result)
}

func newBigServer(modern, sse bool, text string) *bigServer {
	res := `{"content":[{"type":"text","text":"` + text + `"}],"isError":false`
	if modern {
		res += `,"resultType":"complete"`
	}
	return &bigServer{modern: modern, sse: sse, result: []byte(res + "}")}
}

func (s *bigServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var q struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.NewDecoder(r.Body).Decode(&q); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if len(q.ID) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	tools := `{"tools":[{"name":"big","inputSchema":{"type":"object"}}]` + map[bool]string{true: `,"resultType":"complete"}`, false: `}`}[s.modern]
	member, value := `"result":`, []byte(nil)
	switch {
	case q.Method == "tools/call":
		value = s.result
	case q.Method == "tools/list":
		value = []byte(tools)
	case q.Method == "server/discover" && s.modern:
		value = []byte(`{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"big","version":"1.0.0"}}}`)
	case q.Method == "initialize" && !s.modern:
		w.Header().Set("Mcp-Session-Id", "big-session")
		value = []byte(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"big","version":"1.0.0"}}`)
	default:
		member, value = `"error":`, []byte(`{"code":-32601,"message":"method not found"}`)
	}
	head := `{"jsonrpc":"2.0","id":` + string(q.ID) + `,` + member
	parts := []string{head, "", "}"}
	if s.sse {
		w.Header().Set("Content-Type", "text/event-stream")
		parts = []string{"event: message\ndata: " + head, "", "}\n\n"}
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	pad := ""
	if s.sse && q.Method == "tools/call" {
		pad = s.pad
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(pad)+len(parts[0])+len(value)+len(parts[2])))
	_, _ = io.WriteString(w, pad)
	_, _ = w.Write([]byte(parts[0]))
	_, _ = w.Write(value)
	_, _ = w.Write([]byte(parts[2]))
}

// A 1 MiB tool result allocates about its own size, in either era, as
// SSE or as JSON: the client copies the bytes once, into the result's
// text, and reuses every buffer on the way (the body, the SSE chunks and
// event data). The GC is off while measuring, so that the pools keep what
// they hold and the figure is exact (but see largeResultBound).
func TestLargeResultAllocatesItsSize(t *testing.T) {
	const size = 1 << 20
	text := strings.Repeat("0123456789abcdef", size/16)
	for _, tc := range []struct {
		name        string
		modern, sse bool
	}{
		{"2026-07-28 SSE", true, true},
		{"2026-07-28 JSON", true, false},
		{"2025-11-25 SSE", false, true},
		{"2025-11-25 JSON", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(newBigServer(tc.modern, tc.sse, text))
			defer srv.Close()
			c, err := mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: srv.URL}, nil)
			require.NoError(t, err)
			defer c.Close()
			call := func() {
				res, err := c.CallTool(context.Background(), "big", nil)
				require.NoError(t, err)
				require.Len(t, res.Content, 1)
				require.Equal(t, len(text), len(res.Content[0].Text))
			}
			defer debug.SetGCPercent(debug.SetGCPercent(-1))
			call() // the buffers grow to the result's size once
			const calls = 5
			before := heapAllocs()
			for range calls {
				call()
			}
			perCall := float64(heapAllocs()-before) / calls
			t.Logf("%.2f MiB allocated per call", perCall/(1<<20))
			assert.LessOrEqual(t, perCall, largeResultBound*size, "allocated %.2f MiB per call of a 1 MiB result", perCall/(1<<20))
		})
	}
}

func heapAllocs() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

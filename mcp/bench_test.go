package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
)

// BenchmarkCallTool measures a tools/call round trip against an in-process
// server, next to the floor: a bare net/http POST of the same JSON-RPC body
// to the same server, decoded with encoding/json. The two alternate in
// batches within one run, so that a busy machine slows both alike, and the
// ratio of their times is reported as x-bare (the client's overhead).
func BenchmarkCallTool(b *testing.B) {
	for _, sse := range []bool{false, true} {
		name := "json"
		if sse {
			name = "sse"
		}
		b.Run(name, func(b *testing.B) {
			s := &mcptest.Server{Versions: []string{mcptest.Modern}, SSE: sse, Tools: []mcptest.Tool{mcptest.EchoTool()}}
			url := s.Start()
			defer s.Close()
			c, err := mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: url}, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			args := map[string]string{"text": "hello"}
			client := func() {
				if _, err := c.CallTool(context.Background(), "echo", args); err != nil {
					b.Fatal(err)
				}
			}
			bare := barePost(b, url, sse)
			defer bare.close()
			b.ReportAllocs()
			b.ReportMetric(paired(b, 50, client, bare.call), "x-bare")
		})
	}
}

// BenchmarkCallToolLarge measures a tools/call of a 1 MiB text result, in
// both eras, as JSON and as SSE, next to its floor: the same POST, its
// body read into a reused buffer and the text found with bytes.Index,
// never decoded (x-floor is the ratio of the times, alternating in
// batches).
func BenchmarkCallToolLarge(b *testing.B) {
	text := strings.Repeat("0123456789abcdef", 1<<16)
	for _, tc := range []struct {
		name        string
		modern, sse bool
	}{{"2026-07-28/json", true, false}, {"2026-07-28/sse", true, true}, {"2025-11-25/json", false, false}, {"2025-11-25/sse", false, true}} {
		b.Run(tc.name, func(b *testing.B) {
			srv := httptest.NewServer(newBigServer(tc.modern, tc.sse, text))
			defer srv.Close()
			c, err := mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: srv.URL}, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			hc := &http.Client{}
			defer hc.CloseIdleConnections()
			req := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"big"}}`)
			var buf bytes.Buffer
			floor := func() {
				resp, err := hc.Post(srv.URL, "application/json", bytes.NewReader(req))
				if err != nil {
					b.Fatal(err)
				}
				buf.Reset()
				_, err = buf.ReadFrom(resp.Body)
				resp.Body.Close()
				data := buf.Bytes()
				i := bytes.Index(data, []byte(`"text":"`))
				if err != nil || i < 0 || bytes.IndexByte(data[i+8:], '"') != len(text) {
					b.Fatal("floor: no text", err)
				}
			}
			client := func() {
				res, err := c.CallTool(context.Background(), "big", nil)
				if err != nil || len(res.Content) != 1 || len(res.Content[0].Text) != len(text) {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			b.ReportMetric(paired(b, 10, client, floor), "x-floor")
		})
	}
}

// paired runs b.N calls of client, and as many of floor, alternating in
// batches, timing client alone, and returns the ratio of their times.
func paired(b *testing.B, batch int, client, floor func()) float64 {
	b.ResetTimer()
	var tc, tf time.Duration
	for done := 0; done < b.N; done += batch {
		n := min(batch, b.N-done)
		t0 := time.Now()
		for range n {
			client()
		}
		t1 := time.Now()
		b.StopTimer()
		for range n {
			floor()
		}
		tf += time.Since(t1)
		b.StartTimer()
		tc += t1.Sub(t0)
	}
	return float64(tc) / float64(tf)
}

// bare is the floor of BenchmarkCallTool: one JSON-RPC POST with net/http
// and encoding/json, nothing else.
type bare struct {
	b    *testing.B
	hc   *http.Client
	url  string
	sse  bool
	body []byte
}

func barePost(b *testing.B, url string, sse bool) *bare {
	return &bare{b: b, hc: &http.Client{}, url: url, sse: sse,
		body: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"mini-me","version":"0.1.0"}},"name":"echo","arguments":{"text":"hello"}}}`)}
}

func (p *bare) call() {
	req, _ := http.NewRequest(http.MethodPost, p.url, bytes.NewReader(p.body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "echo")
	resp, err := p.hc.Do(req)
	if err != nil {
		p.b.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if p.sse {
		data = bytes.TrimSpace(data[bytes.Index(data, []byte("data: "))+6:])
	}
	var out struct {
		Result mcp.CallToolResult `json:"result"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		p.b.Fatal(err)
	}
}

func (p *bare) close() { p.hc.CloseIdleConnections() }

// BenchmarkListTools lists 500 tools, in pages of 100.
func BenchmarkListTools(b *testing.B) {
	s := &mcptest.Server{Versions: []string{mcptest.Modern}, PageSize: 100}
	for i := range 500 {
		s.Tools = append(s.Tools, mcptest.Tool{Def: json.RawMessage(fmt.Sprintf(
			`{"name":"tool_%d","description":"Does thing %d.","inputSchema":{"type":"object","properties":{"q":{"type":"string","description":"query"},"limit":{"type":"integer"}},"required":["q"]},"annotations":{"readOnlyHint":true}}`, i, i))})
	}
	url := s.Start()
	defer s.Close()
	c, err := mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: url}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		tools, err := c.ListTools(context.Background())
		if err != nil || len(tools) != 500 {
			b.Fatal(err, len(tools))
		}
	}
}

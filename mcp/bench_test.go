package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"

	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
)

// BenchmarkCallTool measures a tools/call round trip against an in-process
// server, next to the floor: a bare net/http POST of the same JSON-RPC body
// to the same server, decoded with encoding/json. The ratio of the two is
// the client's overhead.
func BenchmarkCallTool(b *testing.B) {
	for _, sse := range []bool{false, true} {
		name := "json"
		if sse {
			name = "sse"
		}
		s := &mcptest.Server{Versions: []string{mcptest.Modern}, SSE: sse, Tools: []mcptest.Tool{echoTool()}}
		url := s.Start()
		c, err := mcp.Connect(context.Background(), &mcp.HTTPTransport{URL: url}, nil)
		if err != nil {
			b.Fatal(err)
		}
		args := map[string]string{"text": "hello"}
		b.Run(name+"/client", func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := c.CallTool(context.Background(), "echo", args); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/bare-http", func(b *testing.B) {
			b.ReportAllocs()
			hc := &http.Client{}
			body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"echo","arguments":{"text":"hello"}}}`)
			for range b.N {
				req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
				req.Header.Set("Mcp-Method", "tools/call")
				req.Header.Set("Mcp-Name", "echo")
				resp, err := hc.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				data, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if sse {
					data = bytes.TrimSpace(data[bytes.Index(data, []byte("data: "))+6:])
				}
				var out struct {
					Result mcp.CallToolResult `json:"result"`
				}
				if err := json.Unmarshal(data, &out); err != nil {
					b.Fatal(err)
				}
			}
			hc.CloseIdleConnections()
		})
		c.Close()
		s.Close()
	}
}

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

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tools every server offers: echo, big (a 1 MiB text) and fillers up
// to toolCount, listed pageSize at a time. A replay server also answers
// calls of huge (a 16 MiB text), which it does not list.
const (
	toolCount = 500
	pageSize  = 100
	bigSize   = 1 << 20
	hugeSize  = 16 << 20
	modernVer = "2026-07-28"
	legacyVer = "2025-11-25"
)

// bigText is the text of the big tool's result.
var bigText = strings.Repeat("0123456789abcdef", bigSize/16)

// hugeResult is the result of the huge tool in each era (modern, legacy),
// built at its first call.
var hugeResult = [2]func() []byte{
	sync.OnceValue(func() []byte { return textResult(true, strings.Repeat("0123456789abcdef", hugeSize/16)) }),
	sync.OnceValue(func() []byte { return textResult(false, strings.Repeat("0123456789abcdef", hugeSize/16)) }),
}

// server is one endpoint the child process serves.
type server struct {
	name   string // as shown in the table
	modern bool   // the era its clients should find
	live   bool   // a go-sdk server, not a replay
}

// servers lists the HTTP endpoints, in the order the child prints their
// URLs.
var servers = []server{
	{name: "replay 2026-07-28 sse", modern: true},
	{name: "replay 2026-07-28 json", modern: true},
	{name: "replay 2025-11-25 sse"},
	{name: "replay 2025-11-25 json"},
	{name: "go-sdk 2026-07-28 sse", modern: true, live: true},
	{name: "go-sdk 2026-07-28 json", modern: true, live: true},
	{name: "go-sdk 2025-11-25 sse", live: true},
	{name: "go-sdk 2025-11-25 json", live: true},
}

// serveHTTP runs the child side: every server of servers on 127.0.0.1,
// their URLs on stdout one a line, until stdin closes.
func serveHTTP() error {
	mux := http.NewServeMux()
	for i, s := range servers {
		path := "/" + strconv.Itoa(i)
		sse := strings.HasSuffix(s.name, "sse")
		switch {
		case s.live:
			mux.Handle(path, gosdkHandler(s.modern, !sse))
		default:
			mux.Handle(path, &replay{modern: s.modern, sse: sse, res: newReplies(s.modern, toolCount)})
		}
	}
	// The scale mode's remote-like server: few tools, answers after a delay.
	mux.Handle("/small", &replay{modern: true, res: newReplies(true, smallTools), delay: smallDelay})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(ln) }()
	for i := range servers {
		fmt.Printf("http://%s/%d\n", ln.Addr(), i)
	}
	fmt.Printf("http://%s/small\n", ln.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin) // the parent closes it to stop us
	return srv.Close()
}

// gosdkHandler is the official SDK's server with the bench tools.
func gosdkHandler(stateless, json bool) http.Handler {
	s := sdk.NewServer(&sdk.Implementation{Name: "bench-gosdk", Version: "1.0.0"}, &sdk.ServerOptions{PageSize: pageSize})
	type echoArgs struct {
		Text string `json:"text"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Returns its text."},
		func(_ context.Context, _ *sdk.CallToolRequest, in echoArgs) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + in.Text}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "big", Description: "Returns 1 MiB of text."},
		func(context.Context, *sdk.CallToolRequest, echoArgs) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: bigText}}}, nil, nil
		})
	for i := 2; i < toolCount; i++ {
		sdk.AddTool(s, &sdk.Tool{Name: fmt.Sprintf("tool%03d", i), Description: fillerDescription},
			func(context.Context, *sdk.CallToolRequest, echoArgs) (*sdk.CallToolResult, any, error) {
				return &sdk.CallToolResult{}, nil, nil
			})
	}
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s },
		&sdk.StreamableHTTPOptions{Stateless: stateless, JSONResponse: json})
}

const fillerDescription = "A tool that is listed and never called, to give the list its weight."

// replies are the recorded results a replay server answers with, by
// method; each is the JSON of a result, spliced into a response with the
// request's id.
type replies struct {
	discover, initialize []byte
	pages                [][]byte // tools/list by page
	echo, big            []byte
}

// newReplies records the replies of a server of tools tools (at least 2:
// echo and big), listed pageSize at a time.
func newReplies(modern bool, tools int) *replies {
	r := &replies{}
	info := map[string]any{"name": "bench-replay", "version": "1.0.0"}
	caps := map[string]any{"tools": map[string]any{}}
	r.discover = mustJSON(map[string]any{"resultType": "complete", "supportedVersions": []string{modernVer},
		"capabilities": caps, "_meta": map[string]any{"io.modelcontextprotocol/serverInfo": info}})
	r.initialize = mustJSON(map[string]any{"protocolVersion": legacyVer, "capabilities": caps, "serverInfo": info})
	schema := map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}
	pages := (tools + pageSize - 1) / pageSize
	for p := 0; p < pages; p++ {
		var list []map[string]any
		for i := p * pageSize; i < min((p+1)*pageSize, tools); i++ {
			name := fmt.Sprintf("tool%03d", i)
			switch i {
			case 0:
				name = "echo"
			case 1:
				name = "big"
			}
			list = append(list, map[string]any{"name": name, "description": fillerDescription, "inputSchema": schema})
		}
		page := map[string]any{"tools": list}
		if p+1 < pages {
			page["nextCursor"] = strconv.Itoa(p + 1)
		}
		if modern {
			page["resultType"] = "complete"
		}
		r.pages = append(r.pages, mustJSON(page))
	}
	r.echo, r.big = textResult(modern, "echo: hello"), textResult(modern, bigText)
	return r
}

// textResult is the JSON of a result of one text block.
func textResult(modern bool, text string) []byte {
	res := map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}, "isError": false}
	if modern {
		res["resultType"] = "complete"
	}
	return mustJSON(res)
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// request is what a replay server reads of a request.
type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name   string `json:"name"`
		Cursor string `json:"cursor"`
	} `json:"params"`
}

// answer returns the result for a request, or the JSON of an error.
func (r *replies) answer(modern bool, q *request) (result, rpcErr []byte) {
	switch q.Method {
	case "server/discover":
		if modern {
			return r.discover, nil
		}
		return nil, []byte(`{"code":-32601,"message":"method not found"}`)
	case "initialize":
		return r.initialize, nil
	case "ping":
		return []byte(`{}`), nil
	case "tools/list":
		p, _ := strconv.Atoi(q.Params.Cursor)
		if p < 0 || p >= len(r.pages) {
			return nil, []byte(`{"code":-32602,"message":"bad cursor"}`)
		}
		return r.pages[p], nil
	case "tools/call":
		switch q.Params.Name {
		case "echo":
			return r.echo, nil
		case "big":
			return r.big, nil
		case "huge":
			if modern {
				return hugeResult[0](), nil
			}
			return hugeResult[1](), nil
		}
		return nil, []byte(`{"code":-32602,"message":"unknown tool"}`)
	}
	return nil, []byte(`{"code":-32601,"message":"method not found"}`)
}

// appendResponse appends the JSON-RPC response to q.
func appendResponse(b []byte, id, result, rpcErr []byte) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	if rpcErr != nil {
		b = append(b, `,"error":`...)
		b = append(b, rpcErr...)
	} else {
		b = append(b, `,"result":`...)
		b = append(b, result...)
	}
	return append(b, '}')
}

// replay serves recorded results over Streamable HTTP, as JSON or as one
// SSE event, at as little cost as it can.
type replay struct {
	modern, sse bool
	res         *replies
	delay       time.Duration // before each answer, as a remote server's latency
}

func (s *replay) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	switch req.Method {
	case http.MethodDelete:
		return
	case http.MethodPost:
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(req.Body)
	var q request
	if err != nil || json.Unmarshal(body, &q) != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if len(q.ID) == 0 {
		w.WriteHeader(http.StatusAccepted) // a notification
		return
	}
	if s.delay > 0 {
		time.Sleep(s.delay) // the latency this server stands for
	}
	result, rpcErr := s.res.answer(s.modern, &q)
	if q.Method == "initialize" {
		w.Header().Set("Mcp-Session-Id", "bench-session")
	}
	var out []byte
	if s.sse {
		w.Header().Set("Content-Type", "text/event-stream")
		out = append(make([]byte, 0, len(result)+64), "event: message\ndata: "...)
		out = append(appendResponse(out, q.ID, result, rpcErr), "\n\n"...)
	} else {
		w.Header().Set("Content-Type", "application/json")
		out = appendResponse(make([]byte, 0, len(result)+64), q.ID, result, rpcErr)
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	_, _ = w.Write(out)
}

// serveStdio runs a replay server on stdin and stdout, one message a line,
// in the era its first request shows.
func serveStdio() error {
	in := bufio.NewReaderSize(os.Stdin, 64<<10)
	out := bufio.NewWriterSize(os.Stdout, 64<<10)
	modern, legacy := newReplies(true, toolCount), newReplies(false, toolCount)
	era := 0 // 0 unknown, 1 modern, 2 legacy
	var b []byte
	for {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var q request
			if json.Unmarshal(line, &q) == nil && len(q.ID) > 0 {
				if era == 0 {
					era = 2
					if q.Method == "server/discover" {
						era = 1
					}
				}
				r := legacy
				if era == 1 {
					r = modern
				}
				result, rpcErr := r.answer(era == 1, &q)
				b = append(appendResponse(b[:0], q.ID, result, rpcErr), '\n')
				if _, werr := out.Write(b); werr != nil {
					return werr
				}
				if werr := out.Flush(); werr != nil {
					return werr
				}
			}
		}
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"

	mm "git.rickub.com/bots-garden/mini-me/mcp"
	mcpgo "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgotypes "github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// session is one connected client, as the phases use it.
type session interface {
	list(ctx context.Context) (int, error) // every tool, all pages
	echo(ctx context.Context) error        // echo "hello"
	big(ctx context.Context) error         // the 1 MiB result
	close() error
}

// target is what a client connects to: an HTTP URL or (url "") the stdio
// replay server.
type target struct {
	url    string
	modern bool
}

// contender is one client implementation.
type contender struct {
	name    string
	connect func(ctx context.Context, t target, hc *http.Client) (session, error)
}

var contenders = []contender{
	{"floor", connectFloor},
	{"mini-me", connectMiniMe},
	{"go-sdk", connectGoSDK},
	{"mcp-go", connectMCPGo},
}

// stdioCommand starts the stdio replay server.
func stdioCommand() (string, []string) {
	self, err := os.Executable()
	if err != nil {
		self = os.Args[0]
	}
	return self, []string{"-serve", "stdio"}
}

// checkText checks that a result is one text block of want bytes, so that
// no client is measured doing less than reading it: blocks is how many
// content blocks it has, text the first one's text, isText whether that
// one is text.
func checkText(blocks int, text string, isText bool, want int) error {
	switch {
	case blocks != 1:
		return fmt.Errorf("%d content blocks", blocks)
	case !isText:
		return errors.New("content is not text")
	case len(text) != want:
		return fmt.Errorf("result text of %d bytes, want %d", len(text), want)
	}
	return nil
}

const echoLen = len("echo: hello")

// --- mini-me

type miniMe struct{ c *mm.Client }

func connectMiniMe(ctx context.Context, t target, hc *http.Client) (session, error) {
	var tr mm.Transport = &mm.HTTPTransport{URL: t.url, HTTPClient: hc}
	if t.url == "" {
		cmd, args := stdioCommand()
		tr = &mm.CommandTransport{Command: cmd, Args: args}
	}
	c, err := mm.Connect(ctx, tr, nil)
	if err != nil {
		return nil, err
	}
	return miniMe{c}, nil
}

func (m miniMe) list(ctx context.Context) (int, error) {
	tools, err := m.c.ListTools(ctx)
	return len(tools), err
}

func (m miniMe) call(ctx context.Context, name string, want int) error {
	res, err := m.c.CallTool(ctx, name, echoArgs)
	if err != nil || len(res.Content) == 0 {
		return cmp.Or(err, checkText(0, "", false, want))
	}
	return checkText(len(res.Content), res.Content[0].Text, res.Content[0].Type == "text", want)
}

var echoArgs = map[string]any{"text": "hello"}

func (m miniMe) echo(ctx context.Context) error { return m.call(ctx, "echo", echoLen) }
func (m miniMe) big(ctx context.Context) error  { return m.call(ctx, "big", bigSize) }
func (m miniMe) close() error                   { return m.c.Close() }

// --- the official go-sdk

type goSDK struct{ s *sdk.ClientSession }

func connectGoSDK(ctx context.Context, t target, hc *http.Client) (session, error) {
	c := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1.0.0"}, nil)
	var tr sdk.Transport = &sdk.StreamableClientTransport{Endpoint: t.url, HTTPClient: hc, DisableStandaloneSSE: true}
	if t.url == "" {
		cmd, args := stdioCommand()
		tr = &sdk.CommandTransport{Command: exec.Command(cmd, args...)}
	}
	s, err := c.Connect(ctx, tr, nil)
	if err != nil {
		return nil, err
	}
	return goSDK{s}, nil
}

func (g goSDK) list(ctx context.Context) (int, error) {
	n := 0
	for _, err := range g.s.Tools(ctx, nil) {
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func (g goSDK) call(ctx context.Context, name string, want int) error {
	res, err := g.s.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: echoArgs})
	if err != nil || len(res.Content) == 0 {
		return cmp.Or(err, checkText(0, "", false, want))
	}
	tc, ok := res.Content[0].(*sdk.TextContent)
	if !ok {
		tc = &sdk.TextContent{}
	}
	return checkText(len(res.Content), tc.Text, ok, want)
}

func (g goSDK) echo(ctx context.Context) error { return g.call(ctx, "echo", echoLen) }
func (g goSDK) big(ctx context.Context) error  { return g.call(ctx, "big", bigSize) }
func (g goSDK) close() error                   { return g.s.Close() }

// --- mcp-go

type mcpGo struct{ c *mcpgo.Client }

func connectMCPGo(ctx context.Context, t target, hc *http.Client) (session, error) {
	var c *mcpgo.Client
	var err error
	if t.url == "" {
		cmd, args := stdioCommand()
		c, err = mcpgo.NewStdioMCPClient(cmd, nil, args...)
	} else {
		c, err = mcpgo.NewStreamableHttpClient(t.url, mcpgotransport.WithHTTPBasicClient(hc))
	}
	if err != nil {
		return nil, err
	}
	if err := c.Start(ctx); err != nil {
		_ = c.Close()
		return nil, err
	}
	var req mcpgotypes.InitializeRequest
	req.Params.ClientInfo = mcpgotypes.Implementation{Name: "bench", Version: "1.0.0"}
	if _, err := c.Initialize(ctx, req); err != nil {
		_ = c.Close()
		return nil, err
	}
	return mcpGo{c}, nil
}

func (m mcpGo) list(ctx context.Context) (int, error) {
	res, err := m.c.ListTools(ctx, mcpgotypes.ListToolsRequest{})
	if err != nil {
		return 0, err
	}
	return len(res.Tools), nil
}

func (m mcpGo) call(ctx context.Context, name string, want int) error {
	var req mcpgotypes.CallToolRequest
	req.Params.Name, req.Params.Arguments = name, echoArgs
	res, err := m.c.CallTool(ctx, req)
	if err != nil || len(res.Content) == 0 {
		return cmp.Or(err, checkText(0, "", false, want))
	}
	tc, ok := res.Content[0].(mcpgotypes.TextContent)
	return checkText(len(res.Content), tc.Text, ok, want)
}

func (m mcpGo) echo(ctx context.Context) error { return m.call(ctx, "echo", echoLen) }
func (m mcpGo) big(ctx context.Context) error  { return m.call(ctx, "big", bigSize) }
func (m mcpGo) close() error                   { return m.c.Close() }

// --- the floor: what Go itself costs

// floor speaks just enough JSON-RPC by hand: requests built by appending
// bytes, responses read whole and decoded with encoding/json into the
// result type, SSE reduced to finding the data line. Over stdio it is a
// bare pipe to the same replay server.
type floor struct {
	hc      *http.Client
	url     string
	modern  bool
	session string
	nextID  atomic.Int64
	headers map[string]http.Header // by method and tool name

	// stdio
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	mu  sync.Mutex
}

// floorMeta is the _meta of a modern request.
const floorMeta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"floor","version":"1.0.0"}}`

type floorText struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	IsError bool `json:"isError"`
}

type floorPage struct {
	Tools []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
	} `json:"tools"`
	NextCursor string `json:"nextCursor"`
}

var bufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func connectFloor(ctx context.Context, t target, hc *http.Client) (session, error) {
	f := &floor{hc: hc, url: t.url, modern: t.modern}
	if t.url == "" {
		cmd, args := stdioCommand()
		f.cmd = exec.Command(cmd, args...)
		in, err := f.cmd.StdinPipe()
		if err != nil {
			return nil, err
		}
		out, err := f.cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		if err := f.cmd.Start(); err != nil {
			return nil, err
		}
		f.in, f.out, f.modern = in, bufio.NewReaderSize(out, 64<<10), true
	}
	f.headers = map[string]http.Header{}
	for _, k := range []string{"server/discover", "initialize", "tools/list", "tools/call echo", "tools/call big"} {
		f.headers[k] = f.header(k)
	}
	var err error
	if f.modern {
		var res json.RawMessage
		err = f.call(ctx, "server/discover", "server/discover", "{", &res)
	} else {
		var res json.RawMessage
		err = f.call(ctx, "initialize", "initialize",
			`{"protocolVersion":"`+legacyVer+`","capabilities":{},"clientInfo":{"name":"floor","version":"1.0.0"}}`, &res)
		if err == nil {
			err = f.post(ctx, "initialize", []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil)
		}
		f.headers = map[string]http.Header{}
		for _, k := range []string{"tools/list", "tools/call echo", "tools/call big"} {
			f.headers[k] = f.header(k) // with the session now
		}
	}
	if err != nil {
		_ = f.close()
		return nil, err
	}
	return f, nil
}

func (f *floor) header(key string) http.Header {
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	method, name, _ := bytes.Cut([]byte(key), []byte(" "))
	if f.modern {
		h["Mcp-Protocol-Version"] = []string{modernVer}
		h["Mcp-Method"] = []string{string(method)}
		if len(name) > 0 {
			h["Mcp-Name"] = []string{string(name)}
		}
	} else if f.session != "" {
		h["Mcp-Protocol-Version"] = []string{legacyVer}
		h["Mcp-Session-Id"] = []string{f.session}
	}
	return h
}

// call sends a request whose params are given without their closing
// brace (and without _meta, added for a modern server); key selects the
// headers.
func (f *floor) call(ctx context.Context, key, method, params string, result any) error {
	id := f.nextID.Add(1)
	b := make([]byte, 0, 128+len(floorMeta)+len(params))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"method":"`...)
	b = append(b, method...)
	b = append(b, `","params":`...)
	switch {
	case f.modern && params == "{":
		b = append(b, `{"_meta":`+floorMeta+`}`...)
	case f.modern:
		b = append(b, `{"_meta":`+floorMeta+`,`...)
		b = append(b, params[1:]...)
	default:
		if params == "{" {
			params = "{}"
		}
		b = append(b, params...)
	}
	b = append(b, '}')
	if f.cmd != nil {
		return f.pipe(b, result)
	}
	return f.post(ctx, key, b, result)
}

func (f *floor) post(ctx context.Context, key string, body []byte, result any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header = f.headers[key]
	resp, err := f.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if key == "initialize" && result != nil {
		f.session = resp.Header.Get("Mcp-Session-Id")
	}
	buf := bufs.Get().(*bytes.Buffer)
	defer func() { buf.Reset(); bufs.Put(buf) }()
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return err
	}
	if result == nil {
		return nil
	}
	data := buf.Bytes()
	if resp.Header.Get("Content-Type") == "text/event-stream" {
		i := bytes.Index(data, []byte("data: "))
		if i < 0 {
			return errors.New("no data line")
		}
		data = data[i+len("data: "):]
		if j := bytes.IndexByte(data, '\n'); j >= 0 {
			data = data[:j]
		}
	}
	return decodeFloor(data, result)
}

func decodeFloor(data []byte, result any) error {
	msg := struct {
		Result any             `json:"result"`
		Error  json.RawMessage `json:"error"`
	}{Result: result}
	if err := json.Unmarshal(data, &msg); err != nil {
		return err
	}
	if msg.Error != nil {
		return fmt.Errorf("rpc error %s", msg.Error)
	}
	return nil
}

func (f *floor) pipe(b []byte, result any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.in.Write(append(b, '\n')); err != nil {
		return err
	}
	line, err := f.out.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		first := append([]byte(nil), line...) // ReadSlice's bytes do not outlive the next read
		var rest []byte
		rest, err = f.out.ReadBytes('\n')
		line = append(first, rest...)
	}
	if err != nil {
		return err
	}
	return decodeFloor(line, result)
}

func (f *floor) list(ctx context.Context) (int, error) {
	n, params := 0, "{"
	for {
		var p floorPage
		if err := f.call(ctx, "tools/list", "tools/list", params, &p); err != nil {
			return n, err
		}
		n += len(p.Tools)
		if p.NextCursor == "" {
			return n, nil
		}
		params = `{"cursor":"` + p.NextCursor + `"}`
	}
}

func (f *floor) text(ctx context.Context, name string, want int) error {
	var res floorText
	if err := f.call(ctx, "tools/call "+name, "tools/call", `{"name":"`+name+`","arguments":{"text":"hello"}}`, &res); err != nil || len(res.Content) == 0 {
		return cmp.Or(err, checkText(0, "", false, want))
	}
	return checkText(len(res.Content), res.Content[0].Text, res.Content[0].Type == "text", want)
}

func (f *floor) echo(ctx context.Context) error { return f.text(ctx, "echo", echoLen) }
func (f *floor) big(ctx context.Context) error  { return f.text(ctx, "big", bigSize) }

func (f *floor) close() error {
	if f.cmd != nil {
		_ = f.in.Close()
		return f.cmd.Wait()
	}
	if f.session != "" {
		req, err := http.NewRequest(http.MethodDelete, f.url, nil)
		if err != nil {
			return err
		}
		req.Header = f.headers["tools/list"]
		if resp, err := f.hc.Do(req); err == nil {
			resp.Body.Close()
		}
	}
	return nil
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
)

// floor is the lower bound: what Go itself costs to move the same bytes.
// It speaks just enough JSON-RPC by hand: requests built by appending
// bytes, responses read whole into a reused buffer and searched for what
// the phase needs (the result text's extent, the tools' count, the next
// cursor) with bytes.Index, never decoded by a general-purpose decoder and
// never copied out; SSE is reduced to finding the data line. Over stdio it
// is a bare pipe to the same replay server, read into a reused line
// buffer. It trusts the replay servers' encoding (no escapes in the texts
// it measures), which a real client cannot: that is what makes it a floor.
type floor struct {
	hc      *http.Client
	url     string
	modern  bool
	session string
	nextID  atomic.Int64
	headers map[string]http.Header // by method and tool name

	// stdio
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	mu   sync.Mutex
	line []byte // a line longer than out's buffer, gathered
	req  []byte // the request being written
}

// floorMeta is the _meta of a modern request.
const floorMeta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"floor","version":"1.0.0"}}`

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
	for _, k := range []string{"server/discover", "initialize", "tools/list", "tools/call echo", "tools/call big", "tools/call huge"} {
		f.headers[k] = f.header(k)
	}
	var err error
	if f.modern {
		err = f.call(ctx, "server/discover", "server/discover", "{", hasResult)
	} else {
		err = f.call(ctx, "initialize", "initialize",
			`{"protocolVersion":"`+legacyVer+`","capabilities":{},"clientInfo":{"name":"floor","version":"1.0.0"}}`, hasResult)
		if err == nil {
			err = f.post(ctx, "initialize", []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil)
		}
		f.headers = map[string]http.Header{}
		for _, k := range []string{"tools/list", "tools/call echo", "tools/call big", "tools/call huge"} {
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
// headers. read gets the response message, whose bytes are valid only
// until it returns.
func (f *floor) call(ctx context.Context, key, method, params string, read func(msg []byte) error) error {
	if f.cmd != nil {
		f.mu.Lock() // the request buffer and the pipe are the session's
		defer f.mu.Unlock()
	}
	b := f.req[:0]
	if f.cmd == nil {
		b = make([]byte, 0, 128+len(floorMeta)+len(params))
	}
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, f.nextID.Add(1), 10)
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
		f.req = append(b, '\n')
		return f.pipe(f.req, read)
	}
	return f.post(ctx, key, b, read)
}

func (f *floor) post(ctx context.Context, key string, body []byte, read func([]byte) error) error {
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
	if key == "initialize" && read != nil {
		f.session = resp.Header.Get("Mcp-Session-Id")
	}
	buf := bufs.Get().(*bytes.Buffer)
	defer func() { buf.Reset(); bufs.Put(buf) }()
	if resp.ContentLength > 0 {
		buf.Grow(int(resp.ContentLength))
	}
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return err
	}
	if read == nil {
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
	return read(data)
}

// pipe writes b, a request line, and reads the response line.
func (f *floor) pipe(b []byte, read func([]byte) error) error {
	if _, err := f.in.Write(b); err != nil {
		return err
	}
	line, err := f.out.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		f.line = append(f.line[:0], line...) // ReadSlice's bytes do not outlive the next read
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = f.out.ReadSlice('\n')
			f.line = append(f.line, line...)
		}
		line = f.line
	}
	if err != nil {
		return err
	}
	return read(line)
}

// resultOf returns the bytes from a response's result on, or an error for
// an error response.
func resultOf(msg []byte) ([]byte, error) {
	i := bytes.Index(msg, []byte(`"result":`))
	if i < 0 {
		return nil, fmt.Errorf("no result in %.200s", msg)
	}
	return msg[i+len(`"result":`):], nil
}

func hasResult(msg []byte) error {
	_, err := resultOf(msg)
	return err
}

func (f *floor) list(ctx context.Context) (int, error) {
	n, params := 0, "{"
	for {
		var cursor string
		err := f.call(ctx, "tools/list", "tools/list", params, func(msg []byte) error {
			res, err := resultOf(msg)
			if err != nil {
				return err
			}
			n += bytes.Count(res, []byte(`"inputSchema":`))
			if i := bytes.Index(res, []byte(`"nextCursor":"`)); i >= 0 {
				c := res[i+len(`"nextCursor":"`):]
				cursor = string(c[:bytes.IndexByte(c, '"')])
			}
			return nil
		})
		if err != nil || cursor == "" {
			return n, err
		}
		params = `{"cursor":"` + cursor + `"}`
	}
}

// floorText finds the extent of the first content block's text: the number of
// blocks (by their "type" members), whether the first is text, and the
// text's length, which has no escapes in what the servers send.
func floorText(msg []byte) (blocks int, isText bool, textLen int, err error) {
	res, err := resultOf(msg)
	if err != nil {
		return 0, false, 0, err
	}
	blocks = bytes.Count(res, []byte(`"type":"`))
	isText = bytes.Contains(res, []byte(`"type":"text"`))
	i := bytes.Index(res, []byte(`"text":"`))
	if i < 0 {
		return blocks, isText, 0, nil
	}
	t := res[i+len(`"text":"`):]
	end := bytes.IndexByte(t, '"')
	if end < 0 || bytes.IndexByte(t[:end], '\\') >= 0 {
		return 0, false, 0, errors.New("floor: unterminated or escaped text")
	}
	return blocks, isText, end, nil
}

func (f *floor) text(ctx context.Context, name string, want int, held func()) error {
	return f.call(ctx, "tools/call "+name, "tools/call", `{"name":"`+name+`","arguments":{"text":"hello"}}`, func(msg []byte) error {
		blocks, isText, n, err := floorText(msg)
		if err != nil {
			return err
		}
		return checkHeld(held, msg, blocks, n, isText, want)
	})
}

func (f *floor) echo(ctx context.Context) error { return f.text(ctx, "echo", echoLen, nil) }
func (f *floor) big(ctx context.Context) error  { return f.text(ctx, "big", bigSize, nil) }
func (f *floor) huge(ctx context.Context, held func()) error {
	return f.text(ctx, "huge", hugeSize, held)
}

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

package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"

	"git.rickub.com/bots-garden/mini-me/internal/jsonrpc"
)

// The fuzz targets of the parsers and encoders that read what a server
// sends (messages, stdout lines, schemas) or what a host passes (arguments,
// names, environment). Their seeds run with every go test.

// FuzzDispatch feeds one message, as a stdio line or an SSE event carries
// it, to the mux with three calls pending. Either dispatch refuses it and
// nothing happens, or exactly one thing happens and it agrees with the
// message: the response reaches the call of its id (or is dropped), the
// notification is delivered, or the request is answered with its own id.
// A response is routed unread to its call, whose decoding of it must agree
// with an independent one: the same result or error, and ErrProtocol for
// one that does not decode.
func FuzzDispatch(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`,
		`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no","data":{"x":1}}}`,
		`{"jsonrpc":"2.0","id":"3","result":{}}`,
		`{"jsonrpc":"2.0","id":3,"result":null}`,
		`{"jsonrpc":"2.0","id":99,"result":{}}`,
		`{"jsonrpc":"2.0","id":1.0,"result":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`,
		`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
		`{"jsonrpc":"2.0","id":7,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"x","method":"roots/list","params":{}}`,
		`{"jsonrpc":"2.0","id":8,"method":"elicitation/create","params":{"message":"?","requestedSchema":{"type":"object"}}}`,
		`{"jsonrpc":"2.0","error":{"code":-32700,"message":"parse error"}}`,
		`{"jsonrpc":"1.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":null,"result":{}}`,
		`{"jsonrpc":"2.0","id":true,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"result":{},"id":2}`,
		`[{"jsonrpc":"2.0","id":1,"result":{}}]`,
		`{"jsonrpc":"2.0","id":1,"method":"","result":{}}`,
		`{"jsonrpc":"2.0","id":1,"result":tru}`,
		`{"jsonrpc":"2.0","id":2,"result":{"a":"\\\"}"}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"text":"cut`,
		`{"jsonrpc":"2.0","ID":1,"result":{},"id":2}`,
		`{"jsonrpc":"2.0","id":1,"result":{"a":[1,{"b":"]}"}]}} x`,
		` {"result":{"n":1} , "id" : 3 ,"jsonrpc":"2.0"} `,
		"not json", "", "{}", "null",
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, modern bool) {
		c := &Client{log: slog.New(discardHandler{})}
		var mu sync.Mutex
		var notified []string
		var replies []jsonrpc.Response
		m := newMux(c, func(_ context.Context, r jsonrpc.Response) error {
			mu.Lock()
			replies = append(replies, r)
			mu.Unlock()
			return nil
		}, func(method string, _ json.RawMessage) {
			notified = append(notified, method)
		}, func() bool { return modern })
		chans := map[int64]chan delivery{}
		for id := int64(1); id <= 3; id++ {
			ch, err := m.register(id)
			if err != nil {
				t.Fatal(err)
			}
			chans[id] = ch
		}
		ctx := context.Background()
		_, err := m.dispatch(ctx, bytes.Clone(data), nil)
		m.answers.wait(ctx, m.c.log)

		var got []int64
		var rp delivery
		for id, ch := range chans {
			select {
			case rp = <-ch:
				got = append(got, id)
			default:
			}
		}
		events := len(got) + len(notified) + len(replies)
		if err != nil {
			if events != 0 {
				t.Fatalf("refused (%v), yet %d responses, notifications %q, replies %+v", err, len(got), notified, replies)
			}
			return
		}
		if events > 1 {
			t.Fatalf("one message did %d things: responses to %v, notifications %q, replies %+v", events, got, notified, replies)
		}
		// What an independent decoding says the message is.
		var raw json.RawMessage
		want := jsonrpc.Message{Result: &raw}
		uerr := json.Unmarshal(data, &want)
		if uerr == nil {
			uerr = want.Check()
		}
		var res json.RawMessage
		var derr error
		if len(got) == 1 {
			derr = m.decode("tools/call", rp, &res)
		}
		if uerr != nil {
			if len(got) != 1 || !errors.Is(derr, ErrProtocol) {
				t.Fatalf("dispatch accepted %q, which does not decode (%v); delivered to %v, decoded as %v", data, uerr, got, derr)
			}
			return
		}
		switch {
		case len(got) == 1:
			id, perr := strconv.ParseInt(string(want.ID), 10, 64)
			if perr != nil || id != got[0] || !want.IsResponse() {
				t.Fatalf("response with id %s delivered to call %d", want.ID, got[0])
			}
			var rpc *RPCError
			switch {
			case want.Error != nil:
				if !errors.As(derr, &rpc) || rpc.Code != want.Error.Code || rpc.Message != want.Error.Message {
					t.Fatalf("error response %q decoded as %v", data, derr)
				}
			case len(raw) == 0 || string(raw) == "null":
				if !errors.Is(derr, ErrProtocol) {
					t.Fatalf("response %q without a result decoded as %v", data, derr)
				}
			case derr != nil || !bytes.Equal(res, raw):
				t.Fatalf("response %q decoded as %s, %v; want %s", data, res, derr, raw)
			}
		case len(notified) == 1:
			if !want.IsNotification() || notified[0] != want.Method {
				t.Fatalf("%q notified as %q", data, notified[0])
			}
		case len(replies) == 1:
			r := replies[0]
			if want.IsResponse() || want.IsNotification() || modern {
				t.Fatalf("%q (modern %v) answered with %+v", data, modern, r)
			}
			if !bytes.Equal(r.ID, want.ID) || (r.Error == nil) == (r.Result == nil) {
				t.Fatalf("request %q answered with id %s, result %v, error %v", data, r.ID, r.Result, r.Error)
			}
		default:
			// Nothing happened: a response to no pending call, or a
			// request a modern server may not send.
			if want.IsNotification() {
				t.Fatalf("notification %q not delivered", data)
			}
			if want.IsResponse() {
				if id, perr := strconv.ParseInt(string(want.ID), 10, 64); perr == nil && id >= 1 && id <= 3 {
					t.Fatalf("response %q to pending call %d not delivered", data, id)
				}
			} else if !modern {
				t.Fatalf("request %q not answered", data)
			}
		}
	})
}

// FuzzReadLine checks the stdio framing: split into lines of at most max
// bytes, the stream reads back as the lines between "\n", each without its
// "\r\n" or "\n", whatever the buffer size; a longer line, and only that,
// fails with ErrTooLarge.
func FuzzReadLine(f *testing.F) {
	f.Add([]byte("{\"jsonrpc\":\"2.0\"}\n{\"a\":1}\r\n"), uint16(64), byte(0))
	f.Add([]byte("no end of line"), uint16(14), byte(3))
	f.Add([]byte("\n\n\r\n\r\r\n"), uint16(1), byte(0))
	f.Add([]byte("0123456789abcdef0123456789abcdef0123\n"), uint16(36), byte(1))
	f.Add([]byte("0123456789abcdef0123456789abcdef0123\r\n"), uint16(36), byte(1))
	f.Fuzz(func(t *testing.T, in []byte, max uint16, bufSize byte) {
		lim := int64(max)
		r := bufio.NewReaderSize(bytes.NewReader(in), 16+int(bufSize))
		want := bytes.Split(in, []byte("\n"))
		if len(want[len(want)-1]) == 0 {
			want = want[:len(want)-1] // the stream ends with "\n"
		}
		var buf []byte
		for i := 0; ; i++ {
			line, err := readLine(r, buf[:0], lim)
			buf = line
			if i > len(want) {
				t.Fatalf("more than %d lines", len(want))
			}
			var exp []byte
			if i < len(want) {
				exp = bytes.TrimSuffix(want[i], []byte("\r"))
			}
			if errors.Is(err, ErrTooLarge) {
				if int64(len(exp)) <= lim {
					t.Fatalf("line %d of %d bytes refused at a limit of %d", i, len(exp), lim)
				}
				return
			}
			if int64(len(line)) > lim {
				t.Fatalf("line %d of %d bytes returned at a limit of %d", i, len(line), lim)
			}
			if err != nil && err != io.EOF {
				t.Fatalf("line %d: %v", i, err)
			}
			if i < len(want) && !bytes.Equal(line, exp) {
				t.Fatalf("line %d: got %q, want %q", i, line, exp)
			}
			if err == io.EOF {
				if i < len(want)-1 || len(line) > 0 && i != len(want)-1 {
					t.Fatalf("EOF at line %d of %d", i, len(want))
				}
				return
			}
		}
	})
}

// FuzzMarshalArgs checks that tool arguments are either refused with an
// error or sent as a JSON object, never a panic; marshalling the result
// again changes nothing.
func FuzzMarshalArgs(f *testing.F) {
	for _, s := range []string{`{"a":1}`, ` {"a":1}`, "", "null", "[1]", `"s"`, "{", `{"a":1} x`, "\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, args := range []any{json.RawMessage(in), in} {
			raw, err := marshalArgs(args)
			if err != nil {
				continue
			}
			if raw == nil {
				if len(in) != 0 && string(in) != "null" {
					t.Fatalf("arguments %q dropped", in)
				}
				continue
			}
			if obj := bytes.TrimLeft(raw, " \t\r\n"); len(obj) == 0 || obj[0] != '{' {
				t.Fatalf("%q sent as arguments", raw)
			}
			again, err := marshalArgs(raw)
			if err != nil || !bytes.Equal(again, raw) {
				t.Fatalf("%q marshals again to %q, %v", raw, again, err)
			}
		}
		// A map is encoded as encoding/json encodes it, byte for byte.
		for _, m := range []any{map[string]string{"v": string(in), string(in): "k"}, map[string]any{"v": string(in), string(in): 1}} {
			raw, err := marshalArgs(m)
			want, _ := json.Marshal(m)
			if err != nil || !json.Valid(raw) || !bytes.Equal(raw, want) {
				t.Fatalf("a map gave %q, %v; encoding/json gives %q", raw, err, want)
			}
		}
	})
}

// decodeHeaderValue is what a server does with an Mcp-Name or Mcp-Param-*
// header value.
func decodeHeaderValue(v string) (string, error) {
	if rest, ok := strings.CutPrefix(v, "=?base64?"); ok {
		if b64, ok := strings.CutSuffix(rest, "?="); ok {
			b, err := base64.StdEncoding.DecodeString(b64)
			return string(b), err
		}
	}
	return v, nil
}

// FuzzHeaderValue checks that any value is sent as a header value a
// server can read back exactly: visible ASCII, spaces and tabs inside, and
// unchanged when it was already safe.
func FuzzHeaderValue(f *testing.F) {
	for _, s := range []string{"plain", "", " lead", "trail\t", "é", "a\r\nInjected: 1", "=?base64?aGk=?=", "=?base64?", "\x00", "\x7f", "a b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		enc := encodeHeaderValue(v)
		if enc != encodeHeaderValue(v) {
			t.Fatal("not deterministic")
		}
		if enc != strings.Trim(enc, " \t") {
			t.Fatalf("%q has leading or trailing white space", enc)
		}
		for i := 0; i < len(enc); i++ {
			if c := enc[i]; (c < 0x21 || c > 0x7e) && c != ' ' && c != '\t' {
				t.Fatalf("%q holds byte %#x", enc, c)
			}
		}
		dec, err := decodeHeaderValue(enc)
		if err != nil || dec != v {
			t.Fatalf("%q encodes to %q, which decodes to %q, %v", v, enc, dec, err)
		}
		if headerSafe(v) && enc != v {
			t.Fatalf("safe %q encoded as %q", v, enc)
		}
	})
}

// FuzzToolHeaders checks x-mcp-header extraction: a schema gives either an
// error or header parameters with unique token names on properties paths,
// sorted; and the headers built from any arguments carry exactly the
// values the arguments hold, encoded.
func FuzzToolHeaders(f *testing.F) {
	schema := `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},` +
		`"n":{"type":["integer","null"],"x-mcp-header":"N"},"o":{"type":"object","properties":{"b":{"type":"boolean","x-mcp-header":"Deep"}}}}}`
	f.Add([]byte(schema), []byte(`{"region":"eu-west-1","n":42,"o":{"b":true}}`))
	f.Add([]byte(schema), []byte(`{"region":"Zürich ","n":9007199254740992}`))
	f.Add([]byte(schema), []byte(`{"region":1,"n":1.5,"o":{"b":"x"}}`))
	f.Add([]byte(schema), []byte(`{"region":null,"n":-0,"o":[]}`))
	f.Add([]byte(schema), []byte(`{"n":1e3}`))
	f.Add([]byte(`{"properties":{"a":{"type":"string","x-mcp-header":"A"},"b":{"type":"string","x-mcp-header":"a"}}}`), []byte(`{"a":"1","b":"2"}`))
	f.Add([]byte(`{"x-mcp-header":"Root","type":"string"}`), []byte(`"x"`))
	f.Add([]byte(`{"properties":{"a":{"anyOf":[{"type":"string","x-mcp-header":"A"}]}}}`), []byte(`{}`))
	f.Add([]byte(`{"properties":{"a":{"type":"string","x-mcp-header":"bad name"}}}`), []byte(`{}`))
	f.Add([]byte(`{"properties":{"a":{"type":"number","x-mcp-header":"A"}}}`), []byte(`{}`))
	f.Add([]byte(`{"properties":{"a":{"type":"string","x-mcp-header":7}}}`), []byte(`{}`))
	f.Fuzz(func(t *testing.T, schema, args []byte) {
		params, err := toolHeaders(schema)
		again, err2 := toolHeaders(schema)
		if fmt.Sprint(params, err) != fmt.Sprint(again, err2) {
			t.Fatalf("not deterministic: %v, %v then %v, %v", params, err, again, err2)
		}
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for i, p := range params {
			if !isToken(p.name) || len(p.path) == 0 || seen[strings.ToLower(p.name)] {
				t.Fatalf("bad header parameter %+v in %v", p, params)
			}
			seen[strings.ToLower(p.name)] = true
			if i > 0 && strings.Join(params[i-1].path, "\x00") >= strings.Join(p.path, "\x00") {
				t.Fatalf("not sorted: %v", params)
			}
		}
		hs, err := paramHeaders(params, args)
		if err != nil {
			return
		}
		if len(hs) > len(params) {
			t.Fatalf("%d headers for %d parameters", len(hs), len(params))
		}
		for _, h := range hs {
			var p *headerParam
			for i := range params {
				if h.name == "Mcp-Param-"+params[i].name {
					p = &params[i]
				}
			}
			if p == nil {
				t.Fatalf("header %s names no parameter", h.name)
			}
			v, err := decodeHeaderValue(h.value)
			if err != nil {
				t.Fatalf("header %s: %q: %v", h.name, h.value, err)
			}
			raw, _ := lookup(args, p.path)
			var s string
			if json.Unmarshal(raw, &s) != nil {
				s = string(raw) // an integer or a boolean, as sent
			}
			if v != s {
				t.Fatalf("header %s carries %q for argument %s", h.name, v, raw)
			}
		}
	})
}

// FuzzChildEnv checks ${NAME} and $NAME expansion in a stdio server's
// environment: a value without references is kept as is, $$ is a dollar,
// a reference to an unset variable is an error that names it and never
// shows a value, and a set one is replaced by its value.
func FuzzChildEnv(f *testing.F) {
	f.Setenv("FUZZ_SECRET", "s3cr3t-token")
	f.Setenv("FUZZ_EMPTY", "")
	for _, s := range []string{"plain", "${FUZZ_SECRET}", "$FUZZ_SECRET/x", "$$FUZZ_SECRET", "${FUZZ_UNSET_VAR}", "${FUZZ_EMPTY}x", "${", "$", "${}", "${FUZZ_SECRET", "$1", "${a b}", "é$"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		env, err := childEnv(map[string]string{"FUZZ_VALUE": v})
		env2, err2 := childEnv(map[string]string{"FUZZ_VALUE": v})
		if fmt.Sprint(env, err) != fmt.Sprint(env2, err2) {
			t.Fatal("not deterministic")
		}
		if err != nil {
			if strings.Contains(err.Error(), "s3cr3t-token") {
				t.Fatalf("error shows a value: %v", err)
			}
			if !strings.Contains(v, "$") || !strings.Contains(err.Error(), "is not set") {
				t.Fatalf("%q: %v", v, err)
			}
			return
		}
		var got string
		n := 0
		for _, kv := range env {
			if val, ok := strings.CutPrefix(kv, "FUZZ_VALUE="); ok {
				got, n = val, n+1
			}
		}
		if n != 1 {
			t.Fatalf("FUZZ_VALUE set %d times in %q", n, env)
		}
		if !strings.Contains(v, "$") && got != v {
			t.Fatalf("%q expanded to %q", v, got)
		}
		if strings.Contains(v, "${FUZZ_SECRET}") && !strings.Contains(got, "s3cr3t-token") {
			t.Fatalf("%q expanded to %q", v, got)
		}
	})
}

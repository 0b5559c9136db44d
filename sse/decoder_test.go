package sse

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// whatwgCases follow the event stream interpretation rules of the WHATWG
// HTML standard, section 9.2.6; several are the standard's own examples.
var whatwgCases = []struct {
	name string
	in   string
	want decoded
}{
	{"empty stream", "", decoded{}},
	{"one event", "data: hello\n\n",
		decoded{events: []Event{{Data: "hello"}}}},
	{"one leading space is stripped", "data:  two\n\n",
		decoded{events: []Event{{Data: " two"}}}},
	{"no space after the colon", "data:x\n\n",
		decoded{events: []Event{{Data: "x"}}}},
	{"only a space", "data:  \n\n",
		decoded{events: []Event{{Data: " "}}}},
	{"colon in the value", "data: a:b: c\n\n",
		decoded{events: []Event{{Data: "a:b: c"}}}},
	{"standard example: same data with and without space", "data:test\n\ndata: test\n\n",
		decoded{events: []Event{{Data: "test"}, {Data: "test"}}}},
	{"standard example: multi-line data", "data: YHOO\ndata: +2\ndata: 10\n\n",
		decoded{events: []Event{{Data: "YHOO\n+2\n10"}}}},
	{"standard example: empty data is dispatched, unterminated event is not", "data\n\ndata\ndata\n\ndata:",
		decoded{events: []Event{{Data: ""}, {Data: "\n"}}, incomplete: true}},
	{"standard example: comments and ids",
		": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n",
		decoded{events: []Event{{Data: "first event", ID: "1"}, {Data: "second event"}, {Data: " third event"}}}},
	{"standard example: event types",
		"event: add\ndata: 73857293\n\nevent: remove\ndata: 2153\n\nevent: add\ndata: 113411\n\n",
		decoded{events: []Event{{Type: "add", Data: "73857293"}, {Type: "remove", Data: "2153"}, {Type: "add", Data: "113411"}}}},
	{"event type is reset after dispatch", "event: a\ndata: 1\n\ndata: 2\n\n",
		decoded{events: []Event{{Type: "a", Data: "1"}, {Data: "2"}}}},
	{"event type is reset by a block without data", "event: a\n\ndata: 2\n\n",
		decoded{events: []Event{{Data: "2"}}}},
	{"last event type wins", "event: a\nevent: b\ndata: 1\n\n",
		decoded{events: []Event{{Type: "b", Data: "1"}}}},
	{"unknown fields are ignored", "foo: bar\ndata: x\nData: y\nDATA\ndata : z\n\n",
		decoded{events: []Event{{Data: "x"}}}},
	{"field names longer than known ones", "dataxx: y\nretryx: 5\nevents: e\n\n", decoded{}},
	{"block of unknown fields is not dispatched", "foo: bar\n\n", decoded{}},
	{"comments are ignored", ": keep-alive\n\n:\n\n:data: x\n\n", decoded{}},
	{"comments inside an event", "data: a\n: ping\ndata: b\n\n",
		decoded{events: []Event{{Data: "a\nb"}}}},
	{"NUL is data", "data: a\x00b\n\n",
		decoded{events: []Event{{Data: "a\x00b"}}}},
	{"id applies to later events", "id: 7\ndata: a\n\ndata: b\n\n",
		decoded{events: []Event{{Data: "a", ID: "7"}, {Data: "b", ID: "7"}}, lastID: "7"}},
	{"empty id resets it", "id: 7\ndata: a\n\nid\ndata: b\n\n",
		decoded{events: []Event{{Data: "a", ID: "7"}, {Data: "b"}}}},
	{"id with NUL is ignored", "id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n",
		decoded{events: []Event{{Data: "a", ID: "1"}, {Data: "b", ID: "1"}}, lastID: "1"}},
	{"block with only an ignored id is not an event", "id: 1\x00\n\ndata\n\n",
		decoded{events: []Event{{Data: ""}}}},
	{"ignored id at EOF leaves no event pending", "data: a\n\nid: \x00\n",
		decoded{events: []Event{{Data: "a"}}}},
	{"id block without data is not dispatched but sets the last event ID", "id: 5\n\n",
		decoded{lastID: "5"}},
	{"event block without data is not dispatched", "event: x\n\n", decoded{}},
	{"id before a data-less block shows on the next event", "id: 1\nevent: x\n\ndata: a\n\n",
		decoded{events: []Event{{Data: "a", ID: "1"}}, lastID: "1"}},
	{"MCP priming event without data", "id: p1\nretry: 100\n\n",
		decoded{lastID: "p1", retry: 100 * time.Millisecond, hasRetry: true}},
	{"MCP priming event with an empty data field is dispatched", "id: p1\nretry: 100\ndata: \n\n",
		decoded{events: []Event{{ID: "p1"}}, lastID: "p1", retry: 100 * time.Millisecond, hasRetry: true}},
	{"retry", "retry: 1500\n\n",
		decoded{retry: 1500 * time.Millisecond, hasRetry: true}},
	{"retry without space, leading zeros", "retry:00042\n\n",
		decoded{retry: 42 * time.Millisecond, hasRetry: true}},
	{"retry zero", "retry: 0\n\n",
		decoded{retry: 0, hasRetry: true}},
	{"last retry wins", "retry: 10\n\nretry: 20\ndata: x\n\n",
		decoded{events: []Event{{Data: "x"}}, retry: 20 * time.Millisecond, hasRetry: true}},
	{"invalid retry values are ignored",
		"retry: 10\nretry: 15x\nretry: -1\nretry: 1.5\nretry:\nretry\nretry:  15\nretry: +3\nretry: 99999999999999999999\n\n",
		decoded{retry: 10 * time.Millisecond, hasRetry: true}},
	{"largest retry", "retry: 9223372036854\n\n",
		decoded{retry: 9223372036854 * time.Millisecond, hasRetry: true}},
	{"retry too large for a Duration", "retry: 9223372036855\n\n", decoded{}},
	{"CR line endings", "data: a\rdata: b\r\r",
		decoded{events: []Event{{Data: "a\nb"}}}},
	{"CRLF line endings", "id: 1\r\ndata: a\r\ndata: b\r\n\r\n",
		decoded{events: []Event{{Data: "a\nb", ID: "1"}}, lastID: "1"}},
	{"mixed line endings", "data: a\r\ndata: b\ndata: c\r\r\ndata: d\n\r",
		decoded{events: []Event{{Data: "a\nb\nc"}, {Data: "d"}}}},
	{"LF CR is two line endings", "data: a\n\rdata: b\n\n",
		decoded{events: []Event{{Data: "a"}, {Data: "b"}}}},
	{"blank lines before the first event", "\n\r\n\r\ndata: a\n\n",
		decoded{events: []Event{{Data: "a"}}}},
	{"BOM is stripped", "\uFEFFdata: a\n\n",
		decoded{events: []Event{{Data: "a"}}}},
	{"only one BOM is stripped", "\uFEFF\uFEFFdata: a\n\ndata: b\n\n",
		decoded{events: []Event{{Data: "b"}}}},
	{"BOM followed by a blank line", "\uFEFF\ndata: a\n\n",
		decoded{events: []Event{{Data: "a"}}}},
	{"BOM after a blank line is not stripped", "\n\uFEFFdata: a\n\ndata: b\n\n",
		decoded{events: []Event{{Data: "b"}}}},
	{"BOM in a later line is not stripped", "data: a\n\n\uFEFFdata: b\n\n",
		decoded{events: []Event{{Data: "a"}}}},
	{"part of a BOM", "\xEF\xBBdata: a\n\ndata: b\n\n",
		decoded{events: []Event{{Data: "b"}}}},
	{"only a BOM", "\uFEFF", decoded{}},
	{"unterminated event at EOF", "data: a\n",
		decoded{incomplete: true}},
	{"unterminated line at EOF", "data: a\n\ndata: b",
		decoded{events: []Event{{Data: "a"}}, incomplete: true}},
	{"unterminated comment at EOF", "data: a\n\n: bye",
		decoded{events: []Event{{Data: "a"}}, incomplete: true}},
	{"unterminated id is not applied", "id: 1\ndata: a\n\nid: 2\n",
		decoded{events: []Event{{Data: "a", ID: "1"}}, lastID: "1", incomplete: true}},
	{"complete comment after the last event", "data: a\n\n: bye\n",
		decoded{events: []Event{{Data: "a"}}}},
	{"retry line after the last event", "data: a\n\nretry: 5\n",
		decoded{events: []Event{{Data: "a"}}, retry: 5 * time.Millisecond, hasRetry: true}},
	{"unterminated retry line is not applied", "retry: 5",
		decoded{incomplete: true}},
	{"CR ends the stream's last line", "data: a\n\r",
		decoded{events: []Event{{Data: "a"}}}},
	{"partial BOM at EOF", "\xEF\xBB", decoded{incomplete: true}},
}

func TestWHATWG(t *testing.T) {
	readers := []struct {
		name string
		wrap func(string) io.Reader
	}{
		{"whole", func(s string) io.Reader { return strings.NewReader(s) }},
		{"one byte", func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) }},
		{"data with EOF", func(s string) io.Reader { return iotest.DataErrReader(strings.NewReader(s)) }},
		{"chunks of 1, 2, 3", func(s string) io.Reader { return &chunkReader{s: s, sizes: []int{1, 2, 3}} }},
	}
	for _, tc := range whatwgCases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := sameDecoded(referenceDecode(tc.in), tc.want); diff != "" {
				t.Fatalf("reference decoder disagrees with the case:\n%s", diff)
			}
			for _, r := range readers {
				got, err := decodeAll(t, r.wrap(tc.in), nil)
				if err != nil {
					t.Fatalf("%s: %v", r.name, err)
				}
				if diff := sameDecoded(got, tc.want); diff != "" {
					t.Errorf("%s:\n%s", r.name, diff)
				}
			}
		})
	}
}

func TestIncompleteErrorMessage(t *testing.T) {
	var got error
	for _, err := range NewDecoder(strings.NewReader("data: a"), nil).Events(context.Background()) {
		got = err
	}
	if !errors.Is(got, io.ErrUnexpectedEOF) || got.Error() != "sse: stream ended inside an event: unexpected EOF" {
		t.Fatalf("got %v", got)
	}
}

func TestLastEventIDWhileIterating(t *testing.T) {
	in := "id: 1\ndata: a\n\nid: 2\n\nid: 3\ndata: b\n\n"
	d := NewDecoder(strings.NewReader(in), nil)
	var seen []string
	for ev, err := range d.Events(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, ev.Data+"@"+d.LastEventID())
		if ev.Data == "a" {
			break
		}
	}
	if got := strings.Join(seen, " "); got != "a@1" || d.LastEventID() != "1" {
		t.Fatalf("seen %q, LastEventID %q after break", got, d.LastEventID())
	}
}

func TestBadArguments(t *testing.T) {
	used := NewDecoder(strings.NewReader("data: a\n\n"), nil)
	for range used.Events(context.Background()) {
	}
	cases := []struct {
		name string
		d    *Decoder
		ctx  context.Context
		want string
	}{
		{"nil reader", NewDecoder(nil, nil), context.Background(), "sse: nil reader"},
		{"negative size", NewDecoder(strings.NewReader(""), &Options{MaxEventSize: -1}), context.Background(), "sse: negative MaxEventSize -1"},
		{"negative timeout", NewDecoder(strings.NewReader(""), &Options{IdleTimeout: -time.Second}), context.Background(), "sse: negative IdleTimeout -1s"},
		{"nil context", NewDecoder(strings.NewReader(""), nil), nil, "sse: nil context"},
		{"second iteration", used, context.Background(), "sse: Decoder.Events iterated more than once"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			for ev, err := range tc.d.Events(tc.ctx) {
				n++
				if err == nil || err.Error() != tc.want || ev != (Event{}) {
					t.Errorf("got %+v, %v; want error %q", ev, err, tc.want)
				}
			}
			if n != 1 {
				t.Errorf("yielded %d times, want once", n)
			}
		})
	}
}

package sse

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestResetDecodesEachStreamAlone reuses one Decoder for every WHATWG case,
// forwards and backwards, so that each stream follows others that left ids,
// retries, types and partial events behind: each must decode as if alone.
func TestResetDecodesEachStreamAlone(t *testing.T) {
	d := NewDecoder(nil, nil)
	for pass := range 2 {
		for i := range whatwgCases {
			c := whatwgCases[i]
			if pass == 1 {
				c = whatwgCases[len(whatwgCases)-1-i]
			}
			d.Reset(strings.NewReader(c.in))
			got, err := drain(t, d)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if diff := sameDecoded(got, c.want); diff != "" {
				t.Errorf("%s, after Reset:\n%s", c.name, diff)
			}
		}
	}
}

// TestResetAfterBreak resets a Decoder whose loop stopped in the middle of
// a stream, with events read ahead and not delivered.
func TestResetAfterBreak(t *testing.T) {
	d := NewDecoder(strings.NewReader("id: 1\nretry: 5\ndata: a\n\ndata: b\n\ndata: c\n\n"), nil)
	for range d.Events(context.Background()) {
		break
	}
	d.Reset(strings.NewReader("data: z\n\n"))
	got, err := drain(t, d)
	if err != nil {
		t.Fatal(err)
	}
	if diff := sameDecoded(got, decoded{events: []Event{{Data: "z"}}}); diff != "" {
		t.Error(diff)
	}
}

// TestResetKeepsOptions checks that a reset Decoder keeps its limit and a
// bad Options' error, and reports a nil reader.
func TestResetKeepsOptions(t *testing.T) {
	d := NewDecoder(strings.NewReader("data: ok\n\n"), &Options{MaxEventSize: 16})
	if _, err := drain(t, d); err != nil {
		t.Fatal(err)
	}
	d.Reset(strings.NewReader("data: " + strings.Repeat("x", 64) + "\n\n"))
	if _, err := drain(t, d); !errors.Is(err, ErrEventTooLarge) {
		t.Errorf("after Reset, a 64-byte event with a 16-byte limit: %v, want ErrEventTooLarge", err)
	}

	bad := NewDecoder(strings.NewReader(""), &Options{MaxEventSize: -1})
	bad.Reset(strings.NewReader("data: x\n\n"))
	if _, err := drain(t, bad); err == nil || !strings.Contains(err.Error(), "negative MaxEventSize") {
		t.Errorf("bad Options after Reset: %v, want the negative MaxEventSize error", err)
	}

	d.Reset(nil)
	if _, err := drain(t, d); err == nil || !strings.Contains(err.Error(), "nil reader") {
		t.Errorf("Reset(nil): %v, want the nil reader error", err)
	}
}

// TestResetAllocatesNoDecoder: a short stream decoded with a reused Decoder
// costs fewer allocations than with a new one (the Decoder itself, its
// queue and spans). Counts, not time.
func TestResetAllocatesNoDecoder(t *testing.T) {
	const stream = "id: 3\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n\n"
	ctx := context.Background()
	readAll := func(d *Decoder) {
		for _, err := range d.RawEvents(ctx) {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	fresh := testing.AllocsPerRun(200, func() { readAll(NewDecoder(strings.NewReader(stream), nil)) })
	d := NewDecoder(nil, nil)
	r := strings.NewReader(stream)
	reused := testing.AllocsPerRun(200, func() {
		r.Reset(stream)
		d.Reset(r)
		readAll(d)
	})
	if reused >= fresh {
		t.Errorf("%v allocations per stream with Reset, %v with NewDecoder: want fewer", reused, fresh)
	}
	t.Logf("allocations per stream: %v with NewDecoder, %v with Reset", fresh, reused)
}

// TestResetDropsLargeBookkeeping: after a stream of an event of many lines,
// Reset keeps at most maxKeptEntries places of lines for the next stream.
func TestResetDropsLargeBookkeeping(t *testing.T) {
	d := NewDecoder(strings.NewReader(strings.Repeat("data:\n", 100_000)+"data: x\n\n"), nil)
	if _, err := drain(t, d); err != nil {
		t.Fatal(err)
	}
	d.Reset(strings.NewReader("data: z\n\n"))
	if n := cap(d.lines.spans); n > maxKeptEntries {
		t.Errorf("after Reset, room for %d data lines kept, want at most %d", n, maxKeptEntries)
	}
	got, err := drain(t, d)
	if err != nil {
		t.Fatal(err)
	}
	if diff := sameDecoded(got, decoded{events: []Event{{Data: "z"}}}); diff != "" {
		t.Error(diff)
	}
}

// TestLongStreamDropsLargeBookkeeping: a stream that stays open (a GET or
// listen stream) lets go of an event of many lines' places once it is
// delivered, rather than keeping them for the stream's life.
func TestLongStreamDropsLargeBookkeeping(t *testing.T) {
	d := NewDecoder(strings.NewReader(strings.Repeat("data:\n", 100_000)+"data: x\n\ndata: y\n\n"), nil)
	n := 0
	for ev, err := range d.Events(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if ev.Data == "y" {
			if c := cap(d.lines.spans); c > maxKeptEntries {
				t.Errorf("after the many-line event, room for %d data lines kept, want at most %d", c, maxKeptEntries)
			}
		}
	}
	if n != 2 {
		t.Errorf("%d events, want 2", n)
	}
}

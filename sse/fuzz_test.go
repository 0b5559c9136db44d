package sse

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
)

// FuzzDecode checks that any stream, delivered in any chunking, decodes
// without panic or hang to what the WHATWG reference decoder says (with
// Events, and with RawEvents, whose reused buffer must not change an
// event once copied; and with a Decoder Reset after a first pass that
// stopped early), and that
// a small MaxEventSize only ever cuts the result short with
// ErrEventTooLarge and never lets a larger event through. The input is
// finite, so a hang shows as the fuzzer's hung-worker failure.
func FuzzDecode(f *testing.F) {
	for _, tc := range whatwgCases {
		f.Add([]byte(tc.in), byte(0))
	}
	sample, err := os.ReadFile("testdata/sample.sse")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(sample, byte(17))

	f.Fuzz(func(t *testing.T, in []byte, chunking byte) {
		stream := string(in)
		want := referenceDecode(stream)
		sizes := []int{1 + int(chunking%7), 1 + int(chunking/7)}

		got, err := decodeAll(t, &chunkReader{s: stream, sizes: sizes}, nil)
		if err != nil {
			t.Fatalf("error %v", err)
		}
		if diff := sameDecoded(got, want); diff != "" {
			t.Fatalf("chunks of %v:\n%s", sizes, diff)
		}

		// The same Decoder again, Reset after a loop that stopped at the
		// first event: nothing of the first pass may show in the second.
		d := NewDecoder(&chunkReader{s: stream, sizes: sizes}, nil)
		for range d.Events(context.Background()) {
			break
		}
		d.Reset(&chunkReader{s: stream, sizes: sizes})
		again, err := drain(t, d)
		if err != nil {
			t.Fatalf("after Reset: error %v", err)
		}
		if diff := sameDecoded(again, want); diff != "" {
			t.Fatalf("after Reset, chunks of %v:\n%s", sizes, diff)
		}

		raw, err := decodeAllRaw(&chunkReader{s: stream, sizes: sizes})
		if err != nil {
			t.Fatalf("RawEvents: error %v", err)
		}
		if !sameEvents(raw, want.events) {
			t.Fatalf("RawEvents, chunks of %v:\ngot  %+v\nwant %+v", sizes, raw, want.events)
		}

		small, err := decodeAll(t, strings.NewReader(stream), &Options{MaxEventSize: 32})
		for _, ev := range small.events {
			if len(ev.Type)+len(ev.Data) > 32 {
				t.Fatalf("with a limit of 32 bytes, got an event of %d bytes: %+v", len(ev.Type)+len(ev.Data), ev)
			}
		}
		switch {
		case err == nil:
			if diff := sameDecoded(small, want); diff != "" {
				t.Fatalf("with a small limit:\n%s", diff)
			}
		case errors.Is(err, ErrEventTooLarge):
			if len(small.events) > len(want.events) || !slices.Equal(small.events, want.events[:len(small.events)]) {
				t.Fatalf("with a small limit, events %+v are not a prefix of %+v", small.events, want.events)
			}
		default:
			t.Fatalf("with a small limit: %v", err)
		}
	})
}

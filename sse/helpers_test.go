package sse

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"testing"
)

// decodeAll decodes a whole stream. A final error matching
// io.ErrUnexpectedEOF is reported as out.incomplete, any other one as err.
// It fails the test if the iterator yields anything after an error.
func decodeAll(t testing.TB, r io.Reader, opts *Options) (out decoded, err error) {
	t.Helper()
	return drain(t, NewDecoder(r, opts))
}

// drain is decodeAll with a Decoder of the caller's.
func drain(t testing.TB, d *Decoder) (out decoded, err error) {
	t.Helper()
	var end error
	for ev, err := range d.Events(context.Background()) {
		if end != nil {
			t.Fatalf("yield after the final error %v: %+v, %v", end, ev, err)
		}
		if err != nil {
			if ev != (Event{}) {
				t.Errorf("error %v yielded with a non-zero event %+v", err, ev)
			}
			end = err
			continue
		}
		out.events = append(out.events, ev)
	}
	out.lastID = d.LastEventID()
	out.retry, out.hasRetry = d.Retry()
	out.incomplete = errors.Is(end, io.ErrUnexpectedEOF)
	if out.incomplete {
		return out, nil
	}
	return out, end
}

// sameDecoded reports how got differs from want, or "" if it does not.
func sameDecoded(got, want decoded) string {
	if len(got.events) == 0 && len(want.events) == 0 {
		got.events, want.events = nil, nil
	}
	if reflect.DeepEqual(got, want) {
		return ""
	}
	return fmt.Sprintf("got  %+v\nwant %+v", got, want)
}

// chunkReader returns s in chunks whose sizes cycle through sizes.
type chunkReader struct {
	s     string
	sizes []int
	next  int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	n := min(c.sizes[c.next%len(c.sizes)], len(p), len(c.s))
	c.next++
	copy(p, c.s[:n])
	c.s = c.s[n:]
	return n, nil
}

// decodeAllRaw decodes a whole stream with RawEvents, copying each
// event's data as the loop body must. A final error matching
// io.ErrUnexpectedEOF is not reported.
func decodeAllRaw(r io.Reader) ([]Event, error) {
	var out []Event
	for ev, err := range NewDecoder(r, nil).RawEvents(context.Background()) {
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return out, nil
			}
			return out, err
		}
		out = append(out, Event{Type: ev.Type, Data: string(ev.Data), ID: ev.ID})
	}
	return out, nil
}

// sameEvents reports whether got and want hold the same events; nil and
// empty are the same.
func sameEvents(got, want []Event) bool {
	return len(got) == len(want) && (len(got) == 0 || reflect.DeepEqual(got, want))
}

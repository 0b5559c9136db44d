package sse

import (
	"bytes"
	"errors"
	"io"
	"runtime/metrics"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// Events longer than a spool chunk are kept back until complete, and come out
// the same, between short ones, whatever the line endings and the read
// sizes.
func TestLongEventsPassWhole(t *testing.T) {
	big := strings.Repeat("x", 3*spoolChunk+17)
	for _, eol := range []string{"\n", "\r", "\r\n"} {
		stream := "data: a" + eol + eol +
			"event: big" + eol + "data: " + big + eol + "data: " + big[:spoolChunk] + eol + eol +
			"data: b" + eol + eol +
			"data: " + big + eol + eol
		for name, r := range map[string]io.Reader{
			"whole":       strings.NewReader(stream),
			"byte a read": iotest.OneByteReader(strings.NewReader(stream)),
			"half reads":  iotest.HalfReader(strings.NewReader(stream)),
		} {
			got, err := decodeAll(t, r, &Options{MaxEventSize: 8 * spoolChunk})
			if err != nil || got.incomplete || len(got.events) != 4 {
				t.Fatalf("%q %s: %d events, incomplete %v, error %v", eol, name, len(got.events), got.incomplete, err)
			}
			want := []Event{{Data: "a"}, {Type: "big", Data: big + "\n" + big[:spoolChunk]}, {Data: "b"}, {Data: big}}
			for i, ev := range got.events {
				if ev != want[i] {
					t.Errorf("%q %s: event %d: type %q, %d bytes of data; want type %q, %d bytes", eol, name, i, ev.Type, len(ev.Data), want[i].Type, len(want[i].Data))
				}
			}
		}
	}
}

// An event of exactly MaxEventSize bytes passes; one byte more is refused.
func TestLongEventAtTheLimit(t *testing.T) {
	const max = 4 * spoolChunk
	event := func(size int) string { // "data: xxx\n\n" of size bytes
		return "data: " + strings.Repeat("x", size-len("data: \n\n")) + "\n\n"
	}
	got, err := decodeAll(t, strings.NewReader(event(max)), &Options{MaxEventSize: max})
	if err != nil || len(got.events) != 1 {
		t.Fatalf("an event of MaxEventSize bytes: %d events, error %v", len(got.events), err)
	}
	_, err = decodeAll(t, strings.NewReader(event(max+1)), &Options{MaxEventSize: max})
	if !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("an event one byte over: error %v, want ErrEventTooLarge", err)
	}
}

// Refusing an event far over the limit allocates about the limit, not the
// twice the limit that go-sse's doubling scanner would.
func TestRefusedEventCostsTheLimit(t *testing.T) {
	const max = 8 << 20
	r := io.MultiReader(strings.NewReader("data: "), &exes{n: 4 * max})
	before := allocatedBytes()
	_, err := decodeAll(t, r, &Options{MaxEventSize: max})
	grew := allocatedBytes() - before
	if !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("error %v, want ErrEventTooLarge", err)
	}
	if grew > max+max/4 {
		t.Errorf("allocated %d bytes refusing the event, want about the %d-byte limit", grew, max)
	}
}

// Every read of a held event counts for the idle timeout: a long event
// that trickles in steadily is not cut.
func TestHeldEventKeepsTheIdleTimer(t *testing.T) {
	pr, pw := io.Pipe()
	go func() {
		defer pw.Close()
		chunk := bytes.Repeat([]byte("x"), spoolChunk/8)
		_, _ = pw.Write([]byte("data: "))
		for range 32 { // four times spoolChunk, in 32 writes over about 1.9 s
			if _, err := pw.Write(chunk); err != nil {
				return
			}
			time.Sleep(60 * time.Millisecond) // pacing the writer; the idle timeout is 1 s
		}
		_, _ = pw.Write([]byte("\n\n"))
	}()
	got, err := decodeAll(t, pr, &Options{IdleTimeout: time.Second})
	if err != nil || len(got.events) != 1 || len(got.events[0].Data) != 4*spoolChunk {
		t.Fatalf("%d events, error %v; want one event of %d bytes", len(got.events), err, 4*spoolChunk)
	}
}

// exes reads n bytes of 'x' with no line ending.
type exes struct{ n int }

func (z *exes) Read(p []byte) (int, error) {
	if z.n == 0 {
		return 0, io.EOF
	}
	k := min(len(p), z.n)
	for i := range p[:k] {
		p[i] = 'x'
	}
	z.n -= k
	return k, nil
}

func allocatedBytes() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

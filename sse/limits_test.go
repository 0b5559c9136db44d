package sse

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestMaxEventSize(t *testing.T) {
	const limit = 64
	event := func(size int) string { // "data: xxx\n\n", size bytes in all
		return "data: " + strings.Repeat("x", size-len("data: \n\n")) + "\n\n"
	}
	cases := []struct {
		name    string
		in      string
		events  int
		tooBig  bool
		message string
	}{
		{"at the limit", event(limit), 1, false, ""},
		{"one byte over", event(limit + 1), 0, true, "sse: event too large: larger than 64 bytes"},
		{"at the limit after small events", "data: a\n\n" + event(limit) + "data: b\n\n", 3, false, ""},
		{"over the limit after small events", "data: a\n\ndata: b\n\n" + event(limit+1) + "data: c\n\n", 2, true, ""},
		{"comments count", strings.Repeat(": ping\n", 10) + "data: a\n\n", 0, true, ""},
		{"blank lines before an event count", strings.Repeat("\n", 60) + event(8), 0, true, ""},
		{"lines of one event count together", strings.Repeat("data: 0123456789\n", 4) + "\n", 0, true, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeAll(t, strings.NewReader(tc.in), &Options{MaxEventSize: limit})
			if len(got.events) != tc.events {
				t.Errorf("got %d events, want %d", len(got.events), tc.events)
			}
			if errors.Is(err, ErrEventTooLarge) != tc.tooBig || (!tc.tooBig && err != nil) {
				t.Errorf("got error %v, want too large: %v", err, tc.tooBig)
			}
			if tc.message != "" && (err == nil || err.Error() != tc.message) {
				t.Errorf("got error %v, want %q", err, tc.message)
			}
		})
	}
}

// endlessReader counts the bytes it returns: an endless data line.
type endlessReader struct{ n int }

func (e *endlessReader) Read(p []byte) (int, error) {
	if e.n == 0 && len(p) >= len("data: ") {
		e.n = copy(p, "data: ")
		return e.n, nil
	}
	for i := range p {
		p[i] = 'x'
	}
	e.n += len(p)
	return len(p), nil
}

func TestDefaultMaxEventSizeBoundsMemory(t *testing.T) {
	r := &endlessReader{}
	got, err := decodeAll(t, r, nil)
	if len(got.events) != 0 || !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("got %d events, error %v; want ErrEventTooLarge", len(got.events), err)
	}
	if r.n > DefaultMaxEventSize {
		t.Errorf("read %d bytes before giving up, more than the %d-byte default", r.n, DefaultMaxEventSize)
	}
	if r.n < DefaultMaxEventSize/2 {
		t.Errorf("gave up after %d bytes, well under the %d-byte default", r.n, DefaultMaxEventSize)
	}
}

// closeRecorder is a pipe reader that notes whether it was closed.
type closeRecorder struct {
	*io.PipeReader
	mu     sync.Mutex
	closed bool
}

func (c *closeRecorder) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	return c.PipeReader.Close()
}

func (c *closeRecorder) wasClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// stalledPipe returns a reader that yields prefix and then blocks until it
// is closed.
func stalledPipe(t *testing.T, prefix string) *closeRecorder {
	t.Helper()
	pr, pw := io.Pipe()
	t.Cleanup(func() { pw.Close() })
	go func() {
		// Ends when the reader takes the prefix or is closed.
		_, _ = pw.Write([]byte(prefix))
	}()
	return &closeRecorder{PipeReader: pr}
}

func TestIdleTimeoutEndsAStalledStream(t *testing.T) {
	const idle = 50 * time.Millisecond
	r := stalledPipe(t, "data: a\n\ndata: partial")
	start := time.Now()
	got, err := decodeAll(t, r, &Options{IdleTimeout: idle})
	elapsed := time.Since(start)

	if len(got.events) != 1 || got.events[0].Data != "a" {
		t.Errorf("got events %+v, want only a", got.events)
	}
	if !errors.Is(err, ErrIdleTimeout) || err.Error() != "sse: idle timeout: no data for 50ms" {
		t.Errorf("got error %v, want ErrIdleTimeout", err)
	}
	if elapsed < idle || elapsed > 5*time.Second {
		t.Errorf("took %v, want about %v", elapsed, idle)
	}
	if !r.wasClosed() {
		t.Error("the stalled reader was not closed")
	}
}

func TestIdleTimeoutIsResetByKeepAlives(t *testing.T) {
	pr, pw := io.Pipe()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer pw.Close()
		for range 40 {
			if _, err := pw.Write([]byte(": ping\n\n")); err != nil {
				return
			}
			time.Sleep(40 * time.Millisecond) // pacing the writer, not waiting for a result
		}
		_, _ = pw.Write([]byte("data: done\n\n")) // the test checks what arrived
	}()
	// 1.6 s of keep-alives, longer than the idle timeout, with room for a
	// loaded machine's scheduling between two of them.
	got, err := decodeAll(t, pr, &Options{IdleTimeout: time.Second})
	wg.Wait()
	if err != nil || len(got.events) != 1 || got.events[0].Data != "done" {
		t.Fatalf("got %+v, %v; want the event after 1.6 s of keep-alives", got.events, err)
	}
}

func TestIdleTimeoutIgnoresTimeInTheLoopBody(t *testing.T) {
	d := NewDecoder(strings.NewReader("data: a\n\ndata: b\n\ndata: c\n\n"), &Options{IdleTimeout: 40 * time.Millisecond})
	n := 0
	for _, err := range d.Events(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		time.Sleep(100 * time.Millisecond)
	}
	if n != 3 {
		t.Fatalf("got %d events, want 3", n)
	}
}

// slowReader returns its data after a delay and cannot be closed.
type slowReader struct {
	delay time.Duration
	data  string
}

func (s *slowReader) Read(p []byte) (int, error) {
	time.Sleep(s.delay)
	if s.data == "" {
		return 0, io.EOF
	}
	n := copy(p, s.data)
	s.data = s.data[n:]
	return n, nil
}

// A reader that cannot be closed cannot be interrupted: the timeout is
// reported when its Read returns, and what it returned late is dropped.
func TestIdleTimeoutWithAReaderThatCannotBeClosed(t *testing.T) {
	got, err := decodeAll(t, &slowReader{delay: 100 * time.Millisecond, data: "data: late\n\n"}, &Options{IdleTimeout: 20 * time.Millisecond})
	if len(got.events) != 0 || !errors.Is(err, ErrIdleTimeout) {
		t.Fatalf("got %+v, %v; want ErrIdleTimeout and no event", got.events, err)
	}
}

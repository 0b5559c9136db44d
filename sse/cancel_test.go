package sse

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"go.uber.org/goleak"
)

func TestCancelUnblocksAPendingRead(t *testing.T) {
	r := stalledPipe(t, "data: a\n\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var events []Event
	var end error
	var cancelledAt time.Time
	for ev, err := range NewDecoder(r, nil).Events(ctx) {
		if err != nil {
			end = err
			break
		}
		events = append(events, ev)
		// The next Read blocks on the empty pipe; cancel while it does.
		time.AfterFunc(20*time.Millisecond, func() { cancelledAt = time.Now(); cancel() })
	}
	if len(events) != 1 || !errors.Is(end, context.Canceled) {
		t.Fatalf("got %+v, %v; want one event then context.Canceled", events, end)
	}
	if end.Error() != "sse: context canceled" {
		t.Errorf("got message %q", end.Error())
	}
	if lag := time.Since(cancelledAt); lag > 5*time.Second { // at the cancel, not at a later timeout
		t.Errorf("iteration ended %v after cancel", lag)
	}
	if !r.wasClosed() {
		t.Error("the blocked reader was not closed")
	}
}

func TestDeadlineUnblocksAPendingRead(t *testing.T) {
	r := stalledPipe(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	var end error
	for _, err := range NewDecoder(r, nil).Events(ctx) {
		end = err
	}
	if !errors.Is(end, context.DeadlineExceeded) {
		t.Fatalf("got %v, want context.DeadlineExceeded", end)
	}
}

// Once the caller cancels, no further event is yielded, even when more are
// already buffered.
func TestCancelInTheLoopBody(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var data []string
	var end error
	for ev, err := range NewDecoder(strings.NewReader("data: a\n\ndata: b\n\ndata: c\n\n"), nil).Events(ctx) {
		if err != nil {
			end = err
			continue
		}
		data = append(data, ev.Data)
		cancel()
	}
	if strings.Join(data, ",") != "a" || !errors.Is(end, context.Canceled) {
		t.Fatalf("got %q, %v; want a then context.Canceled", data, end)
	}
}

// failReader fails the test if it is read.
type failReader struct{ t *testing.T }

func (f failReader) Read([]byte) (int, error) {
	f.t.Error("read after the context was cancelled")
	return 0, io.EOF
}

func TestCancelledBeforeIterating(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var end error
	n := 0
	for _, err := range NewDecoder(failReader{t}, nil).Events(ctx) {
		end = err
		n++
	}
	if n != 1 || !errors.Is(end, context.Canceled) {
		t.Fatalf("yielded %d times, last error %v; want only context.Canceled", n, end)
	}
}

// Breaking out of the loop stops everything the decoder started, and
// leaves the reader open for its owner.
func TestEarlyBreak(t *testing.T) {
	stream := strings.Repeat("data: x\n\n", 100)
	pr, pw := io.Pipe()
	go func() {
		_, _ = pw.Write([]byte(stream))
		pw.Close()
	}()
	r := &closeRecorder{PipeReader: pr}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	n := 0
	for _, err := range NewDecoder(r, &Options{IdleTimeout: time.Minute}).Events(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 2 {
			break
		}
	}
	if n != 2 {
		t.Fatalf("got %d events", n)
	}
	if r.wasClosed() {
		t.Error("the decoder closed the reader after a break")
	}
	// The watchdog's context callback and idle timer are gone; only the
	// pipe writer, which the test owns, remains.
	goleak.VerifyNone(t, goleak.IgnoreCurrent(), goleak.IgnoreAnyFunction("io.(*pipe).write"))
	pr.Close()
}

var errReset = errors.New("connection reset by peer")

func TestReaderErrors(t *testing.T) {
	cases := []struct {
		name   string
		r      io.Reader
		events []string
	}{
		{"between events", io.MultiReader(strings.NewReader("data: a\n\n"), iotest.ErrReader(errReset)), []string{"a"}},
		{"inside an event", io.MultiReader(strings.NewReader("data: a\n\ndata: b\n"), iotest.ErrReader(errReset)), []string{"a"}},
		{"inside a line", io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(errReset)), []string{"a"}},
		{"with the last bytes", &dataErr{data: "data: a\n\ndata: b\n\n", err: errReset}, []string{"a", "b"}},
		{"first read", iotest.ErrReader(errReset), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeAll(t, tc.r, nil)
			var data []string
			for _, ev := range got.events {
				data = append(data, ev.Data)
			}
			if strings.Join(data, ",") != strings.Join(tc.events, ",") {
				t.Errorf("got events %q, want %q", data, tc.events)
			}
			if !errors.Is(err, errReset) || err.Error() != "sse: read: connection reset by peer" {
				t.Errorf("got error %v, want the reader's", err)
			}
		})
	}
}

// dataErr returns all its data and err in one Read.
type dataErr struct {
	data string
	err  error
}

func (d *dataErr) Read(p []byte) (int, error) {
	n := copy(p, d.data)
	d.data = d.data[n:]
	if d.data == "" {
		return n, d.err
	}
	return n, nil
}

// badCountReader claims to have read more than it was given.
type badCountReader struct{}

func (badCountReader) Read(p []byte) (int, error) { return len(p) + 1, nil }

// emptyReader never returns anything, nor an error.
type emptyReader struct{}

func (emptyReader) Read([]byte) (int, error) { return 0, nil }

func TestMisbehavingReaders(t *testing.T) {
	cases := []struct {
		name string
		r    io.Reader
		want error
		msg  string
	}{
		{"impossible count", badCountReader{}, nil, "sse: reader returned impossible count"},
		{"no progress", emptyReader{}, io.ErrNoProgress, "sse: multiple Read calls return no data or error"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeAll(t, tc.r, nil)
			if err == nil || !strings.HasPrefix(err.Error(), tc.msg) || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Fatalf("got %v, want %q", err, tc.msg)
			}
		})
	}
}

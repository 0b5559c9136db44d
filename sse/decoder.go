package sse

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"time"

	"sync"
	"unsafe"
)

// DefaultMaxEventSize is the MaxEventSize of a Decoder whose Options leave
// it zero: 16 MiB.
const DefaultMaxEventSize = 16 << 20

// Event is an event dispatched by a stream.
type Event struct {
	// Type is the value of the event's "event" field, or "" if it has none
	// (a browser's EventSource calls those events "message").
	Type string

	// Data is the event's "data" fields joined with "\n". It may be empty:
	// a "data" field without a value dispatches an event, as MCP servers'
	// priming events ("id: 1\ndata:\n\n") do. Consumers that expect a
	// payload, such as a JSON-RPC message, should skip events with empty
	// Data.
	Data string

	// ID is the last event ID as of this event: the value of the most
	// recent "id" field so far, which need not be in this event.
	ID string
}

// Options configure a Decoder. The zero value gives the defaults.
type Options struct {
	// MaxEventSize bounds the size of one event as sent: its lines with
	// their line endings, and any comment or blank lines right before it.
	// A larger event ends the stream with an error matching
	// ErrEventTooLarge, before the decoder buffers more than MaxEventSize
	// bytes: an event's bytes are kept back, in pooled 32 KiB chunks, until
	// the event is complete, never in a buffer grown by doubling.
	// Zero means DefaultMaxEventSize; negative values are invalid.
	MaxEventSize int

	// IdleTimeout, if positive, bounds how long the decoder waits for the
	// next bytes of the stream; waiting longer ends the stream with an
	// error matching ErrIdleTimeout. Any bytes reset it, keep-alive
	// comments included; time spent in the caller's loop body does not
	// count. Zero means no timeout; negative values are invalid.
	IdleTimeout time.Duration
}

// Decoder reads the events of a text/event-stream, following the WHATWG
// HTML standard's rules for interpreting an event stream
// (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation).
//
// A Decoder is not safe for concurrent use: call LastEventID and Retry from
// the goroutine that ranges over Events, in the loop body or after the loop.
type Decoder struct {
	lines   lineReader
	maxSize int
	lastID  string
	used    bool
	err     error   // bad arguments, reported by Events
	data    *[]byte // the data buffer of RawEvents, from dataBufs

	// The Options, kept for Reset.
	idle   time.Duration
	optErr error
}

// NewDecoder returns a Decoder that reads the stream from r, typically an
// http.Response.Body. A nil opts means the default Options.
//
// The caller keeps ownership of r and closes it when done, with one
// exception: if r is an io.Closer, the decoder closes it when the context
// given to Events is done or IdleTimeout expires, to unblock a pending Read.
// Close may then run while Read is pending, which http.Response.Body and
// io.PipeReader allow. If r is not an io.Closer, such a Read blocks until r
// returns by itself, and the decoder reports the cause then.
func NewDecoder(r io.Reader, opts *Options) *Decoder {
	d := &Decoder{maxSize: DefaultMaxEventSize}
	switch {
	case opts == nil:
	case opts.MaxEventSize < 0:
		d.optErr = fmt.Errorf("sse: negative MaxEventSize %d", opts.MaxEventSize)
	case opts.IdleTimeout < 0:
		d.optErr = fmt.Errorf("sse: negative IdleTimeout %v", opts.IdleTimeout)
	default:
		if opts.MaxEventSize > 0 {
			d.maxSize = opts.MaxEventSize
		}
		d.idle = opts.IdleTimeout
	}
	d.Reset(r)
	return d
}

// Reset makes d read the stream r from its start, as a Decoder that
// NewDecoder(r, opts) returned with the Options d was made with: the last
// event ID and retry are forgotten, and the closing rule of NewDecoder
// applies to r. It keeps the memory of d's bookkeeping (up to
// 1,024 entries of each kind), so that a client reading one short
// stream after another (one per request) allocates no Decoder for each.
// Reset must not be called while d is being iterated; it may be called
// after the loop, whether it ran or not.
func (d *Decoder) Reset(r io.Reader) {
	l := &d.lines
	spans, queue := l.spans[:0], l.queue[:0]
	if cap(spans) > maxKeptEntries {
		spans = nil
	}
	if cap(queue) > maxKeptEntries {
		queue = nil
	}
	clear(queue[:cap(queue)]) // let go of the old stream's strings
	*l = lineReader{r: r, max: d.maxSize, spans: spans, queue: queue}
	l.wd.idle = d.idle
	if c, ok := r.(io.Closer); ok {
		l.wd.closer = c
	}
	d.lastID, d.used, d.err = "", false, d.optErr
	if r == nil && d.err == nil {
		d.err = errors.New("sse: nil reader")
	}
}

// maxKeptEntries bounds the bookkeeping that Reset keeps for the next
// stream: the places of data lines (16 bytes each) and the events read
// ahead. An event of a million lines leaves its 16 MiB of them to the
// collector, not to a Decoder kept for the next response.
const maxKeptEntries = 1 << 10

// Events returns an iterator over the events of the stream. It yields each
// dispatched event with a nil error and, if the stream does not end cleanly,
// one final zero Event with an error; then it stops. A Decoder can be
// iterated only once per stream (by Events or RawEvents; see Reset);
// breaking out of the loop stops reading.
//
// Following WHATWG, comments are ignored, as are blocks without a data
// field (their id and retry fields still count), and an event that the
// stream ends without terminating is discarded. The stream ends cleanly if
// it ends at a line boundary outside an event; otherwise the final error
// matches io.ErrUnexpectedEOF. Other final errors match the reader's error,
// ErrEventTooLarge, ErrIdleTimeout, or ctx.Err() once ctx is done.
func (d *Decoder) Events(ctx context.Context) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		d.run(ctx, true, func(ev RawEvent, err error) bool {
			// The data is the event's own (fresh), so the string can
			// share its bytes.
			return yield(Event{Type: ev.Type, Data: unsafe.String(unsafe.SliceData(ev.Data), len(ev.Data)), ID: ev.ID}, err)
		})
	}
}

// RawEvent is an event as RawEvents yields it: an Event whose data is a
// byte slice that the Decoder reuses.
type RawEvent struct {
	// Type is the value of the event's "event" field, or "".
	Type string

	// Data is the event's "data" fields joined with "\n". It is valid
	// only until the loop body returns: the next event's data is written
	// over it. Copy what must outlive it.
	Data []byte

	// ID is the last event ID as of this event.
	ID string
}

// RawEvents is Events without the allocation of each event's data: it
// yields the same events, in the same way, but each event's Data is
// written into a buffer that the Decoder reuses, valid only until the
// loop body returns. It suits a consumer that decodes each event at once,
// such as a JSON-RPC client, and saves a large event's data being copied
// into memory of its own.
func (d *Decoder) RawEvents(ctx context.Context) iter.Seq2[RawEvent, error] {
	return func(yield func(RawEvent, error) bool) {
		d.run(ctx, false, yield)
	}
}

// run yields the events of the stream; fresh gives each event's data a
// slice of its own.
func (d *Decoder) run(ctx context.Context, fresh bool, yield func(RawEvent, error) bool) {
	if err := d.begin(ctx); err != nil {
		yield(RawEvent{}, err)
		return
	}
	l := &d.lines
	defer l.wd.stop()
	defer l.spool.release()
	defer d.releaseData()
	for {
		for {
			b, ok := l.next()
			if !ok {
				break
			}
			d.lastID = b.id
			if !b.dispatch {
				l.delivered(b)
				continue
			}
			if err := l.wd.err(); err != nil {
				yield(RawEvent{}, err)
				return
			}
			var data []byte
			if fresh {
				data = l.appendData(make([]byte, 0, b.size), b)
			} else {
				data = l.appendData(d.dataBuf(b.size), b)
			}
			l.delivered(b)
			if !yield(RawEvent{Type: b.typ, Data: data, ID: b.id}, nil) {
				return
			}
		}
		if l.end != nil {
			if l.end != io.EOF {
				yield(RawEvent{}, d.endErr())
			}
			return
		}
		l.fill()
	}
}

// dataBufs recycles the data buffers of RawEvents across streams, up to
// maxPooledData bytes each.
var dataBufs = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledData is the largest data buffer kept for another stream.
const maxPooledData = 4 << 20

// dataBuf returns the reused data buffer, empty, with room for size bytes:
// a buffer grown to an event's exact size, not by doubling.
func (d *Decoder) dataBuf(size int) []byte {
	if d.data == nil {
		d.data = dataBufs.Get().(*[]byte)
	}
	if cap(*d.data) < size {
		*d.data = make([]byte, 0, size)
	}
	return (*d.data)[:0]
}

func (d *Decoder) releaseData() {
	if d.data != nil && cap(*d.data) <= maxPooledData {
		dataBufs.Put(d.data)
	}
	d.data = nil
}

func (d *Decoder) begin(ctx context.Context) error {
	switch {
	case d.err != nil:
		return d.err
	case ctx == nil:
		return errors.New("sse: nil context")
	case d.used:
		return errors.New("sse: Decoder.Events iterated more than once")
	}
	d.used = true
	d.lines.wd.start(ctx)
	return nil
}

// endErr says why the stream ended, when it did not end cleanly.
func (d *Decoder) endErr() error {
	if werr := d.lines.wd.err(); werr != nil {
		return werr
	}
	if d.lines.fail != nil {
		return d.lines.fail
	}
	return d.lines.end
}

// LastEventID returns the last event ID, to send as the Last-Event-ID
// header when reconnecting: the value of the last valid "id" field in the
// blocks decoded so far, dispatched or not. A block is decoded when the
// blank line that ends it is, so an id in an event the stream cut short
// does not count. It is "" until an id field is decoded.
func (d *Decoder) LastEventID() string {
	return d.lastID
}

// Retry returns the reconnection time set by the last valid "retry" field
// read so far, and whether there was one. The decoder reads ahead of the
// events it has yielded, so while iterating this may come from a field
// after the current event; once the stream has ended, it is the last one
// in the stream.
func (d *Decoder) Retry() (time.Duration, bool) {
	return d.lines.retry, d.lines.hasRetry
}

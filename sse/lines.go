package sse

import (
	"errors"
	"fmt"
	"io"
	"time"
)

// lineReader sits between the stream and go-sse's Read and follows the
// stream's line structure as the bytes flow through, to learn what Read does
// not report:
//
//   - the retry field, which Read drops;
//   - whether an event Read yields had a data field at all: Read yields an
//     event with empty Data both for "data:\n\n", which WHATWG dispatches, and
//     for "id: 1\n\n", which WHATWG does not dispatch (it only updates the
//     last event ID);
//   - whether the stream ended in the middle of an event, which Read would
//     dispatch at EOF and WHATWG discards.
//
// It passes the bytes through unchanged, with one exception (see scanStart),
// and its own state is a few fields plus the dispatch queue. Go-sse's Read
// runs in the same goroutine, so no locking is needed.
type lineReader struct {
	r    io.Reader
	hold *holdReader // r, when it is one: it may answer 0 bytes while it holds
	wd   watchdog

	state     lineState
	start     startPhase
	pendingCR bool // the last end of line was CR: an LF right after it belongs to it
	nextCR    int  // index of the next CR in the bytes being scanned, len if none, -1 if unknown
	bomLen    int  // bytes of a leading BOM matched so far

	name    [len("retry")]byte // field name read so far, when a line starts across reads
	nameLen int
	kind    fieldKind // field of the current line, once its name is known

	idNUL      bool  // the current id value contains NUL, so WHATWG ignores it
	retryMS    int64 // the current retry value, while it is all digits
	retryState retryState

	// Fields of the current block (the lines since the last blank line),
	// tracked the way go-sse tracks them.
	dirty   bool // a data, event or valid id field: go-sse will yield this block
	hasData bool // a data field: WHATWG dispatches this block

	// queue holds, for each block that go-sse will yield, whether WHATWG
	// dispatches it. bufio.Scanner only reads when it holds no complete
	// event, so by the next Read every entry has been popped; the queue
	// thus never holds more entries than one read has blocks (a quarter of
	// its bytes at most, "id\n\n" being the shortest).
	queue []bool
	head  int

	retry    time.Duration
	hasRetry bool

	fail error // how the stream ended, if not cleanly
}

type lineState uint8

const (
	atLineStart lineState = iota
	inBOM                 // matching a BOM at the very start of the stream
	inName                // reading a field name
	inValue               // after the field name, up to the end of the line
)

// startPhase tracks the start of the stream, where go-sse and WHATWG disagree
// about the byte order mark.
type startPhase uint8

const (
	startFresh startPhase = iota // nothing read yet
	startBlank                   // only line endings read so far
	startDone
)

type fieldKind uint8

const (
	fieldOther fieldKind = iota // unknown field or comment: ignored
	fieldData
	fieldEvent
	fieldID
	fieldRetry
)

type retryState uint8

const (
	retryFirst  retryState = iota // no value byte read yet
	retrySpace                    // only the leading space read so far
	retryDigits                   // digits read so far
	retryBad                      // not all digits, or too large: ignored
)

// Read reads from the stream, follows the line structure of what it read,
// and turns the end of the stream into an error if it falls inside an
// event, so that go-sse does not dispatch the incomplete event.
//
// It reads until p is full or an event go-sse will yield is complete:
// go-sse can do nothing with less, and bufio.Scanner rescans the whole
// pending event after every Read, which would make an event that arrives
// in many small reads cost time quadratic in its size.
func (l *lineReader) Read(p []byte) (int, error) {
	l.queue, l.head = l.queue[:0], 0
	n := 0
	for {
		m, err := l.readOnce(p[n:])
		n += m
		holding := m == 0 && err == nil && l.hold != nil && l.hold.Holding()
		if !holding && (err != nil || m == 0 || n == len(p) || len(l.queue) > 0) {
			return n, err
		}
	}
}

func (l *lineReader) readOnce(p []byte) (int, error) {
	if err := l.wd.err(); err != nil {
		return 0, err
	}
	l.wd.beforeRead()
	n, err := l.r.Read(p)
	l.wd.afterRead()

	if werr := l.wd.err(); werr != nil {
		// The read was cut short by the watchdog closing the stream, or
		// the caller gave up while it was blocked: say why.
		return 0, werr
	}
	if n < 0 || n > len(p) {
		l.fail = fmt.Errorf("sse: reader returned impossible count %d", n)
		return 0, l.fail
	}
	l.scan(p[:n])
	switch {
	case err == nil:
		return n, nil
	case errors.Is(err, io.EOF):
		if l.state != atLineStart || l.dirty {
			l.fail = errIncomplete
			return n, l.fail
		}
		return n, io.EOF
	case errors.Is(err, ErrEventTooLarge): // from the holdReader
		l.fail = err
		return n, l.fail
	default:
		l.fail = fmt.Errorf("sse: read: %w", err)
		return n, l.fail
	}
}

// pop reports whether WHATWG dispatches the block go-sse just yielded.
func (l *lineReader) pop() bool {
	if l.head == len(l.queue) {
		// Cannot happen while scan mirrors go-sse; dispatching is the
		// choice that loses nothing.
		return true
	}
	dispatch := l.queue[l.head]
	l.head++
	return dispatch
}

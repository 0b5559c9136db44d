package sse

import (
	"errors"
	"fmt"
	"io"
	"time"
)

// lineReader sits between the stream and go-sse's Read. It reads the
// stream into a spool and follows its line structure as the bytes arrive,
// in one pass, to learn what Read does not report:
//
//   - the retry field, which Read drops;
//   - whether an event Read yields had a data field at all: Read yields an
//     event with empty Data both for "data:\n\n", which WHATWG dispatches, and
//     for "id: 1\n\n", which WHATWG does not dispatch (it only updates the
//     last event ID);
//   - whether the stream ended in the middle of an event, which Read would
//     dispatch at EOF and WHATWG discards;
//   - where go-sse's tokens end (a blank line after a line that is not
//     blank), and so how large each is.
//
// It hands go-sse only whole tokens, each no larger than the limit of the
// current go-sse Read (a session): go-sse never waits for more bytes, never
// rescans a partial event, and never grows its scanner for an event that
// will be refused. Each session's limit is about the largest token seen
// so far, which keeps the scanner's buffer about the size of the events
// rather than 4 KiB; a token over it ends the session at a token boundary
// and the decoder starts another with a larger limit.
//
// It passes the bytes on unchanged, with one exception (see scanLineStart),
// and its own state is a few fields plus the dispatch queue. Go-sse's Read
// runs in the same goroutine, so no locking is needed.
type lineReader struct {
	r  io.Reader
	wd watchdog

	max        int     // MaxEventSize
	limit      int     // the current session's limit
	spool      spool   // bytes read and not yet handed to go-sse
	pos        int64   // bytes of the stream read so far
	handed     int64   // bytes handed to go-sse
	ready      int64   // end of the whole tokens the current session may have
	ends       []int64 // ends of the whole tokens past handed, in order
	nReady     int     // how many of ends are ready
	tokenStart int64   // where the current token starts: the end of the last one
	inToken    bool    // a line that is not blank since the last token ended
	end        error   // what Read returns once the spool is handed on: io.EOF or fail
	restart    bool    // the session ended for a token over its limit

	state     lineState
	start     startPhase
	pendingCR bool  // the last end of line was CR: an LF right after it belongs to it
	nextCR    int   // index of the next CR in the bytes being scanned, len if none, -1 if unknown
	base      int64 // stream position of the bytes being scanned
	bomLen    int   // bytes of a leading BOM matched so far

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
	hasID   bool // a valid id field: go-sse's last event ID is this stream's

	// queue holds, for each whole block that go-sse will yield and has not
	// yielded yet, whether WHATWG dispatches it (queueDispatch) and whether
	// it set the last event ID (queueID).
	queue []uint8
	head  int

	retry    time.Duration
	hasRetry bool

	fail error // how the stream ended, if not cleanly
}

const (
	queueDispatch = 1 << iota
	queueID
)

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

// minLimit is the smallest limit of a session that starts with no whole
// token known.
const minLimit = 512

// session starts a go-sse Read and returns its limit: the largest whole
// token known, twice the last limit, or the size of all the tokens known up
// to 4 KiB, whichever is largest (minLimit if none is known), up to
// MaxEventSize. Before the first session it reads until a token is whole,
// so that the first limit fits the stream.
func (l *lineReader) session() int {
	if l.limit == 0 {
		for len(l.ends) == 0 && l.end == nil {
			if m, err := l.fill(); m == 0 && err == nil {
				break // the scanner counts reads that bring nothing
			}
		}
	}
	limit, prev := 2*l.limit, l.ready
	for _, e := range l.ends[l.nReady:] {
		limit, prev = max(limit, int(e-prev)), e
	}
	// Many tokens waiting: a long stream, which go-sse reads fastest with
	// the 4 KiB buffer it starts with anyway.
	limit = max(limit, int(min(prev-l.ready, 4<<10)))
	if limit == 0 {
		limit = minLimit
	}
	l.limit, l.restart = min(limit, l.max), false
	l.promote()
	return l.limit
}

// promote makes ready the whole tokens that fit the session's limit.
func (l *lineReader) promote() {
	for _, e := range l.ends[l.nReady:] {
		if e-l.ready > int64(l.limit) {
			break
		}
		l.ready, l.nReady = e, l.nReady+1
	}
}

// Read hands go-sse the next whole tokens that fit p (part of one only if
// p cannot hold it: go-sse then grows its buffer), reading the stream until
// one is whole. A partial token at the end of go-sse's buffer would be
// scanned again after the next Read. Once the ready tokens are handed on,
// it ends the session with io.EOF if the next token is over its limit, and
// otherwise returns how the stream ended: io.EOF when it ended cleanly, so
// that go-sse does not dispatch an incomplete event.
func (l *lineReader) Read(p []byte) (int, error) {
	for l.handed == l.ready {
		switch {
		case len(l.ends) > l.nReady:
			l.restart = true
			return 0, io.EOF
		case l.end != nil:
			return 0, l.end
		}
		if m, err := l.fill(); m == 0 && err == nil {
			return 0, nil // the scanner counts reads that bring nothing
		}
	}
	upto, fit := l.handed+int64(len(p)), 0
	for fit < l.nReady && l.ends[fit] <= upto {
		fit++
	}
	want := int64(len(p))
	if fit > 0 {
		want = l.ends[fit-1] - l.handed
	}
	n := l.spool.copyOut(p, l.handed, want)
	l.handed += int64(n)
	done := 0
	for done < l.nReady && l.ends[done] <= l.handed {
		done++
	}
	l.ends, l.nReady = l.ends[:copy(l.ends, l.ends[done:])], l.nReady-done
	return n, nil
}

// fill reads the stream once into the spool and follows what it read. At
// the end of the stream, or once the current token is too large, it sets
// end.
func (l *lineReader) fill() (int, error) {
	room := l.spool.room(l.pos)
	if left := int64(l.max) - (l.pos - l.tokenStart); left < int64(len(room)) {
		room = room[:max(left, 1)] // read no more than the limit
	}
	n, err := l.readOnce(room)
	l.pos += int64(n)
	switch {
	case err != nil:
		l.end = err
	case l.pos-l.tokenStart >= int64(l.max):
		// A token of MaxEventSize bytes not ended yet can only grow past it.
		l.fail = fmt.Errorf("%w: larger than %d bytes", ErrEventTooLarge, l.max)
		l.end = l.fail
	}
	l.promote()
	return n, err
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
	l.scan(p[:n], l.pos)
	switch {
	case err == nil:
		return n, nil
	case errors.Is(err, io.EOF):
		if l.state != atLineStart || l.dirty {
			l.fail = errIncomplete
			return n, l.fail
		}
		return n, io.EOF
	default:
		l.fail = fmt.Errorf("sse: read: %w", err)
		return n, l.fail
	}
}

// pop reports whether WHATWG dispatches the block go-sse just yielded, and
// whether the block set the last event ID.
func (l *lineReader) pop() (dispatch, id bool) {
	if l.head == len(l.queue) {
		// Cannot happen while scan mirrors go-sse; dispatching is the
		// choice that loses nothing.
		return true, true
	}
	q := l.queue[l.head]
	if l.head++; l.head == len(l.queue) {
		l.queue, l.head = l.queue[:0], 0
	}
	return q&queueDispatch != 0, q&queueID != 0
}

package sse

import (
	"errors"
	"fmt"
	"io"
	"time"
)

// lineReader reads the stream into a spool and interprets it as the bytes
// arrive, in one pass over them: it follows the line structure (fields,
// comments, blank lines, any of the three line endings, across reads),
// applies the fields as WHATWG says, and queues each block a blank line
// ends with where its data lies in the stream. The data itself is not
// copied until the event is delivered (see Decoder.Events), so that it is
// copied once, from the spool into its final place.
//
// It also bounds what it reads: the bytes of one token (an event as sent,
// with any comment or blank lines before it; it ends at a blank line
// after a line that is not blank) never exceed MaxEventSize.
type lineReader struct {
	r  io.Reader
	wd watchdog

	max        int   // MaxEventSize
	spool      spool // bytes read and not yet delivered
	pos        int64 // bytes of the stream read so far
	tokenStart int64 // where the current token starts: the end of the last one
	inToken    bool  // a line that is not blank since the last token ended
	end        error // how the stream ended: io.EOF when cleanly, else fail
	empty      int   // reads in a row that brought nothing

	state     lineState
	start     startPhase
	pendingCR bool  // the last end of line was CR: an LF right after it belongs to it
	nextCR    int   // index of the next CR in the bytes being scanned, len if none, -1 if unknown
	base      int64 // stream position of the bytes being scanned
	bomLen    int   // bytes of a leading BOM matched so far

	name       [len("retry")]byte // field name read so far, when a line starts across reads
	nameLen    int
	kind       fieldKind // field of the current line, once its name is known
	fresh      bool      // the value has not started: a space there is not part of it
	valueStart int64     // stream position of the current line's value

	idNUL      bool  // the current id value contains NUL, so WHATWG ignores it
	retryMS    int64 // the current retry value, while it is all digits
	retryState retryState

	// The current block (the lines since the last blank line).
	dirty   bool   // a data, event or valid id field: ending here is ending inside an event
	hasData bool   // a data field: WHATWG dispatches this block
	typ     string // its event type buffer
	idBuf   string // WHATWG's last event ID buffer, which outlives blocks
	dataLen int    // the length of its data so far
	spans   []span // where the data values of the queued blocks and of this one lie

	// queue holds the blocks ended and not yet delivered: those that
	// dispatch an event, and those that change the last event ID.
	queue  []block
	head   int
	queued string // idBuf as of the last block queued

	retry    time.Duration
	hasRetry bool

	fail error // how the stream ended, if not cleanly
}

// span is a range of stream positions.
type span struct{ from, to int64 }

// block is a block that a blank line ended.
type block struct {
	typ, id  string
	dispatch bool
	spans    int // the end of its data values in lineReader.spans
	size     int // the length of its data: the values joined with "\n"
}

type lineState uint8

const (
	atLineStart lineState = iota
	inBOM                 // matching a BOM at the very start of the stream
	inName                // reading a field name
	inValue               // after the field name, up to the end of the line
)

// startPhase tracks the start of the stream, where WHATWG strips a byte
// order mark.
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
	retryDigits                   // digits read so far
	retryBad                      // not all digits, or too large: ignored
)

// maxEmptyReads is how many reads in a row may bring nothing before the
// stream is given up as making no progress, as bufio does.
const maxEmptyReads = 100

// fill reads the stream once into the spool and interprets what it read.
// At the end of the stream, or once the current token is too large, it
// sets end.
func (l *lineReader) fill() {
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
	case n > 0:
		l.empty = 0
	default:
		if l.empty++; l.empty >= maxEmptyReads {
			l.fail = fmt.Errorf("sse: %w", io.ErrNoProgress)
			l.end = l.fail
		}
	}
	l.releaseDelivered()
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

// next returns the next block ended and not yet delivered, if any.
func (l *lineReader) next() (block, bool) {
	if l.head == len(l.queue) {
		return block{}, false
	}
	b := l.queue[l.head]
	l.queue[l.head] = block{}
	l.head++
	return b, true
}

// appendData appends the data of b, the block next returned last, to dst.
func (l *lineReader) appendData(dst []byte, b block) []byte {
	for i, s := range l.spans[:b.spans] {
		if i > 0 {
			dst = append(dst, '\n')
		}
		dst = l.spool.appendRange(dst, s.from, s.to)
	}
	return dst
}

// delivered forgets the data of b, the block next returned last, and of
// the blocks before it, and gives back the chunks that only they needed.
func (l *lineReader) delivered(b block) {
	n := copy(l.spans, l.spans[b.spans:])
	l.spans = l.spans[:n]
	if n == 0 && cap(l.spans) > maxKeptEntries {
		l.spans = nil // a long-lived stream does not keep an event of many lines' places
	}
	for i := l.head; i < len(l.queue); i++ {
		l.queue[i].spans -= b.spans
	}
	if l.head == len(l.queue) {
		l.queue, l.head = l.queue[:0], 0
		if cap(l.queue) > maxKeptEntries {
			l.queue = nil
		}
	}
	l.releaseDelivered()
}

// releaseDelivered gives back the chunks that hold only bytes no block
// still needs: before the first data value kept, and before the current
// token, where any value of the current block lies.
func (l *lineReader) releaseDelivered() {
	keep := l.tokenStart
	if len(l.spans) > 0 {
		keep = min(keep, l.spans[0].from)
	}
	l.spool.releaseBefore(keep)
}

package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
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
	r  io.Reader
	wd watchdog

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

	fail error // how the stream ended, if not cleanly; sticky
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

const bom = "\xEF\xBB\xBF"

// maxRetryMS is the largest retry value, in milliseconds, that fits a
// time.Duration.
const maxRetryMS = math.MaxInt64 / int64(time.Millisecond)

// Read reads from the stream, follows the line structure of what it read,
// and turns the end of the stream into an error if it falls inside an
// event, so that go-sse does not dispatch the incomplete event.
//
// It reads until p is full or an event go-sse will yield is complete:
// go-sse can do nothing with less, and bufio.Scanner rescans the whole
// pending event after every Read, which would make an event that arrives
// in many small reads cost time quadratic in its size.
func (l *lineReader) Read(p []byte) (int, error) {
	if l.fail != nil {
		return 0, l.fail
	}
	l.queue, l.head = l.queue[:0], 0
	n := 0
	for {
		m, err := l.readOnce(p[n:])
		n += m
		if err != nil || m == 0 || n == len(p) || len(l.queue) > 0 {
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

// scan follows the line structure of b, the next bytes of the stream.
func (l *lineReader) scan(b []byte) {
	l.nextCR = -1
	for i := 0; i < len(b); {
		switch l.state {
		case atLineStart:
			i = l.scanLineStart(b, i)
		case inBOM:
			if b[i] != bom[l.bomLen] {
				// The first line starts with part of a BOM: a field with
				// an unknown name, for WHATWG and go-sse alike.
				l.state, l.kind = inValue, fieldOther
				continue
			}
			l.bomLen++
			i++
			if l.bomLen == len(bom) {
				l.state = atLineStart
			}
		case inName:
			i = l.scanName(b, i)
		case inValue:
			i = l.scanValue(b, i)
		}
	}
}

// scanLineStart handles b[i], the first byte of a line, and returns the
// index of the next byte to scan.
func (l *lineReader) scanLineStart(b []byte, i int) int {
	c := b[i]
	if c == '\n' || c == '\r' {
		if c == '\n' && l.pendingCR {
			l.pendingCR = false // the LF of a CRLF
			return i + 1
		}
		l.pendingCR = c == '\r'
		if l.start == startFresh {
			l.start = startBlank
		}
		l.endBlock()
		return i + 1
	}
	l.pendingCR = false
	if l.start != startDone {
		if l.scanStart(b, i) {
			return i
		}
	}
	if c == ':' {
		l.state, l.kind = inValue, fieldOther
		return i + 1
	}
	l.state, l.nameLen = inName, 0
	return i
}

// scanStart handles the first byte of the first line that is not blank, and
// reports whether it started a BOM. WHATWG strips a BOM only at the very
// start of the stream; go-sse strips one at the start of its first event,
// after any blank lines. When a BOM follows blank lines, its first byte is
// replaced so that go-sse, too, reads the line as a field with an unknown
// name, which it is either way.
func (l *lineReader) scanStart(b []byte, i int) bool {
	fresh := l.start == startFresh
	l.start = startDone
	if b[i] != bom[0] {
		return false
	}
	if fresh {
		l.state, l.bomLen = inBOM, 0
		return true
	}
	b[i] = '?'
	return false
}

// scanName reads the field name from b[i:] and returns the index of the
// next byte to scan.
func (l *lineReader) scanName(b []byte, i int) int {
	for j := i; j < len(b); j++ {
		switch b[j] {
		case ':', '\n', '\r':
			name := b[i:j]
			if l.nameLen > 0 { // the name started in an earlier read
				n := copy(l.name[l.nameLen:], name)
				name = l.name[:l.nameLen+n]
			}
			l.kind = fieldOf(name)
			l.state, l.idNUL, l.retryMS, l.retryState = inValue, false, 0, retryFirst
			if b[j] == ':' {
				j++
			}
			return j
		}
		if l.nameLen+j-i == len(l.name) {
			// Longer than any field name we know.
			l.state, l.kind = inValue, fieldOther
			return j
		}
	}
	l.nameLen += copy(l.name[l.nameLen:], b[i:])
	return len(b)
}

func fieldOf(name []byte) fieldKind {
	switch string(name) {
	case "data":
		return fieldData
	case "event":
		return fieldEvent
	case "id":
		return fieldID
	case "retry":
		return fieldRetry
	}
	return fieldOther
}

// scanValue reads b[i:] up to the end of the line and returns the index of
// the next byte to scan.
func (l *lineReader) scanValue(b []byte, i int) int {
	end := l.indexEOL(b, i)
	value := b[i:end]
	switch l.kind {
	case fieldID:
		l.idNUL = l.idNUL || bytes.IndexByte(value, 0) >= 0
	case fieldRetry:
		l.scanRetry(value)
	}
	if end == len(b) {
		return end // the line goes on in the next read
	}
	l.endLine()
	l.pendingCR = b[end] == '\r'
	l.state = atLineStart
	return end + 1
}

// indexEOL returns the index of the first CR or LF in b[i:], or len(b).
// Streams rarely use CR, so it remembers where the next one is rather than
// look for both on every line.
func (l *lineReader) indexEOL(b []byte, i int) int {
	if l.nextCR < i {
		l.nextCR = len(b)
		if cr := bytes.IndexByte(b[i:], '\r'); cr >= 0 {
			l.nextCR = i + cr
		}
	}
	if lf := bytes.IndexByte(b[i:l.nextCR], '\n'); lf >= 0 {
		return i + lf
	}
	return l.nextCR
}

// scanRetry reads part of a retry value. A single leading space is not part
// of the value; WHATWG ignores values that are not all ASCII digits.
func (l *lineReader) scanRetry(value []byte) {
	for _, c := range value {
		switch {
		case l.retryState == retryBad:
			return
		case l.retryState == retryFirst && c == ' ':
			l.retryState = retrySpace
		case c < '0' || c > '9':
			l.retryState = retryBad
			return
		default:
			l.retryState = retryDigits
			l.retryMS = l.retryMS*10 + int64(c-'0')
			if l.retryMS > maxRetryMS {
				l.retryState = retryBad
			}
		}
	}
}

// endLine applies the field of the line that just ended.
func (l *lineReader) endLine() {
	switch l.kind {
	case fieldData:
		l.dirty, l.hasData = true, true
	case fieldEvent:
		l.dirty = true
	case fieldID:
		l.dirty = l.dirty || !l.idNUL
	case fieldRetry:
		if l.retryState == retryDigits {
			l.retry, l.hasRetry = time.Duration(l.retryMS)*time.Millisecond, true
		}
	}
}

// endBlock handles a blank line, which ends the current block.
func (l *lineReader) endBlock() {
	if l.dirty {
		l.queue = append(l.queue, l.hasData)
	}
	l.dirty, l.hasData = false, false
}

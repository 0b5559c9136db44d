package sse

import (
	"bytes"
	"math"
	"time"
)

const bom = "\xEF\xBB\xBF"

// maxRetryMS is the largest retry value, in milliseconds, that fits a
// time.Duration.
const maxRetryMS = math.MaxInt64 / int64(time.Millisecond)

// scan follows the line structure of b, the next bytes of the stream (in
// the spool), from stream position base on.
func (l *lineReader) scan(b []byte, base int64) {
	l.nextCR, l.base = -1, base
	for i := 0; i < len(b); {
		if l.state == atLineStart && l.start == startDone {
			if i = l.scanLines(b, i); i == len(b) {
				return
			}
		}
		switch l.state {
		case atLineStart:
			i = l.scanLineStart(b, i)
		case inBOM:
			if b[i] != bom[l.bomLen] {
				// The first line starts with part of a BOM: a field with
				// an unknown name.
				l.state, l.kind, l.inToken = inValue, fieldOther, true
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

// scanLines is scan's fast path. It handles the lines of b[i:] that end in
// b, when b[i] starts a line after the start of the stream, and returns the
// index of the first line that does not end in b (or len(b)). The general
// path, which can stop and resume anywhere in a line, handles the rest.
func (l *lineReader) scanLines(b []byte, i int) int {
	for i < len(b) {
		if c := b[i]; c == '\n' || c == '\r' {
			if c == '\r' || !l.pendingCR { // not the LF of a CRLF
				l.endBlock(i + 1)
			}
			l.pendingCR = c == '\r'
			i++
			continue
		}
		end := l.indexEOL(b, i)
		if end == len(b) {
			return i
		}
		l.inToken = true
		l.fieldLine(b[i:end], i)
		l.pendingCR = b[end] == '\r'
		i = end + 1
	}
	return i
}

// fieldLine applies line, a whole line that is not blank, which starts at
// b[at] in the bytes being scanned.
func (l *lineReader) fieldLine(line []byte, at int) {
	kind, n := fieldOfLine(line)
	if n < len(line) && line[n] == ' ' {
		n++
	}
	value := line[n:]
	switch l.kind = kind; kind {
	case fieldData:
		from := l.base + int64(at+n)
		l.addData(span{from, from + int64(len(value))})
	case fieldEvent:
		l.setType(value)
	case fieldID:
		l.setID(value)
	case fieldRetry:
		l.retryMS, l.retryState = 0, retryFirst
		l.scanRetry(value)
	}
	l.endLine()
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
		l.endBlock(i + 1)
		return i + 1
	}
	l.pendingCR = false
	if l.start != startDone && l.scanStart(b, i) {
		return i
	}
	l.inToken = true
	if c == ':' {
		l.state, l.kind = inValue, fieldOther
		return l.scanValue(b, i+1)
	}
	l.state, l.nameLen = inName, 0
	return l.scanName(b, i)
}

// scanStart handles the first byte of the first line that is not blank, and
// reports whether it started a BOM at the very start of the stream, which
// WHATWG strips (there only).
func (l *lineReader) scanStart(b []byte, i int) bool {
	fresh := l.start == startFresh
	l.start = startDone
	if fresh && b[i] == bom[0] {
		l.state, l.bomLen = inBOM, 0
		return true
	}
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
			l.kind, _ = fieldOfLine(name)
			l.state, l.fresh, l.idNUL, l.retryMS, l.retryState = inValue, true, false, 0, retryFirst
			if b[j] == ':' {
				j++
			}
			l.valueStart = l.base + int64(j)
			return l.scanValue(b, j)
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

// fieldOfLine returns the field of a line that is not blank, and the index
// of its value: after the colon that ends the field's name.
func fieldOfLine(line []byte) (fieldKind, int) {
	switch line[0] {
	case 'd':
		return fieldIfNamed(line, "data", fieldData)
	case 'e':
		return fieldIfNamed(line, "event", fieldEvent)
	case 'i':
		return fieldIfNamed(line, "id", fieldID)
	case 'r':
		return fieldIfNamed(line, "retry", fieldRetry)
	}
	return fieldOther, len(line)
}

func fieldIfNamed(line []byte, name string, kind fieldKind) (fieldKind, int) {
	n := len(name)
	switch {
	case len(line) < n || string(line[:n]) != name:
	case len(line) == n:
		return kind, n
	case line[n] == ':':
		return kind, n + 1
	}
	return fieldOther, len(line)
}

// scanValue reads b[i:] up to the end of the line and returns the index of
// the next byte to scan. Only the retry value is looked at as it arrives;
// the others are taken from the spool, where they lie whole, once the
// line ends.
func (l *lineReader) scanValue(b []byte, i int) int {
	if l.fresh && i < len(b) {
		l.fresh = false
		if b[i] == ' ' {
			i++
			l.valueStart++
		}
	}
	end := l.indexEOL(b, i)
	if l.kind == fieldRetry {
		l.scanRetry(b[i:end])
	}
	if end == len(b) {
		return end // the line goes on in the next read
	}
	if l.kind != fieldOther && l.kind != fieldRetry {
		l.spannedValue(span{l.valueStart, l.base + int64(end)})
	}
	l.endLine()
	l.pendingCR = b[end] == '\r'
	l.state = atLineStart
	return end + 1
}

// spannedValue applies the value of a data, event or id line that the
// general path read: s, in the spool.
func (l *lineReader) spannedValue(s span) {
	if l.kind == fieldData {
		l.addData(s)
		return
	}
	v := l.spool.appendRange(nil, s.from, s.to)
	if l.kind == fieldEvent {
		l.setType(v)
	} else {
		l.setID(v)
	}
}

func (l *lineReader) addData(s span) {
	if l.hasData {
		l.dataLen++ // the "\n" that joins it to the last one
	}
	l.spans = append(l.spans, s)
	l.dataLen += int(s.to - s.from)
	l.hasData = true
}

// setType sets the event type buffer; the same type as the last one costs
// no allocation.
func (l *lineReader) setType(v []byte) {
	if string(v) != l.typ {
		l.typ = string(v)
	}
}

// setID sets the last event ID buffer, unless the value contains NUL,
// which WHATWG ignores.
func (l *lineReader) setID(v []byte) {
	if l.idNUL = bytes.IndexByte(v, 0) >= 0; l.idNUL {
		return
	}
	if string(v) != l.idBuf {
		l.idBuf = string(v)
	}
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

// scanRetry reads part of a retry value; WHATWG ignores values that are
// not all ASCII digits.
func (l *lineReader) scanRetry(value []byte) {
	for _, c := range value {
		switch {
		case l.retryState == retryBad:
			return
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
	case fieldData, fieldEvent:
		l.dirty = true
	case fieldID:
		l.dirty = l.dirty || !l.idNUL
	case fieldRetry:
		if l.retryState == retryDigits {
			l.retry, l.hasRetry = time.Duration(l.retryMS)*time.Millisecond, true
		}
	}
}

// endBlock handles a blank line, which ends the current block, and the
// current token if a line that is not blank came before it. The line
// ending's first byte is b[end-1] in the bytes being scanned.
func (l *lineReader) endBlock(end int) {
	if l.hasData || l.idBuf != l.queued {
		b := block{typ: l.typ, id: l.idBuf, dispatch: l.hasData, spans: len(l.spans), size: l.dataLen}
		l.queue = append(l.queue, b)
		l.queued = l.idBuf
	}
	l.dirty, l.hasData, l.typ, l.dataLen = false, false, "", 0
	if l.inToken {
		l.inToken, l.tokenStart = false, l.base+int64(end)
	}
}

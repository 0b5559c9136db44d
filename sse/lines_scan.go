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

// scan follows the line structure of b, the next bytes of the stream, from
// stream position base on.
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
				// an unknown name, for WHATWG and go-sse alike.
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
		l.lineStart(b, i)
		l.endFieldLine(b[i:end])
		l.pendingCR = b[end] == '\r'
		i = end + 1
	}
	return i
}

// endFieldLine applies line, a whole line that is not blank.
func (l *lineReader) endFieldLine(line []byte) {
	kind, n := fieldOfLine(line)
	switch l.kind = kind; kind {
	case fieldID:
		l.idNUL = bytes.IndexByte(line[n:], 0) >= 0
	case fieldRetry:
		l.retryMS, l.retryState = 0, retryFirst
		l.scanRetry(line[n:])
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
	l.lineStart(b, i)
	if c == ':' {
		l.state, l.kind = inValue, fieldOther
		return l.scanValue(b, i+1)
	}
	l.state, l.nameLen = inName, 0
	return l.scanName(b, i)
}

// scanStart handles the first byte of the first line that is not blank, and
// reports whether it started a BOM at the very start of the stream.
func (l *lineReader) scanStart(b []byte, i int) bool {
	fresh := l.start == startFresh
	l.start = startDone
	if fresh && b[i] == bom[0] {
		l.state, l.bomLen = inBOM, 0
		return true
	}
	return false
}

// lineStart handles b[i], the first byte of a line that is not blank (after
// the stream's BOM, if any). WHATWG strips a BOM only at the very start of
// the stream; go-sse strips one at the start of the first event of each
// Read, after any blank lines. A line that starts with the first byte of a
// BOM anywhere else has a field with an unknown name, for WHATWG and go-sse
// alike; that byte is replaced so that go-sse never strips it.
func (l *lineReader) lineStart(b []byte, i int) {
	l.inToken = true
	if b[i] == bom[0] {
		b[i] = '?'
	}
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
			l.state, l.idNUL, l.retryMS, l.retryState = inValue, false, 0, retryFirst
			if b[j] == ':' {
				j++
			}
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
		l.hasID = l.hasID || !l.idNUL
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
	if l.dirty {
		var q uint8
		if l.hasData {
			q |= queueDispatch
		}
		if l.hasID {
			q |= queueID
		}
		l.queue = append(l.queue, q)
	}
	l.dirty, l.hasData, l.hasID = false, false, false
	if l.inToken {
		l.inToken, l.tokenStart = false, l.base+int64(end)
		l.ends = append(l.ends, l.tokenStart)
	}
}

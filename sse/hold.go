package sse

import (
	"bytes"
	"fmt"
	"io"
)

// holdAt is the size of an event past which holdReader keeps its bytes
// back until the event is complete; holdChunk the unit it keeps them in.
const (
	holdAt    = 64 << 10
	holdChunk = 64 << 10
)

// holdReader sits under the lineReader, on the raw stream, and keeps
// go-sse's scanner from growing its buffer for an event that will be
// refused. The scanner holds a whole event (up to MaxEventSize) and grows
// its buffer by doubling, so an event just over the limit would cost
// twice the limit before being refused. Bytes of an event longer than
// holdAt are kept back here, in chunks, until the blank line that ends it:
// then they are handed on; an event that outgrows max first ends the
// stream with ErrEventTooLarge, having cost max bytes and a chunk.
//
// It follows only the stream's line endings (LF, CR, CRLF) to find the
// blank lines that end events. While it holds, Read returns 0 bytes and a
// nil error after each read of the stream, so that the caller times every
// read (the idle timeout) and loops.
type holdReader struct {
	r   io.Reader
	max int

	lineStart bool // at the start of a line (true at the start of the stream)
	pendingCR bool // the last line ending was CR: an LF right after it belongs to it
	block     int  // bytes of the current event so far
	tooBig    bool // an event outgrew max while kept back

	holding bool
	chunks  [][]byte // bytes kept back, in order
	size    int      // bytes in chunks not yet handed on
	err     error    // the stream's error, once the kept bytes are handed on
}

func newHoldReader(r io.Reader, max int) *holdReader {
	return &holdReader{r: r, max: max, lineStart: true}
}

// Holding reports whether Read is keeping an event's bytes back.
func (h *holdReader) Holding() bool { return h.holding }

func (h *holdReader) Read(p []byte) (int, error) {
	if h.size > 0 && !h.holding {
		return h.handOn(p), nil
	}
	if h.err != nil {
		return 0, h.err
	}
	if !h.holding {
		n, err := h.r.Read(p)
		if n < 0 || n > len(p) {
			return n, err // the lineReader reports it
		}
		h.follow(p[:n])
		h.holding = h.block > holdAt
		return n, err
	}
	if last := len(h.chunks) - 1; last < 0 || len(h.chunks[last]) == cap(h.chunks[last]) {
		h.chunks = append(h.chunks, make([]byte, 0, holdChunk))
	}
	c := h.chunks[len(h.chunks)-1]
	room := c[len(c):cap(c)]
	if left := h.max - h.block; left < len(room) {
		room = room[:max(left, 1)] // read no more than max
	}
	n, err := h.r.Read(room)
	if n < 0 || n > len(room) {
		return 0, fmt.Errorf("sse: reader returned impossible count %d", n)
	}
	h.chunks[len(h.chunks)-1] = c[:len(c)+n]
	h.size += n
	ended := h.follow(c[len(c) : len(c)+n])
	// An event of max bytes not ended yet can only grow past max.
	if h.tooBig || !ended && h.block >= h.max {
		h.chunks, h.size = nil, 0
		return 0, fmt.Errorf("%w: larger than %d bytes", ErrEventTooLarge, h.max)
	}
	if ended || err != nil {
		h.holding, h.err = false, err // hand on what is kept, then the error
	}
	return 0, nil
}

// handOn copies kept bytes into p, dropping the chunks it empties.
func (h *holdReader) handOn(p []byte) int {
	n := 0
	for n < len(p) && len(h.chunks) > 0 {
		m := copy(p[n:], h.chunks[0])
		n += m
		if h.chunks[0] = h.chunks[0][m:]; len(h.chunks[0]) == 0 {
			h.chunks[0] = nil
			h.chunks = h.chunks[1:]
		}
	}
	h.size -= n
	if h.size == 0 {
		h.chunks = nil
		h.holding = h.err == nil && h.block > holdAt // the next event is long too
	}
	return n
}

// follow tracks the line endings of b and reports whether an event ended
// in it: a blank line, the end of a block.
func (h *holdReader) follow(b []byte) (ended bool) {
	for i := 0; i < len(b); {
		c := b[i]
		if c != '\n' && c != '\r' {
			j := bytes.IndexAny(b[i:], "\r\n")
			if j < 0 {
				j = len(b) - i
			}
			h.block += j
			i += j
			h.lineStart, h.pendingCR = false, false
			continue
		}
		h.block++
		i++
		switch {
		case c == '\n' && h.pendingCR:
			h.pendingCR = false // the LF of a CRLF
		case h.lineStart:
			if h.block > h.max {
				h.tooBig = true
			}
			h.block, ended = 0, true
			h.pendingCR = c == '\r'
		default:
			h.lineStart, h.pendingCR = true, c == '\r'
		}
	}
	if h.block > h.max {
		h.tooBig = true
	}
	return ended
}

package mcp

import (
	"errors"
	"io"
	"slices"
	"sync"
)

// gatherChunk is the unit in which a large message is gathered.
const gatherChunk = 256 << 10

// errGatherLimit says a message outgrew its gather's limit.
var errGatherLimit = errors.New("mcp: message over the limit")

// gather collects one message that arrives in pieces (an HTTP body, a
// stdout line), up to max bytes, in chunks of gatherChunk. A buffer grown
// by doubling allocates about twice the limit to refuse a message just
// over it, and holds one and a half times the limit at once; a gather
// allocates the limit and one chunk at most, and copies a message it
// keeps only once, into its final place; its chunks are pooled (those of
// a message up to maxPooledGather), so that release makes the next gather
// cost nothing. The zero value, with max set, is ready to use.
type gather struct {
	max  int64
	size int64
	full [][]byte // chunks filled
	cur  []byte   // the chunk being filled
}

// gatherChunks recycles the chunks of gathers that were released.
var gatherChunks = sync.Pool{New: func() any { return new([gatherChunk]byte) }}

// room returns the free space of the current chunk, starting a new one
// when it is full.
func (g *gather) room() []byte {
	if len(g.cur) == cap(g.cur) {
		if g.cur != nil {
			g.full = append(g.full, g.cur)
		}
		g.cur = gatherChunks.Get().(*[gatherChunk]byte)[:0]
	}
	return g.cur[len(g.cur):cap(g.cur)]
}

// maxPooledGather bounds the messages whose chunks are pooled: those of a
// larger one go to the collector, because the pool would keep them live
// until two collections pass, beside the message and what is decoded from
// it.
const maxPooledGather = 4 << 20

// release gives the chunks back for other gathers, unless the message was
// above maxPooledGather; what was gathered is gone.
func (g *gather) release() {
	for _, c := range g.parts() {
		if cap(c) == gatherChunk && g.size <= maxPooledGather {
			gatherChunks.Put((*[gatherChunk]byte)(c[:gatherChunk]))
		}
	}
	g.full, g.cur, g.size = nil, nil, 0
}

// add appends p; it fails with errGatherLimit past max.
func (g *gather) add(p []byte) error {
	if g.size += int64(len(p)); g.size > g.max {
		return errGatherLimit
	}
	for len(p) > 0 {
		n := copy(g.room(), p)
		g.cur, p = g.cur[:len(g.cur)+n], p[n:]
	}
	return nil
}

// readFrom reads r to its end; it fails with errGatherLimit past max, or
// with r's error.
func (g *gather) readFrom(r io.Reader) error {
	for {
		n, err := r.Read(g.room())
		g.cur = g.cur[:len(g.cur)+n]
		if g.size += int64(n); g.size > g.max {
			return errGatherLimit
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// parts returns what was gathered, in order.
func (g *gather) parts() [][]byte { return append(g.full, g.cur) }

// appendTo appends what was gathered to dst, growing it once.
func (g *gather) appendTo(dst []byte) []byte {
	dst = slices.Grow(dst, int(g.size))
	for _, c := range g.parts() {
		dst = append(dst, c...)
	}
	return dst
}

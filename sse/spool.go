package sse

import "sync"

// spoolChunk is the unit in which the decoder keeps the bytes it has read
// and not yet delivered.
const spoolChunk = 32 << 10

// chunks recycles spool chunks across streams, so that a short response
// costs no buffer at all once the process has decoded a few.
var chunks = sync.Pool{New: func() any { b := make([]byte, spoolChunk); return &b }}

// spool keeps the bytes of a stream that the events not yet delivered are
// made of, in pooled chunks of spoolChunk bytes: chunk i holds the
// stream's bytes from first+i*spoolChunk on. The stream is read straight
// into the chunks, and an event's data is copied out of them once, into
// its final place; an event that is refused costs its bytes and one chunk,
// never a buffer grown by doubling.
type spool struct {
	chunks []*[]byte
	small  [2]*[]byte // chunks' first backing array: no allocation for short streams
	first  int64
	held   int // the most chunks held since the spool last held at most one
}

// maxPooledChunks bounds what a spool gives back to the pool: one that
// held more (an event above 4 MiB) leaves its chunks to the collector,
// because the pool would keep them live until two collections pass, beside
// the event's data and whatever the caller decodes from it.
const maxPooledChunks = 4 << 20 / spoolChunk

// put gives c back to the pool, unless the spool held too many chunks.
func (s *spool) put(c *[]byte) {
	if s.held <= maxPooledChunks {
		chunks.Put(c)
	}
}

// room returns the free space after stream position pos, the end of what
// was read, starting a chunk when the last one is full.
func (s *spool) room(pos int64) []byte {
	if len(s.chunks) == 0 {
		s.chunks, s.first = s.small[:0], pos
	}
	i, off := s.at(pos)
	if i == len(s.chunks) {
		s.chunks = append(s.chunks, chunks.Get().(*[]byte))
		s.held = max(s.held, len(s.chunks))
	}
	return (*s.chunks[i])[off:]
}

// appendRange appends the stream's bytes from position from to position
// to, which the spool holds, to dst.
func (s *spool) appendRange(dst []byte, from, to int64) []byte {
	for from < to {
		i, off := s.at(from)
		c := (*s.chunks[i])[off:]
		c = c[:min(int64(len(c)), to-from)]
		dst = append(dst, c...)
		from += int64(len(c))
	}
	return dst
}

// releaseBefore gives back the chunks that hold only bytes before stream
// position pos.
func (s *spool) releaseBefore(pos int64) {
	for len(s.chunks) > 0 && s.first+spoolChunk <= pos {
		s.put(s.chunks[0])
		s.chunks[0] = nil
		s.chunks, s.first = s.chunks[1:], s.first+spoolChunk
	}
	if len(s.chunks) <= 1 {
		s.held = len(s.chunks)
	}
}

func (s *spool) at(pos int64) (chunk, off int) {
	d := pos - s.first
	return int(d / spoolChunk), int(d % spoolChunk)
}

// release gives every chunk back.
func (s *spool) release() {
	for i, c := range s.chunks {
		s.put(c)
		s.chunks[i] = nil
	}
	s.chunks, s.held = nil, 0
}

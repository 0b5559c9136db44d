package sse

import "sync"

// spoolChunk is the unit in which the decoder keeps the bytes it has read
// and not yet handed to go-sse.
const spoolChunk = 32 << 10

// chunks recycles spool chunks across streams, so that a short response
// costs no buffer at all once the process has decoded a few.
var chunks = sync.Pool{New: func() any { b := make([]byte, spoolChunk); return &b }}

// spool keeps the bytes of a stream from where go-sse has read them up to
// where the stream has been read, in pooled chunks of spoolChunk bytes:
// chunk i holds the stream's bytes from first+i*spoolChunk on. Keeping an
// event in chunks until it is complete means that an event that is refused
// costs its bytes and one chunk, never a buffer grown by doubling.
type spool struct {
	chunks []*[]byte
	small  [2]*[]byte // chunks' first backing array: no allocation for short streams
	first  int64
}

// room returns the free space after stream position pos, the end of what
// was read, starting a chunk when the last one is full.
func (s *spool) room(pos int64) []byte {
	if s.chunks == nil {
		s.chunks, s.first = s.small[:0], pos
	}
	i, off := s.at(pos)
	if i == len(s.chunks) {
		s.chunks = append(s.chunks, chunks.Get().(*[]byte))
	}
	return (*s.chunks[i])[off:]
}

// copyOut copies into p the bytes from position from, at most n of them,
// and returns how many it copied. It then gives back the chunks that hold
// only bytes before the end of the copy.
func (s *spool) copyOut(p []byte, from, n int64) int {
	p = p[:min(int64(len(p)), n)]
	done := 0
	for done < len(p) {
		i, off := s.at(from + int64(done))
		done += copy(p[done:], (*s.chunks[i])[off:])
	}
	for len(s.chunks) > 0 && s.first+spoolChunk <= from+int64(done) {
		chunks.Put(s.chunks[0])
		s.chunks[0] = nil
		s.chunks, s.first = s.chunks[1:], s.first+spoolChunk
		if len(s.chunks) == 0 {
			s.chunks = s.small[:0]
		}
	}
	return done
}

func (s *spool) at(pos int64) (chunk, off int) {
	d := pos - s.first
	return int(d / spoolChunk), int(d % spoolChunk)
}

// release gives every chunk back.
func (s *spool) release() {
	for i, c := range s.chunks {
		chunks.Put(c)
		s.chunks[i] = nil
	}
	s.chunks = nil
}

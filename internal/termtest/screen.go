// Package termtest is a stand-in for a terminal's screen in tests: an
// io.Writer that tests wait on for what a program wrote.
package termtest

import (
	"strings"
	"sync"
	"time"
)

// Screen collects what is written to it. The zero value is ready to use;
// it is safe for concurrent use.
type Screen struct {
	mu      sync.Mutex
	buf     strings.Builder
	changed chan struct{} // capacity 1: something was written
}

// signal returns the channel of writes, made on first use. s.mu is held.
func (s *Screen) signal() chan struct{} {
	if s.changed == nil {
		s.changed = make(chan struct{}, 1)
	}
	return s.changed
}

// Write appends p to the screen.
func (s *Screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	n, err := s.buf.Write(p)
	ch := s.signal()
	s.mu.Unlock()
	select {
	case ch <- struct{}{}:
	default:
	}
	return n, err
}

// String returns all that was written.
func (s *Screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// WaitFor waits until the screen holds n occurrences of sub, at most d;
// it returns the screen and whether they came.
func (s *Screen) WaitFor(n int, sub string, d time.Duration) (string, bool) {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		out, ch := s.buf.String(), s.signal()
		s.mu.Unlock()
		if strings.Count(out, sub) >= n {
			return out, true
		}
		select {
		case <-ch:
		case <-deadline.C:
			return out, false
		}
	}
}

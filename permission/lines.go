package permission

import (
	"bufio"
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// MaxLineLength bounds a line handed out by Lines; the rest of a longer
// line is dropped.
const MaxLineLength = 64 << 10

// Lines hands out the lines of one input, such as os.Stdin, to whoever asks
// next: a host reading its user's messages and a [Terminal] asking for
// approvals ([NewSharedTerminal]) take turns on it. A Read of a terminal
// cannot be interrupted, so a program that gave the same os.Stdin to both
// would lose the user's next line to a question withdrawn by Ctrl-C; with
// Lines, a Next whose ctx ends takes no line, and the next caller gets it.
//
// A line is read only while someone waits for one, as a program that reads
// its input itself would: what the user types meanwhile stays in the
// terminal's buffer. One goroutine does the reading, from the first Next
// until the input ends or Close is called (then once its pending Read
// returns). Lines is safe for concurrent use; each line goes to one caller.
type Lines struct {
	in      *bufio.Reader
	start   sync.Once
	want    chan struct{}  // capacity 1: someone waits for a line
	waiting atomic.Int32   // how many wait
	ch      chan inputLine // the line read, until taken
	ended   chan struct{}  // closed once the input ended; err says how
	err     error
	stop    chan struct{}
	close   sync.Once
}

// NewLines returns Lines reading from in, which stays the caller's to
// close.
func NewLines(in io.Reader) *Lines {
	return &Lines{in: bufio.NewReaderSize(in, MaxLineLength), want: make(chan struct{}, 1), ch: make(chan inputLine),
		ended: make(chan struct{}), stop: make(chan struct{})}
}

// Next returns the next line, without its line ending. At the end of the
// input it returns io.EOF (after a last line without a line ending),
// after a read error that error, and when ctx is done first ctx.Err(),
// consuming no line.
func (l *Lines) Next(ctx context.Context) (string, error) {
	line, err := l.take(ctx)
	if err != nil {
		return "", err
	}
	return trimEOL(line.text), nil
}

// take waits for the next line as a Terminal reads it: with the time its
// read ended and whether it was cut.
func (l *Lines) take(ctx context.Context) (inputLine, error) {
	l.start.Do(func() { go l.read() })
	l.waiting.Add(1) // the reader takes it back with the line it hands over
	select {
	case l.want <- struct{}{}:
	default: // the reader was asked already
	}
	select {
	case line := <-l.ch:
		return line, nil
	case <-l.ended:
		l.waiting.Add(-1)
		return inputLine{}, l.err
	case <-ctx.Done():
		l.waiting.Add(-1)
		return inputLine{}, ctx.Err()
	}
}

// Close stops the reading: Next then returns io.EOF, once the line read
// ahead, if any, was taken. It always returns nil.
func (l *Lines) Close() error {
	l.close.Do(func() { close(l.stop) })
	return nil
}

func (l *Lines) read() {
	defer close(l.ended)
	for {
		select {
		case <-l.want:
		case <-l.stop:
			l.err = io.EOF
			return
		}
		if l.waiting.Load() == 0 {
			continue // asked, then given up: no reading ahead
		}
		b, err := l.in.ReadSlice('\n')
		line := inputLine{text: string(b)}
		for errors.Is(err, bufio.ErrBufferFull) {
			line.tooLong = true
			_, err = l.in.ReadSlice('\n')
		}
		line.at = time.Now()
		if line.text != "" {
			select {
			case l.ch <- line:
				l.waiting.Add(-1)
			case <-l.stop:
				l.err = io.EOF
				return
			}
		}
		if err != nil {
			l.err = err
			return
		}
		if l.waiting.Load() > 0 {
			// Another caller waits still: its signal may have been
			// absorbed by the one just served.
			select {
			case l.want <- struct{}{}:
			default:
			}
		}
	}
}

// trimEOL drops a line's ending, LF or CRLF.
func trimEOL(s string) string {
	if n := len(s); n > 0 && s[n-1] == '\n' {
		s = s[:n-1]
	}
	if n := len(s); n > 0 && s[n-1] == '\r' {
		s = s[:n-1]
	}
	return s
}

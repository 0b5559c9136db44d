package host

import (
	"bufio"
	"io"
	"strings"
)

// ReadLines reads the lines of in, without their line ending, on a
// goroutine of its own and sends them on the channel, which is closed at
// the end of in. A read from a terminal cannot be interrupted, so the
// goroutine lives until in ends, or with the program; whoever stops
// listening must drain the channel or let the program end.
func ReadLines(in io.Reader) <-chan string {
	lines := make(chan string)
	go func() {
		defer close(lines)
		r := bufio.NewReader(in)
		for {
			line, err := r.ReadString('\n')
			if line != "" {
				lines <- strings.TrimRight(line, "\r\n")
			}
			if err != nil {
				return
			}
		}
	}()
	return lines
}

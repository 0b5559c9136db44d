//go:build unix

package pgtest

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// Run is the body of a TestMain: it starts a server, gives it to
// started, runs the tests, stops the server and, if all passed, looks for
// leaked goroutines; it returns the exit code.
func Run(m *testing.M, started func(*Server)) int {
	s, err := Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	started(s)
	code := m.Run()
	if err := s.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	return code
}

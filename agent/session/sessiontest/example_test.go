package sessiontest_test

import (
	"context"
	"os"
	"testing"

	"git.rickub.com/bots-garden/mini-me/agent/session"
	"git.rickub.com/bots-garden/mini-me/agent/session/sessiontest"
)

// openMyStore stands for the opener of the implementation under test: it
// opens the database at addr (this stand-in cannot: it makes a new empty
// store each time, which the suite would catch).
func openMyStore(_ context.Context, addr string) (session.Store, func() error, error) {
	return &session.Memory{}, func() error { return nil }, nil
}

// An implementation's tests: TestMain lets the suite use the test binary
// as a worker process, TestConformance runs the suite and
// BenchmarkConformance the benchmarks. (Not run here: the functions are
// the shape of a _test.go file.)
func Example() {
	testMain := func(m *testing.M) {
		if code, ok := sessiontest.Worker(openMyStore); ok {
			os.Exit(code)
		}
		os.Exit(m.Run())
	}
	config := sessiontest.Config{
		Open:        openMyStore,
		NewDatabase: func(t testing.TB) string { return t.Name() },
		Processes:   false, // true for a store other processes can open
	}
	testConformance := func(t *testing.T) { sessiontest.Run(t, config) }
	benchmarkConformance := func(b *testing.B) { sessiontest.Bench(b, config) }
	_, _, _ = testMain, testConformance, benchmarkConformance
}

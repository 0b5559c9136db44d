package sessiontest

import (
	"context"
	"testing"

	"git.rickub.com/bots-garden/mini-me/agent/session"
)

// Opener opens a Store on the database at addr, in this process or in a
// worker; closeStore releases what it holds.
type Opener func(ctx context.Context, addr string) (s session.Store, closeStore func() error, err error)

// Config says how to reach the Store under test.
type Config struct {
	// Open opens a Store. Two stores opened on one address, in one
	// process or (with Processes) in two, see the same conversations.
	Open Opener
	// NewDatabase returns the address of a new, empty database, for one
	// test; it removes the database when t ends, if need be.
	NewDatabase func(t testing.TB) string
	// Processes says that stores opened in several processes share a
	// database: the tests that need several processes run only then.
	Processes bool
}

// Run runs the conformance suite, each test in a subtest of t.
func Run(t *testing.T, c Config) {
	tests := []struct {
		name string
		run  func(*testing.T, Config)
	}{
		{"AppendLoad", testAppendLoad},
		{"RoundTrip", testRoundTrip},
		{"NotFound", testNotFound},
		{"Invalid", testInvalid},
		{"Cancelled", testCancelled},
		{"IfRevision", testIfRevision},
		{"ClaimOnce", testClaimOnce},
		{"State", testState},
		{"Compaction", testCompaction},
		{"List", testList},
		{"Delete", testDelete},
		{"ConcurrentWriters", testConcurrentWriters},
		{"LongSession", testLongSession},
		{"TwoProcesses", testTwoProcesses},
		{"KilledWriter", testKilledWriter},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, c) })
	}
}

// open opens a store on addr for the rest of the test.
func open(t testing.TB, c Config, addr string) session.Store {
	t.Helper()
	s, closeStore, err := c.Open(context.Background(), addr)
	if err != nil {
		t.Fatalf("opening the store: %v", err)
	}
	t.Cleanup(func() {
		if err := closeStore(); err != nil {
			t.Errorf("closing the store: %v", err)
		}
	})
	return s
}

// fresh opens a store on a new database.
func fresh(t testing.TB, c Config) (session.Store, string) {
	t.Helper()
	addr := c.NewDatabase(t)
	return open(t, c, addr), addr
}

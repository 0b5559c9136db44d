// Package sessiontest is the conformance suite of [session.Store]: the
// tests every implementation passes ([Run]) and the benchmarks that
// measure it ([Bench]). An implementation's own tests call them with a
// [Config] saying how to open the store:
//
//	func TestMain(m *testing.M) {
//		if code, ok := sessiontest.Worker(open); ok {
//			os.Exit(code)
//		}
//		goleak.VerifyTestMain(m)
//	}
//
//	func TestConformance(t *testing.T) {
//		sessiontest.Run(t, sessiontest.Config{Open: open, NewDatabase: newDatabase, Processes: true})
//	}
//
// With Processes set, some tests run the test binary again as worker
// processes (two writers appending to one conversation at once, a writer
// killed in the middle of an append): [Worker] in TestMain is what makes
// such a process a worker.
package sessiontest

package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"git.rickub.com/bots-garden/mini-me/agent/session"
	"git.rickub.com/bots-garden/mini-me/agent/session/sessiontest"
	"git.rickub.com/bots-garden/mini-me/agent/session/sqlite"
)

func TestMain(m *testing.M) {
	if code, ok := sessiontest.Worker(open); ok {
		os.Exit(code)
	}
	goleak.VerifyTestMain(m)
}

func open(ctx context.Context, path string) (session.Store, func() error, error) {
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		return nil, nil, err
	}
	return s, s.Close, nil
}

var config = sessiontest.Config{
	Open:        open,
	NewDatabase: func(t testing.TB) string { return filepath.Join(t.TempDir(), "sessions.db") },
	Processes:   true,
}

func TestConformance(t *testing.T) { sessiontest.Run(t, config) }

// Command: go test -run '^$' -bench . -benchtime 2000x ./...
func BenchmarkStore(b *testing.B) { sessiontest.Bench(b, config) }

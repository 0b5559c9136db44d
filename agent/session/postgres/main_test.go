package postgres_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"git.rickub.com/bots-garden/mini-me/agent/session"
	"git.rickub.com/bots-garden/mini-me/agent/session/postgres"
	"git.rickub.com/bots-garden/mini-me/agent/session/sessiontest"
	"git.rickub.com/bots-garden/mini-me/internal/pgtest"
)

// server is the PostgreSQL server TestMain started.
var server *pgtest.Server

func TestMain(m *testing.M) {
	if code, ok := sessiontest.Worker(open); ok { // a worker: the server runs in its parent
		os.Exit(code)
	}
	os.Exit(pgtest.Run(m, func(s *pgtest.Server) { server = s }))
}

func open(ctx context.Context, addr string) (session.Store, func() error, error) {
	pool, err := pgxpool.New(ctx, addr)
	if err != nil {
		return nil, nil, err
	}
	s := &postgres.Store{Pool: pool}
	if err := s.Setup(ctx); err != nil {
		pool.Close()
		return nil, nil, err
	}
	return s, func() error { pool.Close(); return nil }, nil
}

var databases atomic.Int64

// newDatabase creates a database for one test, dropped when it ends.
func newDatabase(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	name := fmt.Sprint("sessions_", databases.Add(1))
	admin, err := pgx.Connect(ctx, server.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		admin, err := pgx.Connect(ctx, server.URL)
		if err != nil {
			t.Error(err)
			return
		}
		defer admin.Close(ctx)
		if _, err := admin.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Error(err)
		}
	})
	u, err := url.Parse(server.URL)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

var config = sessiontest.Config{Open: open, NewDatabase: newDatabase, Processes: true}

func TestConformance(t *testing.T) { sessiontest.Run(t, config) }

// Command: go test -run '^$' -bench . -benchtime 2000x ./...
func BenchmarkStore(b *testing.B) { sessiontest.Bench(b, config) }

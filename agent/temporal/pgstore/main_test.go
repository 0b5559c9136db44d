package pgstore_test

import (
	"os"
	"testing"

	"git.rickub.com/bots-garden/mini-me/internal/pgtest"
)

// dsn is the database of the PostgreSQL server TestMain started.
var dsn string

func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) != "" {
		os.Exit(workerMain())
	}
	os.Exit(pgtest.Run(m, func(s *pgtest.Server) { dsn = s.URL }))
}

package sqlite_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"git.rickub.com/bots-garden/mini-me/agent/session"
	"git.rickub.com/bots-garden/mini-me/agent/session/sqlite"
)

// TestOpenPath: a path is a path, whatever it holds ('?', '#', '%',
// spaces): the file is created where it says, and nowhere else.
func TestOpenPath(t *testing.T) {
	dir := t.TempDir()
	names := []string{"a?mode=ro.db", "b#frag.db", "c%20d.db", "e f.db", "日本.db"}
	for _, name := range names {
		path := filepath.Join(dir, name)
		s, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatalf("Open(%q): %v", path, err)
		}
		if _, err := s.Append(context.Background(), "conv", session.Batch{}); err != nil {
			t.Fatalf("Append in %q: %v", path, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("Open(%q) did not write that file: %v", path, err)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		db := strings.TrimSuffix(strings.TrimSuffix(e.Name(), "-wal"), "-shm")
		if !slices.Contains(names, db) {
			t.Errorf("Open wrote %q, a file no path named", e.Name())
		}
	}
}

// TestOpenRefuses: a file that is not a database, or whose tables a newer
// version of this package wrote, is refused with a clear error.
func TestOpenRefuses(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.db")
	if err := os.WriteFile(junk, []byte(strings.Repeat("not a database ", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := sqlite.Open(context.Background(), junk); err == nil {
		_ = s.Close()
		t.Fatal("Open of a file that is not a database: no error")
	}

	newer := filepath.Join(dir, "newer.db")
	db, err := sql.Open("sqlite", newer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := sqlite.Open(context.Background(), newer)
	if err == nil {
		_ = s.Close()
		t.Fatal("Open of a database of schema version 99: no error")
	}
	if !strings.Contains(err.Error(), "version 99") {
		t.Fatalf("Open of a database of schema version 99: %v, want an error that names the version", err)
	}
	if _, err := sqlite.Open(context.Background(), ""); err == nil {
		t.Fatal("Open of an empty path: no error")
	}
}

package pgstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"git.rickub.com/bots-garden/mini-me/agent/temporal/pgstore"
	"git.rickub.com/bots-garden/mini-me/mcp/oauth"
)

// newStore returns a Store of the test's server on a table of its own,
// created by Setup.
func newStore(t *testing.T, table string) *pgstore.Store {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	s := &pgstore.Store{Pool: pool, Table: table}
	if err := s.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestLoadSave(t *testing.T) {
	s := newStore(t, "load_save")
	ctx := context.Background()
	key := oauth.Key{Resource: "http://127.0.0.1/mcp", Issuer: "http://127.0.0.1/as"}
	if tok, err := s.Load(ctx, key); tok != nil || err != nil {
		t.Fatalf("Load of an empty table: %v, %v; want nil, nil", tok, err)
	}
	want := &oauth.Token{AccessToken: "at-1", RefreshToken: "rt-1", Scopes: []string{"read"},
		Expiry: time.Now().Add(time.Hour).UTC().Round(0), Client: oauth.Registration{ID: "c1"}}
	if err := s.Save(ctx, key, want); err != nil {
		t.Fatal(err)
	}
	other := key
	other.Client = "pre"
	if tok, err := s.Load(ctx, other); tok != nil || err != nil {
		t.Fatalf("Load of another client's key: %v, %v; want nil, nil", tok, err)
	}
	want.AccessToken = "at-2" // Save replaces
	if err := s.Save(ctx, key, want); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(ctx, key)
	if err != nil || got == nil || got.AccessToken != "at-2" || got.RefreshToken != "rt-1" || !got.Expiry.Equal(want.Expiry) ||
		len(got.Scopes) != 1 || got.Client.ID != "c1" {
		t.Fatalf("Load after Save: %+v, %v", got, err)
	}
	if err := s.Save(ctx, key, nil); err != nil {
		t.Fatal(err)
	}
	if tok, err := s.Load(ctx, key); tok != nil || err != nil {
		t.Fatalf("Load after Save(nil): %v, %v; want nil, nil", tok, err)
	}
}

// TestLockExcludes: a second Lock of a key waits while the first is held
// (here until its context ends), other keys do not, and once unlocked the
// key can be locked again; Load and Save work while it is held.
func TestLockExcludes(t *testing.T) {
	a, b := newStore(t, "locks"), newStore(t, "locks") // two pools: two "processes"
	ctx := context.Background()
	key := oauth.Key{Resource: "r", Issuer: "i"}
	unlock, err := a.Lock(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Save(ctx, key, &oauth.Token{AccessToken: "x"}); err != nil {
		t.Fatalf("Save while locked: %v", err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if u, err := b.Lock(short, key); !errors.Is(err, context.DeadlineExceeded) {
		if err == nil {
			u()
		}
		t.Fatalf("Lock of a held key: %v, want the context's deadline", err)
	}
	u, err := b.Lock(ctx, oauth.Key{Resource: "r", Issuer: "i", Client: "other"})
	if err != nil {
		t.Fatalf("Lock of another key: %v", err)
	}
	u()
	unlock()
	// b's wait ended with its context: it holds nothing, now or later.
	again, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if u, err = a.Lock(again, key); err != nil {
		t.Fatalf("Lock after unlock: %v", err)
	}
	u()
}

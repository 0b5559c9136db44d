package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/jackc/pgx/v5/pgxpool"

	"git.rickub.com/bots-garden/mini-me/agent/session"
	"git.rickub.com/bots-garden/mini-me/agent/session/postgres"
)

// A store on a PostgreSQL database that several workers share: each
// worker makes its Store on its own pool and calls Setup as it starts.
func ExampleStore() {
	ctx := context.Background()
	dsn := server.URL // the test's server; a host's is "postgres://user:password@host/db"
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	store := &postgres.Store{Pool: pool}
	if err := store.Setup(ctx); err != nil {
		log.Fatal(err)
	}
	defer func() { _ = store.Delete(ctx, "example/chat-1") }()

	msg := json.RawMessage(`{"role":"user","content":"What is on my calendar today?"}`)
	info, err := store.Append(ctx, "example/chat-1", session.Batch{Messages: []json.RawMessage{msg}})
	if err != nil {
		log.Fatal(err)
	}
	list, err := store.List(ctx, session.ListOptions{Prefix: "example/"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(info.Revision, info.Last, len(list), list[0].ID)
	// Output:
	// 1 1 1 example/chat-1
}

package pgstore_test

import (
	"context"
	"log"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"

	"git.rickub.com/bots-garden/mini-me/agent/temporal/pgstore"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/oauth"
)

// Every worker opens the same database; the first sign-in serves them all,
// and they renew the token one at a time.
func Example() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("TOKENS_DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	store := &pgstore.Store{Pool: pool}
	if err := store.Setup(ctx); err != nil {
		log.Fatal(err)
	}
	auth, err := oauth.New("https://mcp.example.com/mcp", oauth.Config{Store: store})
	if err != nil {
		log.Fatal(err)
	}
	defer auth.CloseIdleConnections()
	_ = &mcp.HTTPTransport{URL: "https://mcp.example.com/mcp", Credentials: auth}
}

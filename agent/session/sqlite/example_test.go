package sqlite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"git.rickub.com/bots-garden/mini-me/agent/session"
	"git.rickub.com/bots-garden/mini-me/agent/session/sqlite"
)

// A store in a file: opened (and created) by its path alone; what one
// process appends, a process that opens the file later loads.
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "sessions-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "sessions.db")
	ctx := context.Background()

	store, err := sqlite.Open(ctx, path)
	if err != nil {
		log.Fatal(err)
	}
	msg := json.RawMessage(`{"role":"user","content":"What is on my calendar today?"}`)
	if _, err := store.Append(ctx, "chat-1", session.Batch{Messages: []json.RawMessage{msg}}); err != nil {
		log.Fatal(err)
	}
	if err := store.Close(); err != nil {
		log.Fatal(err)
	}

	// Later, or in another process.
	store, err = sqlite.Open(ctx, path)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	s, err := store.Load(ctx, "chat-1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(s.Revision, string(s.Messages[0]))
	// Output:
	// 1 {"role":"user","content":"What is on my calendar today?"}
}

package session_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"git.rickub.com/bots-garden/mini-me/agent/session"
)

// A conversation's life in a store: turns appended as they come, a run
// paused for approvals stored with its state and claimed once, then a
// compaction that shortens what the model sees and keeps the originals.
// The messages would be agent.Messages (session.Encode(result.Messages))
// and the state an agent.State as JSON; here they are written by hand.
func ExampleMemory() {
	ctx := context.Background()
	var store session.Store = &session.Memory{} // or sqlite.Open(ctx, path), or &postgres.Store{Pool: pool}

	turn := []json.RawMessage{
		json.RawMessage(`{"role":"user","content":"Send Ada her invoice."}`),
		json.RawMessage(`{"role":"assistant","tool_calls":[{"id":"call_1","name":"send_invoice"}]}`),
	}
	paused := json.RawMessage(`{"version":1,"id":"pause-1","pending":[{"id":"p1"}]}`)
	if _, err := store.Append(ctx, "user-42/invoices", session.Batch{Messages: turn, State: paused}); err != nil {
		log.Fatal(err)
	}

	// Another process, once the user has answered: claim the paused run,
	// so that no other process resumes it too.
	s, err := store.Load(ctx, "user-42/invoices")
	if err != nil {
		log.Fatal(err)
	}
	claimed, err := store.Append(ctx, s.ID, session.Batch{ClearState: true, IfRevision: s.Revision})
	fmt.Printf("claimed: %t, state: %s\n", err == nil, s.State)
	// ... agent.Resume with the state; then append what the run added.
	answer := []json.RawMessage{json.RawMessage(`{"role":"assistant","content":"The invoice is on its way."}`)}
	if _, err := store.Append(ctx, s.ID, session.Batch{Messages: answer, IfRevision: claimed.Revision}); err != nil {
		log.Fatal(err)
	}

	// A compaction: a summary replaces messages 1 to 2.
	summary := json.RawMessage(`{"role":"user","content":"(Summary: Ada's invoice was sent.)"}`)
	if _, err := store.Append(ctx, s.ID, session.Batch{Compaction: &session.Compaction{Through: 2, Messages: []json.RawMessage{summary}}}); err != nil {
		log.Fatal(err)
	}
	s, err = store.Load(ctx, s.ID)
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range s.Messages {
		fmt.Println("model sees:", string(m))
	}
	originals, err := store.History(ctx, s.ID, 0, 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("stored: %d messages, revision %d\n", len(originals), s.Revision)
	// Output:
	// claimed: true, state: {"version":1,"id":"pause-1","pending":[{"id":"p1"}]}
	// model sees: {"role":"user","content":"(Summary: Ada's invoice was sent.)"}
	// model sees: {"role":"assistant","content":"The invoice is on its way."}
	// stored: 3 messages, revision 4
}

// Encode and Decode convert a host's messages (agent.Message, or any
// JSON-encodable type) to and from what a Store holds.
func ExampleDecode() {
	type message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	raw, err := session.Encode([]message{{Role: "user", Content: "Hello"}})
	if err != nil {
		log.Fatal(err)
	}
	msgs, err := session.Decode[message](raw)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s -> %+v\n", raw[0], msgs[0])
	// Output:
	// {"role":"user","content":"Hello"} -> {Role:user Content:Hello}
}

package sessiontest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"git.rickub.com/bots-garden/mini-me/agent/session"
)

// testConcurrentWriters: goroutines appending to one conversation through
// two stores never interleave their batches nor lose one.
func testConcurrentWriters(t *testing.T, c Config) {
	s, addr := fresh(t, c)
	stores := []session.Store{s, open(t, c, addr)}
	const writers, batches, size = 6, 15, 7
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprint("w", w)
			for n := range batches {
				if _, err := stores[w%2].Append(context.Background(), "shared", session.Batch{Messages: batchOf(name, n, size, 0)}); err != nil {
					errs <- fmt.Errorf("writer %s, batch %d: %w", name, n, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	want := map[string]int{}
	for w := range writers {
		want[fmt.Sprint("w", w)] = batches
	}
	checkWriters(t, s, "shared", size, want)
	if got := load(t, s, "shared"); got.Revision != writers*batches || got.Last != writers*batches*size {
		t.Fatalf("after concurrent Appends: %+v", got.Info)
	}
}

// LongSessionMessages is the length of the conversation of the
// LongSession test and of the benchmarks.
const LongSessionMessages = 10_000

// testLongSession: a conversation of LongSessionMessages messages, appended
// a turn at a time, loads whole and in order.
func testLongSession(t *testing.T, c Config) {
	s, _ := fresh(t, c)
	const perTurn = 100
	want := fillLong(t, s, "long", perTurn)
	got := load(t, s, "long")
	if got.Last != LongSessionMessages || got.Revision != LongSessionMessages/perTurn {
		t.Fatalf("Info of the long conversation: %+v", got.Info)
	}
	sameMessages(t, "Load of the long conversation", got.Messages, want)
	sameMessages(t, "History of the long conversation", messagesOf(history(t, s, "long", 0)), want)
	// Compacted down to a summary and its last 10 messages.
	summary := texts("summary", 1)
	appendOK(t, s, "long", session.Batch{Compaction: &session.Compaction{Through: LongSessionMessages - 10, Messages: summary}})
	sameMessages(t, "Load of the compacted long conversation", load(t, s, "long").Messages, append(summary, want[LongSessionMessages-10:]...))
}

// fillLong appends LongSessionMessages messages to id, perTurn at a time,
// and returns them.
func fillLong(t testing.TB, s session.Store, id string, perTurn int) []json.RawMessage {
	t.Helper()
	all := make([]json.RawMessage, 0, LongSessionMessages)
	for len(all) < LongSessionMessages {
		turn := make([]json.RawMessage, perTurn)
		for i := range turn {
			turn[i] = text(fmt.Sprintf("message %d: %s", len(all)+i+1, "a turn of a long conversation, as long as a short answer"))
		}
		appendOK(t, s, id, session.Batch{Messages: turn})
		all = append(all, turn...)
	}
	return all
}

package sessiontest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"git.rickub.com/bots-garden/mini-me/agent/session"
)

// tagged is a message written by the tests with several writers: which
// writer, which of its batches, which message of the batch.
type tagged struct {
	Writer string `json:"writer"`
	Batch  int    `json:"batch"`
	Index  int    `json:"index"`
	Pad    string `json:"pad,omitempty"`
}

// batchOf returns batch number n of writer: size tagged messages, each
// padded with pad bytes.
func batchOf(writer string, n, size, pad int) []json.RawMessage {
	out := make([]json.RawMessage, size)
	for i := range out {
		b, err := json.Marshal(tagged{Writer: writer, Batch: n, Index: i, Pad: strings.Repeat("p", pad)})
		if err != nil {
			panic(err) // a struct of strings and ints always encodes
		}
		out[i] = b
	}
	return out
}

// checkBatches returns how many batches of each writer entries hold,
// after checking that each batch is whole and contiguous and that each
// writer's batches are there in order from 0, without a gap.
func checkBatches(entries []session.Entry, size int) (map[string]int, error) {
	count := map[string]int{}
	for i := 0; i < len(entries); i += size {
		if len(entries)-i < size {
			return nil, fmt.Errorf("%d messages: the last batch is cut short", len(entries))
		}
		var first tagged
		for j := range size {
			e := entries[i+j]
			var m tagged
			if err := json.Unmarshal(e.Message, &m); err != nil {
				return nil, fmt.Errorf("message %d: %v", e.Seq, err)
			}
			if j == 0 {
				first = m
			}
			if m.Writer != first.Writer || m.Batch != first.Batch || m.Index != j {
				return nil, fmt.Errorf("message %d is %s/%d/%d inside batch %s/%d: batches interleave or are cut",
					e.Seq, m.Writer, m.Batch, m.Index, first.Writer, first.Batch)
			}
		}
		if first.Batch != count[first.Writer] {
			return nil, fmt.Errorf("message %d begins batch %d of %s, want batch %d", entries[i].Seq, first.Batch, first.Writer, count[first.Writer])
		}
		count[first.Writer]++
	}
	return count, nil
}

// checkWriters fails t unless the conversation holds exactly want batches
// of size messages of each writer, whole and in order.
func checkWriters(t testing.TB, s session.Store, id string, size int, want map[string]int) {
	t.Helper()
	got, err := checkBatches(history(t, s, id, 0), size)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("batches per writer: %v, want %v", got, want)
	}
}

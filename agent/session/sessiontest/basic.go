package sessiontest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"git.rickub.com/bots-garden/mini-me/agent/session"
)

// text returns a message holding s.
func text(s string) json.RawMessage {
	b, err := json.Marshal(map[string]string{"role": "user", "text": s})
	if err != nil {
		panic(err) // a map of strings always encodes
	}
	return b
}

// texts returns the messages holding prefix+"1" to prefix+n.
func texts(prefix string, n int) []json.RawMessage {
	out := make([]json.RawMessage, n)
	for i := range out {
		out[i] = text(fmt.Sprint(prefix, i+1))
	}
	return out
}

func appendOK(t testing.TB, s session.Store, id string, b session.Batch) session.Info {
	t.Helper()
	info, err := s.Append(context.Background(), id, b)
	if err != nil {
		t.Fatalf("Append(%q): %v", id, err)
	}
	return info
}

func load(t testing.TB, s session.Store, id string) *session.Session {
	t.Helper()
	got, err := s.Load(context.Background(), id)
	if err != nil {
		t.Fatalf("Load(%q): %v", id, err)
	}
	return got
}

// sameMessages fails t unless got and want hold the same bytes.
func sameMessages(t testing.TB, what string, got, want []json.RawMessage) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d messages, want %d", what, len(got), len(want))
	}
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("%s: message %d is %s, want %s", what, i, got[i], want[i])
		}
	}
}

// history reads every stored message of id, a page of pageSize at a time
// (<= 0: the default page).
func history(t testing.TB, s session.Store, id string, pageSize int) []session.Entry {
	t.Helper()
	limit := pageSize // what the store should take pageSize to mean
	if limit <= 0 {
		limit = session.DefaultHistoryLimit
	}
	var all []session.Entry
	for {
		page, err := s.History(context.Background(), id, int64(len(all)), pageSize)
		if err != nil {
			t.Fatalf("History(%q, %d): %v", id, len(all), err)
		}
		if len(page) > limit {
			t.Fatalf("History(%q, %d, %d): %d entries, more than %d", id, len(all), pageSize, len(page), limit)
		}
		for i, e := range page {
			if want := int64(len(all) + i + 1); e.Seq != want {
				t.Fatalf("History(%q, %d): entry %d has Seq %d, want %d", id, len(all), i, e.Seq, want)
			}
		}
		all = append(all, page...)
		if len(page) < limit {
			return all
		}
	}
}

func messagesOf(entries []session.Entry) []json.RawMessage {
	out := make([]json.RawMessage, len(entries))
	for i, e := range entries {
		out[i] = e.Message
	}
	return out
}

// checkTimes fails t unless info's times are set, in order, and near now.
func checkTimes(t testing.TB, info session.Info) {
	t.Helper()
	if info.Created.IsZero() || info.Updated.Before(info.Created) {
		t.Fatalf("Info times: created %v, updated %v", info.Created, info.Updated)
	}
	if d := time.Since(info.Updated); d < -time.Minute || d > time.Hour {
		t.Fatalf("Info.Updated %v is %v from now", info.Updated, d)
	}
}

func testAppendLoad(t *testing.T, c Config) {
	s, addr := fresh(t, c)
	first := texts("a", 3)
	info := appendOK(t, s, "conv", session.Batch{Messages: first})
	if info.ID != "conv" || info.Revision != 1 || info.Last != 3 || info.Through != 0 || info.HasState {
		t.Fatalf("Info after the first Append: %+v", info)
	}
	checkTimes(t, info)
	second := texts("b", 2)
	info2 := appendOK(t, s, "conv", session.Batch{Messages: second})
	if info2.Revision != 2 || info2.Last != 5 || !info2.Created.Equal(info.Created) || info2.Updated.Before(info.Updated) {
		t.Fatalf("Info after the second Append: %+v (first %+v)", info2, info)
	}
	got := load(t, s, "conv")
	sameMessages(t, "Load", got.Messages, append(first, second...))
	if got.Info.Revision != 2 || got.Last != 5 || got.State != nil || !got.Created.Equal(info.Created) || !got.Updated.Equal(info2.Updated) {
		t.Fatalf("Load's Info: %+v, state %s; want %+v", got.Info, got.State, info2)
	}
	// An empty batch creates a conversation without messages.
	if info := appendOK(t, s, "empty", session.Batch{}); info.Revision != 1 || info.Last != 0 {
		t.Fatalf("Info of an empty Append: %+v", info)
	}
	if got := load(t, s, "empty"); len(got.Messages) != 0 {
		t.Fatalf("Load of an empty conversation: %d messages", len(got.Messages))
	}
	// Another store on the same database sees the same.
	sameMessages(t, "Load from another store", load(t, open(t, c, addr), "conv").Messages, append(first, second...))
}

// testRoundTrip: messages and states come back byte for byte, whatever
// their spacing, key order, escapes or script.
func testRoundTrip(t *testing.T, c Config) {
	s, _ := fresh(t, c)
	odd := []json.RawMessage{
		json.RawMessage(`{"z":1,"a":[true,false,null],  "nested" : {"b":"\u00e9\n\"q\"","a":1e400}}`),
		json.RawMessage(`"a bare string: caf\u00e9, 日本語, 🙂, \u0000"`),
		json.RawMessage(` [1, 2.50, -0, 1E3] `),
		json.RawMessage(`{"dup":1,"dup":2}`),
		json.RawMessage(`["\ud800 a lone surrogate", "\udc00\ud800", "\u0000"]`),
		json.RawMessage("{\"big\":\"" + strings.Repeat("x", 1<<20) + "\"}"),
	}
	state := json.RawMessage(`{"version":1,"id":"p1","pending":[{"id":"c1"}], "extra" : "\u2028"}`)
	appendOK(t, s, "odd", session.Batch{Messages: odd, State: state})
	got := load(t, s, "odd")
	sameMessages(t, "Load", got.Messages, odd)
	if !bytes.Equal(got.State, state) {
		t.Fatalf("state came back as %s, want %s", got.State, state)
	}
	sameMessages(t, "History", messagesOf(history(t, s, "odd", 2)), odd)
	// IDs are bytes too: any valid UTF-8 without NUL, up to the limit.
	for _, id := range []string{"user-42/2026-12-07T05:00:00Z", "a b?c#d%20e'f\"g", "日本語", strings.Repeat("i", session.MaxIDBytes)} {
		appendOK(t, s, id, session.Batch{Messages: texts(id, 1)})
		if got := load(t, s, id); got.ID != id || len(got.Messages) != 1 {
			t.Fatalf("Load(%q): ID %q, %d messages", id, got.ID, len(got.Messages))
		}
	}
}

func testNotFound(t *testing.T, c Config) {
	s, _ := fresh(t, c)
	ctx := context.Background()
	if _, err := s.Load(ctx, "missing"); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("Load of a missing conversation: %v, want ErrNotFound", err)
	}
	if _, err := s.History(ctx, "missing", 0, 0); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("History of a missing conversation: %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, "missing"); err != nil {
		t.Fatalf("Delete of a missing conversation: %v, want nil", err)
	}
	if l, err := s.List(ctx, session.ListOptions{}); err != nil || len(l) != 0 {
		t.Fatalf("List of an empty store: %v, %v", l, err)
	}
	appendOK(t, s, "conv", session.Batch{Messages: texts("m", 2)})
	if h, err := s.History(ctx, "conv", 2, 0); err != nil || h == nil || len(h) != 0 {
		t.Fatalf("History after the last message: %v (nil: %t), %v; want an empty slice", h, h == nil, err)
	}
}

// testInvalid: bad input is refused with ErrInvalid, and stores nothing.
func testInvalid(t *testing.T, c Config) {
	s, _ := fresh(t, c)
	ctx := context.Background()
	appendOK(t, s, "conv", session.Batch{Messages: texts("m", 2)})
	huge := json.RawMessage(append([]byte("1"), bytes.Repeat([]byte(" "), session.MaxValueBytes)...)) // valid JSON, one byte too many
	batches := map[string]session.Batch{
		"not JSON":                {Messages: []json.RawMessage{text("ok"), json.RawMessage(`{"a":`)}},
		"empty message":           {Messages: []json.RawMessage{{}}},
		"invalid UTF-8":           {Messages: []json.RawMessage{json.RawMessage("\"\xff\xfe\"")}},
		"too large":               {Messages: []json.RawMessage{huge}},
		"state not JSON":          {State: json.RawMessage(`nope`)},
		"state and clear":         {State: json.RawMessage(`{}`), ClearState: true},
		"compaction past the end": {Messages: texts("n", 1), Compaction: &session.Compaction{Through: 4}},
		"negative through":        {Compaction: &session.Compaction{Through: -1}},
		"compaction not JSON":     {Compaction: &session.Compaction{Through: 1, Messages: []json.RawMessage{json.RawMessage(`[`)}}},
		"negative revision":       {IfRevision: -1},
	}
	for name, b := range batches {
		if _, err := s.Append(ctx, "conv", b); !errors.Is(err, session.ErrInvalid) {
			t.Errorf("Append of a batch with %s: %v, want ErrInvalid", name, err)
		}
	}
	for _, id := range []string{"", "a\x00b", "\xff", strings.Repeat("i", session.MaxIDBytes+1)} {
		if _, err := s.Append(ctx, id, session.Batch{Messages: texts("m", 1)}); !errors.Is(err, session.ErrInvalid) {
			t.Errorf("Append to ID %q: %v, want ErrInvalid", id, err)
		}
		if _, err := s.Load(ctx, id); !errors.Is(err, session.ErrInvalid) {
			t.Errorf("Load of ID %q: %v, want ErrInvalid", id, err)
		}
	}
	got := load(t, s, "conv")
	if got.Revision != 1 || got.Last != 2 || got.Through != 0 || got.HasState {
		t.Fatalf("after refused Appends: %+v, want revision 1 and its two messages", got.Info)
	}
	if l, err := s.List(ctx, session.ListOptions{}); err != nil || len(l) != 1 {
		t.Fatalf("List after refused Appends: %v, %v; want conv alone", l, err)
	}
}

// testCancelled: a call whose context has ended fails with its error and
// stores nothing.
func testCancelled(t *testing.T, c Config) {
	s, _ := fresh(t, c)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Append(ctx, "conv", session.Batch{Messages: texts("m", 3)}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Append with an ended context: %v, want context.Canceled", err)
	}
	if _, err := s.Load(context.Background(), "conv"); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("Load after a cancelled Append: %v, want ErrNotFound", err)
	}
	if _, err := s.Load(ctx, "conv"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Load with an ended context: %v, want context.Canceled", err)
	}
	if _, err := s.List(ctx, session.ListOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("List with an ended context: %v, want context.Canceled", err)
	}
}

func testIfRevision(t *testing.T, c Config) {
	s, _ := fresh(t, c)
	ctx := context.Background()
	if _, err := s.Append(ctx, "conv", session.Batch{Messages: texts("m", 1), IfRevision: 1}); !errors.Is(err, session.ErrConflict) {
		t.Fatalf("conditional Append to a missing conversation: %v, want ErrConflict", err)
	}
	if _, err := s.Load(ctx, "conv"); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("a refused conditional Append created the conversation: %v", err)
	}
	info := appendOK(t, s, "conv", session.Batch{Messages: texts("a", 2)})
	info = appendOK(t, s, "conv", session.Batch{Messages: texts("b", 1), IfRevision: info.Revision})
	if info.Revision != 2 || info.Last != 3 {
		t.Fatalf("after a conditional Append: %+v", info)
	}
	if _, err := s.Append(ctx, "conv", session.Batch{Messages: texts("c", 1), State: json.RawMessage(`{}`), IfRevision: 1}); !errors.Is(err, session.ErrConflict) {
		t.Fatalf("Append with a stale revision: %v, want ErrConflict", err)
	}
	if got := load(t, s, "conv"); got.Revision != 2 || got.Last != 3 || got.HasState {
		t.Fatalf("a refused Append changed the conversation: %+v", got.Info)
	}
}

// testClaimOnce: of several stores that claim one paused run at once,
// exactly one succeeds (Batch.IfRevision's recipe).
func testClaimOnce(t *testing.T, c Config) {
	s, addr := fresh(t, c)
	stores := []session.Store{s, open(t, c, addr), open(t, c, addr)}
	info := appendOK(t, s, "paused", session.Batch{Messages: texts("m", 2), State: json.RawMessage(`{"pending":1}`)})
	const claimers = 9
	var wg sync.WaitGroup
	results := make(chan error, claimers)
	for i := range claimers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := stores[i%len(stores)].Append(context.Background(), "paused",
				session.Batch{Messages: texts(fmt.Sprint("claim", i, "-"), 1), ClearState: true, IfRevision: info.Revision})
			results <- err
		}()
	}
	wg.Wait()
	close(results)
	won := 0
	for err := range results {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, session.ErrConflict):
			t.Fatalf("a claim failed with %v, want nil or ErrConflict", err)
		}
	}
	got := load(t, s, "paused")
	if won != 1 || got.Revision != 2 || got.Last != 3 || got.HasState {
		t.Fatalf("%d claims won; the conversation is %+v; want one claim, revision 2, 3 messages and no state", won, got.Info)
	}
}

func testState(t *testing.T, c Config) {
	s, addr := fresh(t, c)
	st := json.RawMessage(`{"version":1,"id":"pause-1"}`)
	info := appendOK(t, s, "conv", session.Batch{Messages: texts("m", 2), State: st})
	if !info.HasState {
		t.Fatalf("Info after storing a state: %+v", info)
	}
	appendOK(t, s, "conv", session.Batch{Messages: texts("n", 1)}) // leaves the state
	got := load(t, open(t, c, addr), "conv")
	if !bytes.Equal(got.State, st) || !got.HasState {
		t.Fatalf("state loaded by another store: %s (HasState %t), want %s", got.State, got.HasState, st)
	}
	st2 := json.RawMessage(`{"version":1,"id":"pause-2"}`)
	appendOK(t, s, "conv", session.Batch{State: st2})
	if got := load(t, s, "conv"); !bytes.Equal(got.State, st2) || got.Last != 3 {
		t.Fatalf("after replacing the state: %s, %+v", got.State, got.Info)
	}
	if info := appendOK(t, s, "conv", session.Batch{ClearState: true}); info.HasState {
		t.Fatalf("Info after clearing the state: %+v", info)
	}
	if got := load(t, s, "conv"); got.State != nil || got.HasState {
		t.Fatalf("state after clearing it: %s (HasState %t)", got.State, got.HasState)
	}
}

// testCompaction: a compaction changes what Load returns and keeps every
// original message in History.
func testCompaction(t *testing.T, c Config) {
	s, _ := fresh(t, c)
	orig := texts("m", 10)
	appendOK(t, s, "conv", session.Batch{Messages: orig})
	summary := []json.RawMessage{text("summary of 1-6")}
	info := appendOK(t, s, "conv", session.Batch{Compaction: &session.Compaction{Through: 6, Messages: summary}})
	if info.Through != 6 || info.Last != 10 || info.Revision != 2 {
		t.Fatalf("Info after a compaction: %+v", info)
	}
	sameMessages(t, "Load after a compaction", load(t, s, "conv").Messages, append(append([]json.RawMessage{}, summary...), orig[6:]...))
	// Messages and a compaction that replaces some of them, in one batch.
	more := texts("n", 3)
	summary2 := []json.RawMessage{text("summary of 1-11"), text("a second part")}
	info = appendOK(t, s, "conv", session.Batch{Messages: more, Compaction: &session.Compaction{Through: 11, Messages: summary2}})
	if info.Through != 11 || info.Last != 13 {
		t.Fatalf("Info after messages and a compaction: %+v", info)
	}
	sameMessages(t, "Load after a second compaction", load(t, s, "conv").Messages, append(append([]json.RawMessage{}, summary2...), more[1:]...))
	sameMessages(t, "History after compactions", messagesOf(history(t, s, "conv", 4)), append(append([]json.RawMessage{}, orig...), more...))
	// A compaction through the last message leaves its messages alone.
	appendOK(t, s, "conv", session.Batch{Compaction: &session.Compaction{Through: 13, Messages: summary}})
	sameMessages(t, "Load after compacting everything", load(t, s, "conv").Messages, summary)
	// Through 0 puts messages before the whole conversation.
	appendOK(t, s, "conv", session.Batch{Compaction: &session.Compaction{Through: 0, Messages: summary}})
	sameMessages(t, "Load after a compaction through 0", load(t, s, "conv").Messages,
		append(append([]json.RawMessage{}, summary...), append(append([]json.RawMessage{}, orig...), more...)...))
}

func testList(t *testing.T, c Config) {
	s, _ := fresh(t, c)
	ctx := context.Background()
	ids := []string{"b/2", "a/1", "b/10", "b/1", "c", "b", "a/2"}
	for _, id := range ids {
		appendOK(t, s, id, session.Batch{Messages: texts(id, 2)})
	}
	appendOK(t, s, "b/1", session.Batch{State: json.RawMessage(`{}`)})
	list := func(o session.ListOptions) []string {
		t.Helper()
		infos, err := s.List(ctx, o)
		if err != nil {
			t.Fatalf("List(%+v): %v", o, err)
		}
		out := []string{}
		for _, in := range infos {
			out = append(out, in.ID)
			if in.Last != 2 || (in.ID == "b/1") != in.HasState || (in.ID == "b/1") != (in.Revision == 2) {
				t.Fatalf("List(%+v): Info %+v", o, in)
			}
			checkTimes(t, in)
		}
		return out
	}
	for _, tc := range []struct {
		opts session.ListOptions
		want string
	}{
		{session.ListOptions{}, "a/1 a/2 b b/1 b/10 b/2 c"},
		{session.ListOptions{Limit: 3}, "a/1 a/2 b"},
		{session.ListOptions{After: "b", Limit: 3}, "b/1 b/10 b/2"},
		{session.ListOptions{After: "b/2", Limit: 3}, "c"},
		{session.ListOptions{Prefix: "b/"}, "b/1 b/10 b/2"},
		{session.ListOptions{Prefix: "b/", After: "b/1", Limit: 1}, "b/10"},
		{session.ListOptions{Prefix: "b/1"}, "b/1 b/10"},
		{session.ListOptions{Prefix: "%"}, ""},
		{session.ListOptions{Prefix: "_/"}, ""},
		{session.ListOptions{After: "c"}, ""},
	} {
		if got := strings.Join(list(tc.opts), " "); got != tc.want {
			t.Errorf("List(%+v): %q, want %q", tc.opts, got, tc.want)
		}
	}
	// The default page size.
	for i := range session.DefaultListLimit + 5 {
		appendOK(t, s, fmt.Sprintf("many/%04d", i), session.Batch{Messages: texts("m", 2)})
	}
	if got := list(session.ListOptions{Prefix: "many/"}); len(got) != session.DefaultListLimit {
		t.Fatalf("List with no limit: %d conversations, want DefaultListLimit", len(got))
	}
}

func testDelete(t *testing.T, c Config) {
	s, addr := fresh(t, c)
	ctx := context.Background()
	appendOK(t, s, "gone", session.Batch{Messages: texts("m", 5), State: json.RawMessage(`{}`),
		Compaction: &session.Compaction{Through: 2, Messages: texts("s", 1)}})
	appendOK(t, s, "kept", session.Batch{Messages: texts("k", 2)})
	if err := open(t, c, addr).Delete(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx, "gone"); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("Load after Delete: %v, want ErrNotFound", err)
	}
	if _, err := s.History(ctx, "gone", 0, 0); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("History after Delete: %v, want ErrNotFound", err)
	}
	if l, err := s.List(ctx, session.ListOptions{}); err != nil || len(l) != 1 || l[0].ID != "kept" {
		t.Fatalf("List after Delete: %+v, %v", l, err)
	}
	// A new conversation under the same ID starts again.
	info := appendOK(t, s, "gone", session.Batch{Messages: texts("new", 1)})
	got := load(t, s, "gone")
	if info.Revision != 1 || info.Last != 1 || info.Through != 0 || info.HasState || got.State != nil {
		t.Fatalf("a conversation created again after Delete: %+v", got.Info)
	}
	sameMessages(t, "Load of a conversation created again", got.Messages, texts("new", 1))
	sameMessages(t, "Load of the other conversation", load(t, s, "kept").Messages, texts("k", 2))
}

package session

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// Memory is a Store in this process's memory: nothing survives the
// process, and other processes do not see it. For tests, and for hosts
// whose conversations live as long as they do. Its zero value is an empty
// store, safe for concurrent use.
type Memory struct {
	mu    sync.Mutex
	convs map[string]*memConv
}

type memConv struct {
	info       Info
	messages   []json.RawMessage
	compaction []json.RawMessage
	state      json.RawMessage
}

var _ Store = (*Memory)(nil)

// Append implements Store. It keeps copies of what b holds.
func (m *Memory) Append(ctx context.Context, id string, b Batch) (Info, error) {
	if err := begin(ctx, id); err != nil {
		return Info{}, err
	}
	if err := b.Check(); err != nil {
		return Info{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.convs[id]
	var rev, last int64
	if c != nil {
		rev, last = c.info.Revision, c.info.Last
	}
	if err := b.Precondition(rev, last); err != nil {
		return Info{}, err
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	if c == nil {
		c = &memConv{info: Info{ID: id, Created: now}}
		if m.convs == nil {
			m.convs = make(map[string]*memConv)
		}
		m.convs[id] = c
	}
	c.messages = append(c.messages, clone(b.Messages)...)
	c.info.Last += int64(len(b.Messages))
	if b.Compaction != nil {
		c.compaction = clone(b.Compaction.Messages)
		c.info.Through = b.Compaction.Through
	}
	switch {
	case b.State != nil:
		c.state = slices.Clone(b.State)
	case b.ClearState:
		c.state = nil
	}
	c.info.HasState = c.state != nil
	c.info.Revision++
	c.info.Updated = now
	return c.info, nil
}

// Load implements Store. The Session shares nothing with the store.
func (m *Memory) Load(ctx context.Context, id string) (*Session, error) {
	if err := begin(ctx, id); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.convs[id]
	if c == nil {
		return nil, notFound(id)
	}
	msgs := clone(c.compaction)
	msgs = append(msgs, clone(c.messages[c.info.Through:])...)
	return &Session{Info: c.info, Messages: msgs, State: slices.Clone(c.state)}, nil
}

// History implements Store.
func (m *Memory) History(ctx context.Context, id string, after int64, limit int) ([]Entry, error) {
	if err := begin(ctx, id); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = DefaultHistoryLimit
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.convs[id]
	if c == nil {
		return nil, notFound(id)
	}
	after = max(after, 0)
	out := []Entry{}
	for seq := after + 1; seq <= c.info.Last && len(out) < limit; seq++ {
		out = append(out, Entry{Seq: seq, Message: slices.Clone(c.messages[seq-1])})
	}
	return out, nil
}

// List implements Store.
func (m *Memory) List(ctx context.Context, opts ListOptions) ([]Info, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	limit := opts.Limit
	if limit <= 0 {
		limit = DefaultListLimit
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []Info{}
	for id, c := range m.convs {
		if strings.HasPrefix(id, opts.Prefix) && id > opts.After {
			out = append(out, c.info)
		}
	}
	slices.SortFunc(out, func(a, b Info) int { return strings.Compare(a.ID, b.ID) })
	return out[:min(len(out), limit)], nil
}

// Delete implements Store.
func (m *Memory) Delete(ctx context.Context, id string) error {
	if err := begin(ctx, id); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.convs, id)
	return nil
}

// begin returns the error of a call on id that must not start: an ended
// ctx or an invalid id.
func begin(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return CheckID(id)
}

func notFound(id string) error {
	return fmt.Errorf("%w: %q", ErrNotFound, id)
}

func clone(vs []json.RawMessage) []json.RawMessage {
	out := make([]json.RawMessage, len(vs))
	for i, v := range vs {
		out[i] = slices.Clone(v)
	}
	return out
}

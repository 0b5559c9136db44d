package agent

import (
	"context"
	"sync"
)

// Inbox carries into a run what the host receives while it goes on,
// such as what an MCP App's view sends (package mcp/apps): a ui/message
// is a message the user wrote through the view, a ui/update-model-context
// the view's latest context for the model. Attach it to a run's context
// with WithInbox; before each model call the run takes what was posted
// and adds it to the conversation, in the order posted, followed by the
// latest context of each key. What arrives once the run has ended stays
// in the Inbox: take it (Take) and start the next run with it.
//
// A message from a view is text a server wrote: set its Server (and
// Egress) to that server, as for its prompts and resources, so that a
// local-only server's text never reaches a model off this machine.
//
// The zero Inbox is ready to use; it is safe for concurrent use.
type Inbox struct {
	mu      sync.Mutex
	posted  []Message
	keys    []string
	context map[string]Message
}

type inboxKey struct{}

// WithInbox returns a context that makes the runs started with it take
// the messages posted to in.
func WithInbox(ctx context.Context, in *Inbox) context.Context {
	return context.WithValue(ctx, inboxKey{}, in)
}

func inboxOf(ctx context.Context) *Inbox {
	in, _ := ctx.Value(inboxKey{}).(*Inbox)
	return in
}

// Post adds m to the conversation at the next model call: a ui/message
// (Role RoleUser), which should start a turn when no run is going on.
func (in *Inbox) Post(m Message) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.posted = append(in.posted, m)
}

// SetContext replaces the context kept under key (a view's id), which the
// next model call adds once, after the posted messages: only the latest
// context of a key before that call counts. A message with no text
// removes it.
func (in *Inbox) SetContext(key string, m Message) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.context == nil {
		in.context = map[string]Message{}
	}
	_, had := in.context[key]
	switch {
	case m.Text() == "":
		delete(in.context, key)
		for i, k := range in.keys {
			if k == key {
				in.keys = append(in.keys[:i], in.keys[i+1:]...)
				break
			}
		}
	case had:
		in.context[key] = m
	default:
		in.context[key] = m
		in.keys = append(in.keys, key)
	}
}

// Take returns what was posted and the latest contexts, and empties the
// Inbox.
func (in *Inbox) Take() []Message {
	in.mu.Lock()
	defer in.mu.Unlock()
	out := in.posted
	for _, k := range in.keys {
		out = append(out, in.context[k])
	}
	in.posted, in.keys, in.context = nil, nil, nil
	return out
}

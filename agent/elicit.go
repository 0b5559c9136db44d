package agent

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"

	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// Elicitor answers the elicitation requests of MCP servers (a server
// asking the user for input: a form, or consent to open a URL) through the
// host's UI. Set its Elicit method as the client's handler, in
// toolset.Options.Client.Elicit (with Client.ElicitURL for URL mode),
// so that each request names its server.
//
// A host that can ask at once (a terminal) sets Ask, for instance to a
// permission.Terminal's Elicit. A host whose user answers later (a web
// page, a chat) leaves Ask nil and sets OnPending: each request is then
// kept pending under an id until the host calls Answer, or until the
// request is withdrawn (the call that brought it ended, or the server
// gave up), which Answer then reports with ErrNotPending. The server waits
// meanwhile, within its own timeout and the call's.
//
// Either way the SDK never opens nor fetches a URL: the host shows it and
// the user opens it; an accepted URL request means consent only. An
// Elicitor with neither Ask nor OnPending cancels every request. It is
// safe for concurrent use.
type Elicitor struct {
	// Ask asks the user and returns the answer, honouring ctx.
	Ask func(ctx context.Context, e permission.Elicitation) (permission.ElicitAnswer, error)
	// OnPending is told of each request to answer later with Answer, when
	// Ask is nil. It must return quickly: the reply is the host's job.
	OnPending func(PendingElicitation)

	mu      sync.Mutex
	seq     int
	pending map[string]*pendingElicitation
}

// PendingElicitation is a request waiting for the host's Answer.
type PendingElicitation struct {
	// ID names the request for Answer.
	ID string
	// Elicitation is what the server asks, for the host to show.
	Elicitation permission.Elicitation
}

type pendingElicitation struct {
	seq    int
	req    PendingElicitation
	answer chan permission.ElicitAnswer // capacity 1
}

// ErrNotPending is Answer's error for an id that is not pending: never
// given, answered already, or withdrawn.
var ErrNotPending = errors.New("agent: no such elicitation pending")

// Elicit answers one request; it is an mcp.Options.Elicit.
func (e *Elicitor) Elicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	q := permission.Elicitation{Server: req.Server, Mode: req.Mode, Message: req.Message, Schema: req.RequestedSchema, URL: req.URL}
	var a permission.ElicitAnswer
	var err error
	switch {
	case e.Ask != nil:
		a, err = e.Ask(ctx, q)
	case e.OnPending != nil:
		a, err = e.wait(ctx, q)
	default:
		a = permission.ElicitAnswer{Action: "cancel"}
	}
	if err != nil {
		return nil, err
	}
	return &mcp.ElicitResult{Action: a.Action, Content: a.Content}, nil
}

// wait keeps q pending until Answer or ctx's end.
func (e *Elicitor) wait(ctx context.Context, q permission.Elicitation) (permission.ElicitAnswer, error) {
	e.mu.Lock()
	e.seq++
	p := &pendingElicitation{seq: e.seq, req: PendingElicitation{ID: "elicit-" + strconv.Itoa(e.seq), Elicitation: q}, answer: make(chan permission.ElicitAnswer, 1)}
	if e.pending == nil {
		e.pending = map[string]*pendingElicitation{}
	}
	e.pending[p.req.ID] = p
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		delete(e.pending, p.req.ID)
		e.mu.Unlock()
	}()
	e.OnPending(p.req)
	select {
	case a := <-p.answer:
		return a, nil
	case <-ctx.Done():
		return permission.ElicitAnswer{}, ctx.Err()
	}
}

// Answer gives the user's answer to the pending request id.
func (e *Elicitor) Answer(id string, a permission.ElicitAnswer) error {
	e.mu.Lock()
	p := e.pending[id]
	delete(e.pending, id)
	e.mu.Unlock()
	if p == nil {
		return ErrNotPending
	}
	p.answer <- a
	return nil
}

// Pending lists the requests waiting for an Answer, oldest first.
func (e *Elicitor) Pending() []PendingElicitation {
	e.mu.Lock()
	ps := make([]*pendingElicitation, 0, len(e.pending))
	for _, p := range e.pending {
		ps = append(ps, p)
	}
	e.mu.Unlock()
	slices.SortFunc(ps, func(a, b *pendingElicitation) int { return a.seq - b.seq })
	out := make([]PendingElicitation, len(ps))
	for i, p := range ps {
		out[i] = p.req
	}
	return out
}

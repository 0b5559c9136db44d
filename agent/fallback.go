package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// DefaultFallbackCooldown is how long a [Fallback] passes over a model
// after it failed: long enough not to pay a dead endpoint's timeout on
// every turn, short enough that a restarted server is soon used again.
const DefaultFallbackCooldown = time.Minute

// Fallback is a [Model] that asks its Models in order, moving to the next
// when one fails in a way another may not: by default unreachable,
// overloaded, rate limited or a server failure (see [Transient]), never a
// refusal, a bad request or a request longer than the context, which are
// returned as they are. A model that failed so is passed over for
// Cooldown, then tried again in its place; while every model is cooling
// down they are all tried, in order, rather than none.
//
// A model that delivered part of its answer to onDelta before failing is
// not followed by another (the host would see two answers joined): its
// error is returned. The Reply names the model that answered
// (Reply.Model, or its ModelInfo name), which the agent reports in
// TurnFinished.Model and the trace hooks as gen_ai.response.model.
//
// Its fields must be set before its first use and not changed after; a
// Fallback is then safe for concurrent use. It must not be copied after
// its first use.
type Fallback struct {
	// Models are the models, the preferred first. None, or a nil one,
	// makes every call fail.
	Models []Model
	// Cooldown is how long a model that failed is passed over; zero means
	// DefaultFallbackCooldown, negative never passes over.
	Cooldown time.Duration
	// When reports whether err, a model's failure, moves on to the next
	// model; nil means [Transient].
	When func(err error) bool
	// Now is the clock of the cool-downs; nil means time.Now.
	Now func() time.Time
	// Logger receives a record of each move to the next model; nil means
	// none.
	Logger *slog.Logger

	mu    sync.Mutex
	until map[int]time.Time // a model's index -> end of its cool-down
}

// ErrNoModel is the error of a [Fallback] with no Models.
var ErrNoModel = errors.New("agent: no model to ask")

// Transient reports whether err is a model failure that may pass, or that
// another model may not have: ErrUnreachable, ErrOverloaded,
// ErrRateLimited or ErrServer. It is what [Fallback] and [Retry] act on
// by default.
func Transient(err error) bool {
	return errors.Is(err, ErrUnreachable) || errors.Is(err, ErrOverloaded) ||
		errors.Is(err, ErrRateLimited) || errors.Is(err, ErrServer)
}

// Chat implements [Model]: it asks the models in order, as the type's doc
// says, and returns the first reply, or the last model's error joined
// with the others'.
func (f *Fallback) Chat(ctx context.Context, req *ChatRequest, onDelta func(Delta)) (*Reply, error) {
	if len(f.Models) == 0 {
		return nil, ErrNoModel
	}
	for i, m := range f.Models {
		if m == nil {
			return nil, fmt.Errorf("agent: Fallback.Models[%d] is nil", i)
		}
	}
	var errs []error
	for _, i := range f.order() {
		m := f.Models[i]
		delivered := false
		fwd := onDelta
		if onDelta != nil {
			fwd = func(d Delta) { delivered = true; onDelta(d) }
		}
		reply, err := m.Chat(ctx, req, fwd)
		if err == nil {
			f.recovered(i)
			if reply != nil && reply.Model == "" {
				named := *reply
				named.Model = nameOf(m)
				reply = &named
			}
			return reply, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil || delivered || !f.moves(err) {
			break
		}
		f.failed(i)
		if f.Logger != nil {
			f.Logger.LogAttrs(ctx, slog.LevelWarn, "agent: model failed, asking the next",
				slog.String("model", nameOf(m)), slog.String("error", err.Error()))
		}
	}
	if len(errs) == 1 {
		return nil, errs[0]
	}
	return nil, fmt.Errorf("agent: every model failed: %w", errors.Join(errs...))
}

func (f *Fallback) moves(err error) bool {
	if f.When != nil {
		return f.When(err)
	}
	return Transient(err)
}

func (f *Fallback) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

// order lists the models to ask: those not cooling down, in order, then
// those cooling down, in order.
func (f *Fallback) order() []int {
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	ready := make([]int, 0, len(f.Models))
	var cooling []int
	for i := range f.Models {
		if until, ok := f.until[i]; ok && now.Before(until) {
			cooling = append(cooling, i)
			continue
		}
		ready = append(ready, i)
	}
	return append(ready, cooling...)
}

// failed starts model i's cool-down.
func (f *Fallback) failed(i int) {
	d := f.Cooldown
	switch {
	case d < 0:
		return
	case d == 0:
		d = DefaultFallbackCooldown
	}
	until := f.now().Add(d)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.until == nil {
		f.until = map[int]time.Time{}
	}
	f.until[i] = until
}

// recovered ends model i's cool-down, if any.
func (f *Fallback) recovered(i int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.until, i)
}

// ModelInfo describes the first model, the one a Fallback asks first when
// all is well; the reply names the model that answered. It implements
// [DescribedModel].
func (f *Fallback) ModelInfo() ModelInfo {
	if len(f.Models) == 0 {
		return ModelInfo{}
	}
	return modelInfo(f.Models[0])
}

// Capabilities claims what every model claims, since any may answer: a
// Fallback is Local only if all its models are, and its ContextWindow is
// the smallest (0 if one is unknown). It implements [CapableModel].
func (f *Fallback) Capabilities() Capabilities {
	if len(f.Models) == 0 {
		return Capabilities{}
	}
	c := CapabilitiesOf(f.Models[0])
	for _, m := range f.Models[1:] {
		o := CapabilitiesOf(m)
		c.Local = c.Local && o.Local
		c.Streaming = c.Streaming && o.Streaming
		c.Schema = c.Schema && o.Schema
		c.NamedToolChoice = c.NamedToolChoice && o.NamedToolChoice
		c.ParallelToolCalls = c.ParallelToolCalls && o.ParallelToolCalls
		c.Reasoning = c.Reasoning && o.Reasoning
		c.Caching = c.Caching && o.Caching
		c.ContextWindow = min(c.ContextWindow, o.ContextWindow)
	}
	return c
}

// nameOf names m for a reply and the logs: its ModelInfo name, else its
// Go type.
func nameOf(m Model) string {
	if name := modelInfo(m).Name; name != "" {
		return name
	}
	return fmt.Sprintf("%T", m)
}

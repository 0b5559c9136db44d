package agent

import (
	"context"
	"sync"
	"time"
)

// Runtime is where a run does what its own logic does not decide: run
// the tool calls of a turn at once, read the clock, draw the random IDs
// of a pause (State.ID, PendingCall.ID). A nil Agent.Runtime is the
// process itself: goroutines, time.Now and crypto/rand.
//
// A durable-execution engine gives its own: its workflow code, which
// replays the run from a history, must start no goroutine and read
// neither the clock nor a random source outside the engine's APIs. With
// such a Runtime, and a Model, ToolSource and Policy that do their I/O
// through the engine (each model call and each tool call a step the
// engine records), a run is deterministic: the same history makes the
// same decisions. agent/temporal is one.
//
// The methods are called from the run's goroutine, or, for Now, from the
// functions Parallel runs.
type Runtime interface {
	// Parallel calls each of fns, at most limit of them at once, and
	// returns once every one has returned. Each fn is given ctx, or a
	// context derived from it that the Runtime's own calls need (such as
	// one carrying the engine's coroutine); it honours that context and
	// never panics.
	Parallel(ctx context.Context, limit int, fns []func(context.Context))
	// Now returns the current time; only durations (ToolFinished.Duration)
	// are derived from it.
	Now() time.Time
	// NewID returns a new identifier, unique among the run's: 128 random
	// bits in hex.
	NewID() string
}

// processRuntime is the Runtime of an Agent whose Runtime is nil.
type processRuntime struct{}

func (processRuntime) Parallel(ctx context.Context, limit int, fns []func(context.Context)) {
	if len(fns) == 1 { // the common case needs no goroutine
		fns[0](ctx)
		return
	}
	slots := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for _, fn := range fns {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			fn(ctx)
		}()
	}
	wg.Wait()
}

func (processRuntime) Now() time.Time { return time.Now() }

func (processRuntime) NewID() string { return randomID() }

// runtime returns the run's Runtime.
func (r *run) runtime() Runtime {
	if r.a.Runtime != nil {
		return r.a.Runtime
	}
	return processRuntime{}
}

package sse

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// watchdog ends a stream when the caller's context is done or when a read
// blocks for longer than the idle timeout. It records why, and closes the
// stream if it can, since that is the only way to unblock a pending Read.
//
// Its callbacks run in goroutines started by context.AfterFunc and
// time.AfterFunc; stop waits for any that started, so none outlives the
// iteration.
type watchdog struct {
	closer io.Closer // nil if the stream cannot be closed
	idle   time.Duration

	ctx     context.Context
	done    <-chan struct{} // ctx.Done(), nil if ctx is never done
	stopCtx func() bool
	timer   *time.Timer // armed only while a Read is pending
	running sync.WaitGroup

	fired atomic.Bool // cause is set
	mu    sync.Mutex
	cause error
}

// start watches ctx until stop is called.
func (w *watchdog) start(ctx context.Context) {
	w.ctx, w.done = ctx, ctx.Done()
	if w.done == nil {
		return
	}
	w.running.Add(1)
	w.stopCtx = context.AfterFunc(ctx, func() {
		defer w.running.Done()
		w.fire(w.ctxErr())
	})
}

func (w *watchdog) ctxErr() error {
	return fmt.Errorf("sse: %w", w.ctx.Err())
}

// beforeRead arms the idle timer, if there is one.
func (w *watchdog) beforeRead() {
	if w.idle <= 0 {
		return
	}
	w.running.Add(1)
	if w.timer == nil {
		w.timer = time.AfterFunc(w.idle, func() {
			defer w.running.Done()
			w.fire(fmt.Errorf("%w: no data for %v", ErrIdleTimeout, w.idle))
		})
		return
	}
	w.timer.Reset(w.idle)
}

// afterRead disarms the idle timer, so that time the caller spends between
// reads does not count.
func (w *watchdog) afterRead() {
	// When Stop fails, the timer has fired and its callback accounts for
	// itself in w.running.
	if w.timer != nil && w.timer.Stop() {
		w.running.Done()
	}
}

func (w *watchdog) fire(cause error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cause != nil {
		return
	}
	w.cause = cause
	w.fired.Store(true)
	if w.closer != nil {
		_ = w.closer.Close() // only to unblock a pending Read; the caller still owns it
	}
}

// err reports why the stream must end, or nil if it may go on. It is called
// for every event, so its common case is kept small enough to inline.
func (w *watchdog) err() error {
	if !w.fired.Load() && w.done == nil {
		return nil
	}
	return w.slowErr()
}

func (w *watchdog) slowErr() error {
	if w.fired.Load() {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.cause
	}
	select {
	case <-w.done:
		// Done, but the AfterFunc callback has not run yet.
		return w.ctxErr()
	default:
		return nil
	}
}

// stop stops watching and waits for callbacks that already started.
func (w *watchdog) stop() {
	if w.stopCtx != nil && w.stopCtx() {
		w.running.Done()
	}
	// Normally disarmed already; not if a Read panicked.
	w.afterRead()
	w.running.Wait()
}

package interop

import (
	"context"
	"errors"
	"sync"
)

// feed collects what a client or a process reports (progress
// notifications, output lines) and lets a test wait for an item. It keeps
// the last max items (all when max is 0). It is safe for concurrent use.
type feed[T any] struct {
	mu      sync.Mutex
	max     int
	items   []T
	changed chan struct{} // closed and replaced on every add
}

func newFeed[T any](max int) *feed[T] { return &feed[T]{max: max, changed: make(chan struct{})} }

func (f *feed[T]) add(items ...T) {
	if len(items) == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.items = append(f.items, items...)
	if f.max > 0 && len(f.items) > f.max {
		f.items = append([]T(nil), f.items[len(f.items)-f.max:]...)
	}
	close(f.changed)
	f.changed = make(chan struct{})
}

// take returns the items so far and forgets them.
func (f *feed[T]) take() []T {
	f.mu.Lock()
	defer f.mu.Unlock()
	items := f.items
	f.items = nil
	return items
}

// snapshot returns the items so far.
func (f *feed[T]) snapshot() []T {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]T(nil), f.items...)
}

// forget drops the items that match, so that waitFor can wait for the
// next one.
func (f *feed[T]) forget(match func(T) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	kept := f.items[:0]
	for _, it := range f.items {
		if !match(it) {
			kept = append(kept, it)
		}
	}
	f.items = kept
}

// errStopped is waitFor's error when stop closed first.
var errStopped = errors.New("stopped before the item arrived")

// waitFor returns the first item that matches, waiting until ctx is done or
// stop (which may be nil) is closed.
func (f *feed[T]) waitFor(ctx context.Context, stop <-chan struct{}, match func(T) bool) (T, error) {
	for {
		it, changed := f.find(match)
		if changed == nil {
			return it, nil
		}
		select {
		case <-changed:
		case <-stop:
			// The item may have been added just before stop closed.
			if it, changed := f.find(match); changed == nil {
				return it, nil
			}
			return it, errStopped
		case <-ctx.Done():
			return it, ctx.Err()
		}
	}
}

// find returns the first item that matches or, when none does, a channel
// closed on the next add.
func (f *feed[T]) find(match func(T) bool) (T, <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, it := range f.items {
		if match(it) {
			return it, nil
		}
	}
	var zero T
	return zero, f.changed
}

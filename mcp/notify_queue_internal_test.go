package mcp

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"testing"
	"time"
)

// A connection's notification queue starts its delivery goroutine with
// the first notification, not before: an idle server that sends none
// costs no goroutine. Once started, it delivers, and close ends it; a
// queue that never started closes at once, without waiting.
func TestNotifyQueueStartsOnFirstNotification(t *testing.T) {
	changed := make(chan struct{}, 1)
	c := &Client{log: slog.New(slog.NewTextHandler(io.Discard, nil)), opts: Options{OnToolsChanged: func() { changed <- struct{}{} }}}

	g0 := runtime.NumGoroutine()
	idle := newNotifyQueue(c)
	if g := runtime.NumGoroutine(); g > g0 {
		t.Fatalf("%d goroutines after newNotifyQueue, %d before: one started with no notification", g, g0)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a close that waited would see it and log
	idle.close(ctx)
	idle.push("notifications/tools/list_changed", nil)
	select {
	case <-changed:
		t.Fatal("delivered after close")
	default:
	}

	q := newNotifyQueue(c)
	q.push("notifications/tools/list_changed", nil)
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("the first notification was not delivered")
	}
	q.close(context.Background())
	select {
	case <-q.done:
	default:
		t.Fatal("the delivery goroutine still runs after close")
	}
}

package mcp

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
)

// notifyQueueLen bounds the notifications waiting for the host's
// callbacks on one connection.
const notifyQueueLen = 256

// notifyQueue hands a connection's notifications to Client.notification,
// and so to the host's callbacks (OnProgress, OnLog, OnToolsChanged), on a
// goroutine of its own, one at a time and in arrival order. The goroutine
// that reads the server's messages only pushes, so it never runs host
// code: a callback may call the Client back (OnToolsChanged calling
// ListTools) while responses keep flowing.
//
// It holds notifyQueueLen notifications. A host that falls further behind
// loses the others, progress included (counted, and logged at Warn when
// dropping starts and with the count when it stops), except
// tools/list_changed, which is kept as a flag: one re-fetch covers any
// number of changes. Progress is matched to its call when it arrives, so
// it is delivered even if the call returns before the callback runs.
//
// push is safe for concurrent use, by several readers at once.
type notifyQueue struct {
	c            *Client
	ch           chan notice
	toolsChanged atomic.Bool   // a list_changed that did not fit
	wake         chan struct{} // capacity 1: toolsChanged was set
	dropped      atomic.Int64  // dropped since the last push that fit
	stop         chan struct{}
	stopOnce     sync.Once
	done         chan struct{}
}

// notice is one notification on its way to the host.
type notice struct {
	method string
	params json.RawMessage
	// progress is a progress notification read when it arrived, while
	// its call was still in flight.
	progress *Progress
}

// newNotifyQueue starts the delivery goroutine, which runs until close.
func newNotifyQueue(c *Client) *notifyQueue {
	q := &notifyQueue{c: c, ch: make(chan notice, notifyQueueLen), wake: make(chan struct{}, 1),
		stop: make(chan struct{}), done: make(chan struct{})}
	go q.run()
	return q
}

// push queues a notification for the host; it never blocks. Task status
// notifications are not queued: polling follows tasks, so a server that
// floods them crowds out no other notification.
func (q *notifyQueue) push(method string, params json.RawMessage) {
	if method == "notifications/tasks/status" || method == "notifications/tasks" {
		return
	}
	n := notice{method: method, params: params}
	if method == "notifications/progress" {
		// Read now: by delivery time the call may have returned.
		p, ok := q.c.progressOf(params)
		if !ok {
			return
		}
		n.progress = &p
	}
	select {
	case <-q.stop:
		return
	case q.ch <- n:
		if d := q.dropped.Swap(0); d > 0 {
			q.c.log.Warn("mcp: the host's callbacks caught up", "dropped", d)
		}
		return
	default:
	}
	if method == "notifications/tools/list_changed" {
		q.toolsChanged.Store(true)
		select {
		case q.wake <- struct{}{}:
		default:
		}
		return
	}
	if q.dropped.Add(1) == 1 {
		q.c.log.Warn("mcp: the host's callbacks are too slow; notifications dropped", "method", method)
	}
}

func (q *notifyQueue) run() {
	defer close(q.done)
	for {
		select {
		case <-q.stop: // first: once stopped, nothing more is delivered
			return
		default:
		}
		select {
		case <-q.stop:
			return
		case n := <-q.ch:
			if n.progress != nil {
				q.c.opts.OnProgress(*n.progress)
			} else {
				q.c.notification(n.method, n.params)
			}
		case <-q.wake:
		}
		if q.toolsChanged.Swap(false) {
			q.c.notification("notifications/tools/list_changed", nil)
		}
	}
}

// close stops the delivery: what is still queued is dropped. It waits for
// a callback in progress until ctx is done, then abandons it.
func (q *notifyQueue) close(ctx context.Context) {
	q.stopOnce.Do(func() { close(q.stop) })
	select {
	case <-q.done:
	case <-ctx.Done():
		q.c.log.Warn("mcp: a notification callback did not return; abandoned")
	}
}

package mcp

import (
	"context"
	"encoding/json"
	"sync"
)

// notifyQueueLen bounds the notifications waiting for the host's
// callbacks on one connection.
const notifyQueueLen = 256

// notifyQueue hands a connection's notifications to Client.notification,
// and so to the host's callbacks (OnProgress, OnLog, OnToolsChanged), on a
// goroutine of its own, one at a time and in arrival order. The goroutine
// that reads the server's messages only pushes, so it never runs host
// code: a callback may call the Client back (OnToolsChanged calling
// ListTools) while responses keep flowing. The delivery goroutine starts
// with the first notification, and the queue grows as notifications wait,
// so that a connection that gets none (most idle servers) pays for neither.
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
	c    *Client
	wake chan struct{} // capacity 1: something was queued or flagged
	stop chan struct{}
	done chan struct{} // closed when the delivery goroutine ends

	mu           sync.Mutex
	queue        []notice // waiting, in arrival order
	toolsChanged bool     // a list_changed that did not fit
	dropped      int64    // dropped since the last push that fit
	started      bool     // the delivery goroutine was started
	stopped      bool
}

// notice is one notification on its way to the host.
type notice struct {
	method string
	params json.RawMessage
	// progress is a progress notification read when it arrived, while
	// its call was still in flight.
	progress *Progress
}

// newNotifyQueue returns the queue of a connection; its delivery goroutine
// runs from the first notification until close.
func newNotifyQueue(c *Client) *notifyQueue {
	return &notifyQueue{c: c, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
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
	q.mu.Lock()
	if q.stopped {
		q.mu.Unlock()
		return
	}
	var caughtUp, dropping int64
	switch {
	case len(q.queue) < notifyQueueLen:
		q.queue = append(q.queue, n)
		caughtUp, q.dropped = q.dropped, 0
	case method == "notifications/tools/list_changed":
		q.toolsChanged = true
	default:
		q.dropped++
		dropping = q.dropped
	}
	if !q.started {
		q.started = true
		go q.run()
	}
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default: // a wake is already pending
	}
	switch {
	case caughtUp > 0:
		q.c.log.Warn("mcp: the host's callbacks caught up", "dropped", caughtUp)
	case dropping == 1:
		q.c.log.Warn("mcp: the host's callbacks are too slow; notifications dropped", "method", method)
	}
}

// next takes the next notification to deliver: the first queued, else the
// flagged list change; ok is false when there is none or the queue is
// stopped.
func (q *notifyQueue) next() (n notice, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.stopped: // once stopped, nothing more is delivered
		return notice{}, false
	case len(q.queue) > 0:
		n = q.queue[0]
		q.queue[0] = notice{}
		q.queue = q.queue[1:]
		if len(q.queue) == 0 {
			q.queue = nil // its room goes with it
		}
		return n, true
	case q.toolsChanged:
		q.toolsChanged = false
		return notice{method: "notifications/tools/list_changed"}, true
	}
	return notice{}, false
}

func (q *notifyQueue) run() {
	defer close(q.done)
	for {
		select {
		case <-q.stop:
			return
		case <-q.wake:
		}
		for n, ok := q.next(); ok; n, ok = q.next() {
			if n.progress != nil {
				q.c.opts.OnProgress(*n.progress)
			} else {
				q.c.notification(n.method, n.params)
			}
		}
	}
}

// close stops the delivery: what is still queued is dropped. It waits for
// a callback in progress until ctx is done, then abandons it.
func (q *notifyQueue) close(ctx context.Context) {
	q.mu.Lock()
	first, started := !q.stopped, q.started
	q.stopped, q.queue = true, nil
	q.mu.Unlock()
	if first {
		close(q.stop)
	}
	if !started {
		return // no goroutine, and none will start: push sees stopped
	}
	select {
	case <-q.done:
	case <-ctx.Done():
		q.c.log.Warn("mcp: a notification callback did not return; abandoned")
	}
}

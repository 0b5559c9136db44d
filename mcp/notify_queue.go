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
// ListTools) while responses keep flowing. The delivering goroutine runs
// only while there is something to deliver: push starts it, and it ends
// once the queue is empty, so an idle connection holds none. There is
// never more than one at a time.
//
// It holds notifyQueueLen notifications besides the one being delivered
// (a goroutine that starts takes its first itself, so the room does not
// depend on how soon it runs). A host that falls further behind
// loses the others, progress included (counted, and logged at Warn when
// dropping starts and with the count when it stops), except
// tools/list_changed, which is kept as a flag: one re-fetch covers any
// number of changes. Progress is matched to its call when it arrives, so
// it is delivered even if the call returns before the callback runs.
//
// push is safe for concurrent use, by several readers at once. The zero
// value, with c set, is ready to use.
type notifyQueue struct {
	c *Client

	mu           sync.Mutex
	items        []notice // queued from head on
	head         int
	toolsChanged bool          // a list_changed that did not fit
	dropped      int64         // dropped since the last push that fit
	running      chan struct{} // the delivering goroutine's, closed as it ends; nil when none runs
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

// keptNotices is the capacity of the queue's slice kept while it is idle;
// a larger one, grown by a burst, is let go.
const keptNotices = 16

// newNotifyQueue makes the queue of c's notifications; it starts nothing.
func newNotifyQueue(c *Client) *notifyQueue { return &notifyQueue{c: c} }

// push queues a notification for the host, starting the delivery if none
// runs; it never blocks. Task status notifications are not queued: polling
// follows tasks, so a server that floods them crowds out no other
// notification.
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
	var done chan struct{}
	switch {
	case q.running == nil:
		// Nothing queued and none delivering: a new goroutine takes n
		// itself, so the queue's room is the same whether or not it has
		// begun when the next notifications come.
		done = make(chan struct{})
		q.running = done
		caughtUp, q.dropped = q.dropped, 0
	case len(q.items)-q.head < notifyQueueLen:
		if q.head > 0 && len(q.items) == cap(q.items) {
			q.items = q.items[:copy(q.items, q.items[q.head:])]
			q.head = 0
		}
		q.items = append(q.items, n)
		caughtUp, q.dropped = q.dropped, 0
	case method == "notifications/tools/list_changed":
		q.toolsChanged = true
	default:
		q.dropped++
		dropping = q.dropped
	}
	q.mu.Unlock()
	if done != nil {
		go q.run(done, n)
	}
	if caughtUp > 0 {
		q.c.log.Warn("mcp: the host's callbacks caught up", "dropped", caughtUp)
	}
	if dropping == 1 {
		q.c.log.Warn("mcp: the host's callbacks are too slow; notifications dropped", "method", method)
	}
}

// run delivers first, then what is queued, in order, until the queue is
// empty or close stops it; then it closes done.
func (q *notifyQueue) run(done chan struct{}, first notice) {
	defer close(done)
	q.mu.Lock()
	open := !q.stopped // a close since push: nothing more is delivered
	if !open {
		q.running = nil
	}
	q.mu.Unlock()
	for n, ok := first, open; ok; n, ok = q.next() {
		if n.progress != nil {
			q.c.opts.OnProgress(*n.progress)
		} else {
			q.c.notification(n.method, n.params)
		}
	}
}

// next takes the next notification to deliver: a list_changed that did
// not fit first, then the queue in order. When there is none, or the
// queue was closed, the delivering goroutine ends: ok is false.
func (q *notifyQueue) next() (n notice, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.stopped: // once stopped, nothing more is delivered
	case q.toolsChanged:
		q.toolsChanged = false
		return notice{method: "notifications/tools/list_changed"}, true
	case q.head < len(q.items):
		n = q.items[q.head]
		q.items[q.head] = notice{}
		if q.head++; q.head == len(q.items) {
			q.items, q.head = q.items[:0], 0
		}
		return n, true
	}
	if cap(q.items) > keptNotices {
		q.items, q.head = nil, 0
	}
	q.running = nil
	return notice{}, false
}

// close stops the delivery: what is still queued is dropped. It waits for
// a callback in progress until ctx is done, then abandons it.
func (q *notifyQueue) close(ctx context.Context) {
	q.mu.Lock()
	q.stopped = true
	q.items, q.head, q.toolsChanged = nil, 0, false
	done := q.running
	q.mu.Unlock()
	if done == nil {
		return
	}
	select {
	case <-done:
	case <-ctx.Done():
		q.c.log.Warn("mcp: a notification callback did not return; abandoned")
	}
}

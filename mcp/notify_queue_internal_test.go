package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// logQueue is a queue whose notifications/message go to onLog.
func logQueue(onLog func(LogMessage)) *notifyQueue {
	return newNotifyQueue(&Client{log: slog.New(slog.NewTextHandler(io.Discard, nil)), opts: Options{OnLog: onLog}})
}

func pushLog(q *notifyQueue, i int) {
	q.push("notifications/message", json.RawMessage(`{"level":"info","data":`+strconv.Itoa(i)+`}`))
}

// queueGoroutines counts the goroutines delivering notifications, from a
// dump of every goroutine.
func queueGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return bytes.Count(buf[:n], []byte("mcp.(*notifyQueue).run("))
		}
		buf = make([]byte, 2*len(buf))
	}
}

// runningNow returns the done channel of the delivering goroutine, nil when
// none runs.
func (q *notifyQueue) runningNow() chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.running
}

// The delivering goroutine runs only while there is something to deliver:
// none before the first notification, one while a callback runs, none once
// the queue is empty; a later notification starts it again, and every
// notification arrives in order, across the restarts.
func TestNotifyQueueRunsOnlyWhileBusy(t *testing.T) {
	gate := make(chan struct{})
	entered := make(chan int, 1)
	var mu sync.Mutex
	var got []int
	q := logQueue(func(m LogMessage) {
		i, _ := strconv.Atoi(string(m.Data))
		mu.Lock()
		got = append(got, i)
		mu.Unlock()
		if i == 0 || i == 10 {
			entered <- i
			<-gate
		}
	})
	defer q.close(context.Background())
	before := queueGoroutines()
	assert.Nil(t, q.runningNow(), "nothing runs before a notification")

	for round, first := range []int{0, 10} {
		pushLog(q, first)
		require.Equal(t, first, <-entered)
		done := q.runningNow()
		require.NotNil(t, done, "round %d: delivering", round)
		assert.Equal(t, before+1, queueGoroutines(), "round %d: one delivering goroutine, whatever is queued", round)
		for i := first + 1; i < first+10; i++ {
			pushLog(q, i) // queued behind the blocked callback
		}
		assert.Equal(t, before+1, queueGoroutines(), "round %d: still one", round)
		gate <- struct{}{}
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: the delivering goroutine did not end once the queue was empty", round)
		}
		assert.Nil(t, q.runningNow(), "round %d: idle", round)
		// done is closed as run returns: its frame may linger an instant.
		assert.Eventually(t, func() bool { return queueGoroutines() == before }, 10*time.Second, time.Millisecond, "round %d: no goroutine left once idle", round)
	}
	mu.Lock()
	defer mu.Unlock()
	want := make([]int, 20)
	for i := range want {
		want[i] = i
	}
	assert.Equal(t, want, got, "in order, across the restart")
}

// A full queue drops what does not fit, except tools/list_changed, kept as
// a flag and delivered; it still has one delivering goroutine, and a
// notification after the drops is delivered once the host caught up.
func TestNotifyQueueBoundWhileIdleStarts(t *testing.T) {
	gate := make(chan struct{})
	entered := make(chan struct{}, 1)
	var mu sync.Mutex
	var logs []int
	changed := make(chan struct{}, 1)
	c := &Client{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	c.opts.OnLog = func(m LogMessage) {
		i, _ := strconv.Atoi(string(m.Data))
		if i == 0 {
			entered <- struct{}{}
			<-gate
		}
		mu.Lock()
		logs = append(logs, i)
		mu.Unlock()
	}
	c.opts.OnToolsChanged = func() { changed <- struct{}{} }
	q := newNotifyQueue(c)
	defer q.close(context.Background())
	pushLog(q, 0)
	<-entered
	for i := 1; i <= notifyQueueLen+50; i++ {
		pushLog(q, i)
	}
	q.push("notifications/tools/list_changed", nil)
	close(gate)
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("the list_changed that did not fit was lost")
	}
	require.Eventually(t, func() bool { return q.runningNow() == nil }, 10*time.Second, time.Millisecond)
	pushLog(q, 1000) // after the drops
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(logs) > 0 && logs[len(logs)-1] == 1000
	}, 10*time.Second, time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	assert.Len(t, logs, 1+notifyQueueLen+1, "the first, the queue's worth, and the one after")
	for i := 1; i <= notifyQueueLen; i++ {
		assert.Equal(t, i, logs[i], "in order")
	}
}

// Pushes and close from many goroutines at once: nothing is delivered after
// close returns, no callback runs beside another, and no goroutine is left
// (goleak in TestMain). Run with -race.
func TestNotifyQueueConcurrentPushAndClose(t *testing.T) {
	for range 50 {
		var mu sync.Mutex
		active, closed := 0, false
		q := logQueue(func(LogMessage) {
			mu.Lock()
			active++
			bad := active > 1 || closed
			mu.Unlock()
			if bad {
				t.Error("a callback ran beside another, or after close returned")
			}
			mu.Lock()
			active--
			mu.Unlock()
		})
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 50 {
					pushLog(q, g*100+i)
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			q.close(context.Background())
			mu.Lock()
			closed = true
			mu.Unlock()
		}()
		wg.Wait()
		assert.Nil(t, q.runningNow())
	}
}

//go:build unix

package mcp_test

import (
	"bytes"
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
)

// mcpGoroutines counts, in a dump of every goroutine, those whose stack is
// in each of fns (function names of package mcp) and those with any frame
// of package mcp.
func mcpGoroutines() (byFn map[string]int, all int) {
	buf := make([]byte, 1<<20)
	for n := runtime.Stack(buf, true); n == len(buf); n = runtime.Stack(buf, true) {
		buf = make([]byte, 2*len(buf))
	}
	byFn = map[string]int{}
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if !bytes.Contains(g, []byte("bots-garden/mini-me/mcp.")) {
			continue
		}
		all++
		for _, fn := range []string{"(*notifyQueue).run(", "(*proc).readStdout(", "(*proc).readStderr(", "(*proc).wait("} {
			if bytes.Contains(g, []byte("mcp."+fn)) {
				byFn[fn]++
				if bytes.Contains(g[:bytes.IndexByte(g, '\n')+1], []byte("[syscall")) {
					byFn[fn+" in a syscall"]++ // holding a thread
				}
			}
		}
	}
	return byFn, all
}

// An idle connected stdio server costs the client three goroutines, the
// readers of the server's stdout and stderr and the wait for its exit;
// none delivers notifications while there is none to deliver: the
// delivering goroutine starts for a burst and ends after it. On Linux the
// wait is parked on the process's pidfd, not in a waitid that holds a
// thread.
func TestIdleStdioGoroutines(t *testing.T) {
	bin := mcptest.BuildFinance(t)
	base, baseAll := mcpGoroutines()
	logs := make(chan struct{}, 100)
	changed := make(chan struct{}, 1)
	c, err := mcp.Connect(context.Background(), finance(bin, "-era", "modern"), &mcp.Options{
		OnLog:          func(mcp.LogMessage) { logs <- struct{}{} },
		OnToolsChanged: func() { changed <- struct{}{} },
	})
	require.NoError(t, err)
	defer c.Close()
	call(t, c, "echo", map[string]string{"text": "hi"})
	idle := func(when string) {
		t.Helper()
		want := map[string]int{"(*proc).readStdout(": 1, "(*proc).readStderr(": 1, "(*proc).wait(": 1}
		assert.Eventually(t, func() bool {
			now, all := mcpGoroutines()
			for fn, n := range want {
				if now[fn]-base[fn] != n {
					return false
				}
			}
			if runtime.GOOS == "linux" && now["(*proc).wait( in a syscall"] != base["(*proc).wait( in a syscall"] {
				return false
			}
			return now["(*notifyQueue).run("] == base["(*notifyQueue).run("] && all-baseAll == 3
		}, 10*time.Second, time.Millisecond, "%s: the three readers and waiter, nothing else, no thread held", when)
	}
	idle("connected")
	assert.Equal(t, "sent", call(t, c, "log_burst", map[string]int{"n": 20}))
	for range 20 {
		<-logs
	}
	<-changed
	idle("after a burst of notifications")
	assert.Equal(t, "sent", call(t, c, "log_burst", map[string]int{"n": 1}))
	<-logs
	<-changed
	idle("after a second burst")
}

// An idle Streamable HTTP server (2026-07-28) costs the client no goroutine
// of its own (net/http's idle connection aside), before and after
// notifications.
func TestIdleHTTPGoroutines(t *testing.T) {
	s := &mcptest.Server{Versions: []string{mcptest.Modern}, SSE: true}
	s.Tools = []mcptest.Tool{floodTool(s, 5)}
	progress := make(chan struct{}, 10)
	_, baseAll := mcpGoroutines()
	c := connect(t, mcptest.Start(t, s), &mcp.Options{OnProgress: func(mcp.Progress) { progress <- struct{}{} }})
	idle := func(when string) {
		t.Helper()
		assert.Eventually(t, func() bool { _, all := mcpGoroutines(); return all == baseAll }, 10*time.Second, time.Millisecond,
			"%s: no goroutine of package mcp", when)
	}
	idle("connected")
	_, err := c.CallTool(context.Background(), "flood", nil)
	require.NoError(t, err)
	for range 5 {
		<-progress
	}
	idle("after notifications")
}

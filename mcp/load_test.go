//go:build unix

package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

// Figures of the load test.
const (
	loadCalls   = 1000
	loadWorkers = 64
)

// TestLoad sends 1,000 calls from 64 goroutines through one Toolset over
// 10 servers (Streamable HTTP in both eras, JSON and SSE, and stdio in
// both eras), then closes it. Every call must come back exactly once with
// its own answer, which the servers' own counters confirm; afterwards the
// heap is back near its baseline and no goroutine or process is left.
// p50 and p99 of the call latency are logged.
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("load test: skipped with -short")
	}
	bin := mcptest.BuildFinance(t)

	// Eight HTTP servers count the calls each text got; two stdio ones
	// report what they received (history).
	type httpServer struct {
		srv  *mcptest.Server
		mu   sync.Mutex
		seen map[string]int
	}
	var servers []config.Server
	var https []*httpServer
	for i := range 8 {
		h := &httpServer{seen: map[string]int{}}
		h.srv = &mcptest.Server{Versions: []string{[]string{mcptest.Modern, mcptest.Legacy}[i%2]}, SSE: i%4 >= 2, Tools: []mcptest.Tool{{
			Def: mcptest.EchoTool().Def,
			Call: func(_ context.Context, args json.RawMessage, _ func(string, any)) (any, error) {
				var a struct{ Text string }
				_ = json.Unmarshal(args, &a)
				h.mu.Lock()
				h.seen[a.Text]++
				h.mu.Unlock()
				return map[string]any{"content": []any{map[string]any{"type": "text", "text": a.Text}}}, nil
			},
		}}}
		https = append(https, h)
		servers = append(servers, config.Server{Name: fmt.Sprintf("h%d", i), URL: mcptest.Start(t, h.srv)})
	}
	for i, era := range []string{"modern", "legacy"} {
		servers = append(servers, config.Server{Name: fmt.Sprintf("s%d", i), Command: bin, Args: []string{"-era", era}})
	}
	require.Len(t, servers, 10)

	runtime.GC()
	base := heapInUse()
	ts, err := toolset.Discover(context.Background(), servers, nil)
	require.NoError(t, err)
	for _, s := range ts.Servers() {
		require.True(t, s.Connected, "%s: %v", s.Name, s.Err)
	}
	var pidsOf []int
	for _, s := range servers[8:] {
		res, err := ts.Call(context.Background(), s.Name+"_pid", nil)
		require.NoError(t, err)
		var p pids
		require.NoError(t, json.Unmarshal([]byte(res.Text()), &p))
		pidsOf = append(pidsOf, p.PID)
	}

	// Call i goes to server i%10 with the text "call-i".
	var next atomic.Int32
	latencies := make([]time.Duration, loadCalls)
	answers := make([]atomic.Int32, loadCalls)
	errs := make(chan error, loadCalls)
	var inFlight, maxInFlight atomic.Int32
	var wg sync.WaitGroup
	began := time.Now()
	for range loadWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= loadCalls {
					return
				}
				want := fmt.Sprintf("call-%d", i)
				n := inFlight.Add(1)
				for m := maxInFlight.Load(); n > m && !maxInFlight.CompareAndSwap(m, n); m = maxInFlight.Load() {
				}
				start := time.Now()
				res, err := ts.Call(context.Background(), servers[i%10].Name+"_echo", map[string]string{"text": want})
				latencies[i] = time.Since(start)
				inFlight.Add(-1)
				switch {
				case err != nil:
					errs <- fmt.Errorf("%s: %w", want, err)
				case res.Text() != want:
					errs <- fmt.Errorf("%s: answered %q", want, res.Text())
				default:
					answers[i].Add(1)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(began)
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i := range answers {
		assert.EqualValues(t, 1, answers[i].Load(), "call-%d answered", i)
	}

	// The servers' own counts: each call ran once, on its server.
	for k, h := range https {
		h.mu.Lock()
		assert.Len(t, h.seen, loadCalls/10, "server h%d", k)
		for i := k; i < loadCalls; i += 10 {
			assert.Equal(t, 1, h.seen[fmt.Sprintf("call-%d", i)], "call-%d on h%d", i, k)
		}
		h.mu.Unlock()
	}
	for k, s := range servers[8:] {
		res, err := ts.Call(context.Background(), s.Name+"_history", nil)
		require.NoError(t, err)
		var h serverHistory
		require.NoError(t, json.Unmarshal([]byte(res.Text()), &h))
		// pid, the echoes, and this history.
		assert.Equal(t, 1+loadCalls/10+1, count(h.Methods, "tools/call"), "calls received by s%d", k)
	}

	require.NoError(t, ts.Close())
	for _, pid := range pidsOf {
		assert.True(t, reaped(pid), "process %d left", pid)
	}
	for _, h := range https {
		h.srv.Close() // its idle connections too, before the leak check
	}
	goleak.VerifyNone(t)
	runtime.GC()
	after := heapInUse()

	slices.Sort(latencies)
	p := func(q float64) time.Duration { return latencies[int(q*float64(len(latencies)-1))] }
	t.Logf("load: %d calls, %d goroutines (at most %d in flight), %d servers (4 HTTP modern, 4 HTTP legacy, half SSE; 2 stdio): %v, %.0f calls/s",
		loadCalls, loadWorkers, maxInFlight.Load(), len(servers), elapsed.Round(time.Millisecond), float64(loadCalls)/elapsed.Seconds())
	t.Logf("load: latency p50 %v, p99 %v, max %v", p(0.50).Round(10*time.Microsecond), p(0.99).Round(10*time.Microsecond), latencies[len(latencies)-1].Round(10*time.Microsecond))
	t.Logf("load: heap in use %.1f MiB before Discover, %.1f MiB after Close", float64(base)/(1<<20), float64(after)/(1<<20))
	assert.Less(t, int64(after)-int64(base), int64(4<<20), "heap back near its baseline")
}

// heapInUse reads the bytes of heap objects, live or not yet swept
// (runtime/metrics); after runtime.GC, the live heap.
func heapInUse() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

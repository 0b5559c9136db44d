package main

import (
	"runtime"
	"runtime/metrics"
)

// markedHeap forces a complete collection and returns the bytes of the
// heap objects it found live.
func markedHeap() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		// Go 1.21 and later have it; a figure of 0 would mislead.
		panic("runtime/metrics: no /gc/heap/live:bytes in this Go")
	}
	return s[0].Value.Uint64()
}

// peakHeap runs calls calls of call and returns the highest live heap seen
// while they ran, less the live heap before the first: a goroutine forces
// collections back to back and reads the heap each one found live, and
// call samples once more (held) while it still holds its result. A peak
// that lasts less than one collection can fall between two samples, so
// this is a lower bound of the true peak.
func peakHeap(calls int, call func(held func()) error) (float64, error) {
	markedHeap() // two collections empty the sync.Pools of earlier phases
	base := markedHeap()
	var hi uint64
	held := func() { hi = max(hi, markedHeap()) }
	for range calls {
		done, peak := make(chan struct{}), make(chan uint64)
		go func() {
			var h uint64
			for {
				h = max(h, markedHeap())
				select {
				case <-done:
					peak <- h
					return
				default:
				}
			}
		}()
		err := call(held)
		close(done)
		hi = max(hi, <-peak)
		if err != nil {
			return 0, err
		}
	}
	return float64(hi) - float64(base), nil
}

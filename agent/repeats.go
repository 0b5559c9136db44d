package agent

import (
	"maps"
	"slices"
	"sort"
	"strings"
)

// repeats is a run's repeat and cycle detection: what the model has the
// result of, turn by turn, and what it has been told not to repeat. It
// is saved in a State as Repeats and restored from it, so that a resumed
// run stops a repeated call as the run would have. Keys are callKey's.
type repeats struct {
	// prev holds the calls of the previous turn that returned a result,
	// told the calls the model was told not to repeat. history holds, for
	// each turn, the sorted keys of the calls that returned a result;
	// toldCycle says the model was told it goes round in a loop.
	prev, told map[string]bool
	history    []string
	toldCycle  bool
}

// maxCycle is the longest cycle of turns repeats looks for: the model
// alternating between up to maxCycle turns of calls.
const maxCycle = 3

func newRepeats(saved Repeats) repeats {
	rp := repeats{prev: map[string]bool{}, told: map[string]bool{},
		history: slices.Clone(saved.History), toldCycle: saved.ToldCycle}
	for _, k := range saved.Previous {
		rp.prev[k] = true
	}
	for _, k := range saved.Told {
		rp.told[k] = true
	}
	return rp
}

// saved is rp as a State keeps it.
func (rp *repeats) saved() Repeats {
	return Repeats{Previous: slices.Sorted(maps.Keys(rp.prev)), Told: slices.Sorted(maps.Keys(rp.told)),
		History: slices.Clone(rp.history), ToldCycle: rp.toldCycle}
}

// cycle returns k when the keys of this turn's calls (nil when one of
// them is invalid or unknown: the turn then differs from every other),
// with the k-1 turns before them, make the same calls as the k turns
// before those, each of which returned a result (2 <= k <= maxCycle);
// else 0. A call repeated from one turn to the next is left to repeated.
// told reports whether the model had been told of a cycle already; the
// model is told now, if k > 0.
func (rp *repeats) cycle(keys []string) (k int, told bool) {
	if keys == nil {
		return 0, false
	}
	keys = slices.Clone(keys)
	sort.Strings(keys)
	h := append(rp.history[max(len(rp.history)-2*maxCycle, 0):len(rp.history):len(rp.history)], strings.Join(keys, "\x01"))
	n := len(h)
	for k := 2; k <= maxCycle && 2*k <= n; k++ {
		same := true
		for i := n - k; i < n && same; i++ {
			same = h[i] != "" && h[i] == h[i-k]
		}
		if same {
			told = rp.toldCycle
			rp.toldCycle = true
			return k, told
		}
	}
	return 0, false
}

// repeated reports whether the call key repeats a call of the previous
// turn that returned a result, or one of this turn (this, which it adds
// key to); told whether the model had been told already not to repeat
// it. The model is told now, if it is a repeat.
func (rp *repeats) repeated(key string, this map[string]bool) (repeat, told bool) {
	repeat = rp.prev[key] || this[key]
	this[key] = true
	if repeat {
		told = rp.told[key]
		rp.told[key] = true
	}
	return repeat, told
}

// record keeps the keys of the calls of a turn that returned a result,
// or were refused as repeats of one: the model has their result.
func (rp *repeats) record(keys []string) {
	clear(rp.prev)
	for _, k := range keys {
		rp.prev[k] = true
	}
	if len(keys) > 1 {
		keys = slices.Clone(keys)
		sort.Strings(keys)
	}
	rp.history = append(rp.history, strings.Join(keys, "\x01"))
}

// recordResumed adds the keys of the resumed calls that returned a result
// to the record of their turn, which the pause left out.
func (rp *repeats) recordResumed(keys []string) {
	for _, k := range keys {
		rp.prev[k] = true
	}
	n := len(rp.history)
	if n == 0 {
		return
	}
	if rp.history[n-1] != "" {
		keys = append(strings.Split(rp.history[n-1], "\x01"), keys...)
	}
	sort.Strings(keys)
	rp.history[n-1] = strings.Join(keys, "\x01")
}

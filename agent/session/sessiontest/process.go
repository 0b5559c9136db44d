package sessiontest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"git.rickub.com/bots-garden/mini-me/agent/session"
)

// workerEnv holds, in a worker process, the JSON of its job.
const workerEnv = "MINI_ME_SESSIONTEST_WORKER"

// job is what a worker process does: append batches of size tagged
// messages, as writer, to conversation ID of the database at Addr,
// printing "appended N" once batch N is stored.
type job struct {
	Addr    string `json:"addr"`
	ID      string `json:"id"`
	Writer  string `json:"writer"`
	Batches int    `json:"batches"`
	Size    int    `json:"size"`
	Pad     int    `json:"pad"`
}

// Worker does the work of a worker process, if this process is one, and
// reports whether it is, with the exit code to exit with. Run starts
// workers (with Config.Processes) by running the test binary again with
// an environment variable that says what to do: call Worker first in
// TestMain, before anything a worker does not need (such as starting a
// database server).
func Worker(open Opener) (code int, ok bool) {
	spec := os.Getenv(workerEnv)
	if spec == "" {
		return 0, false
	}
	var j job
	if err := json.Unmarshal([]byte(spec), &j); err != nil {
		fmt.Fprintln(os.Stderr, "sessiontest worker: bad job:", err)
		return 2, true
	}
	if err := work(j, open); err != nil {
		fmt.Fprintln(os.Stderr, "sessiontest worker:", err)
		return 1, true
	}
	return 0, true
}

func work(j job, open Opener) (err error) {
	ctx := context.Background()
	s, closeStore, err := open(ctx, j.Addr)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := closeStore(); err == nil {
			err = cerr
		}
	}()
	for n := range j.Batches {
		if _, err := s.Append(ctx, j.ID, session.Batch{Messages: batchOf(j.Writer, n, j.Size, j.Pad)}); err != nil {
			return fmt.Errorf("batch %d: %w", n, err)
		}
		if _, err := fmt.Printf("appended %d\n", n); err != nil {
			return err
		}
	}
	return nil
}

// worker is a running worker process.
type worker struct {
	cmd    *exec.Cmd
	acks   chan int // the batches it said it stored, closed at its end
	stderr strings.Builder
}

// startWorker runs the test binary as a worker doing j; the test waits
// for it (or kills it) before it ends.
func startWorker(t *testing.T, j job) *worker {
	t.Helper()
	spec, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	w := &worker{acks: make(chan int, j.Batches)}
	// -test.run=^$: a binary whose TestMain does not call Worker runs no
	// test and says nothing, which the waiting test reports.
	w.cmd = exec.Command(os.Args[0], "-test.run=^$")
	w.cmd.Env = append(os.Environ(), workerEnv+"="+string(spec))
	w.cmd.Stderr = &w.stderr
	out, err := w.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go w.read(out)
	t.Cleanup(func() {
		_ = w.cmd.Process.Kill() // when the test failed before waiting
		_ = w.cmd.Wait()
	})
	return w
}

func (w *worker) read(out io.Reader) {
	defer close(w.acks)
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		n, err := strconv.Atoi(strings.TrimPrefix(sc.Text(), "appended "))
		if err != nil {
			return
		}
		w.acks <- n
	}
}

// wait waits for the end of w, which must do all its batches.
func (w *worker) wait(t *testing.T, batches int) {
	t.Helper()
	last := -1
	for n := range w.acks {
		last = n
	}
	if err := w.cmd.Wait(); err != nil || last != batches-1 {
		t.Fatalf("worker: %v after batch %d of %d (did TestMain call sessiontest.Worker?); stderr:\n%s", err, last, batches, w.stderr.String())
	}
}

// testTwoProcesses: two processes appending to one conversation at once
// never interleave their batches nor lose one.
func testTwoProcesses(t *testing.T, c Config) {
	if !c.Processes {
		t.Skip("the store is not shared between processes (Config.Processes)")
	}
	s, addr := fresh(t, c)
	appendOK(t, s, "shared", session.Batch{}) // the conversation exists: both workers race on appends, not on its creation
	const batches, size = 40, 5
	a := startWorker(t, job{Addr: addr, ID: "shared", Writer: "A", Batches: batches, Size: size})
	b := startWorker(t, job{Addr: addr, ID: "shared", Writer: "B", Batches: batches, Size: size})
	a.wait(t, batches)
	b.wait(t, batches)
	checkWriters(t, s, "shared", size, map[string]int{"A": batches, "B": batches})
}

// testKilledWriter: processes killed in the middle of their appends lose
// none of the batches they were told were stored, leave no part of the
// one in flight, and the store goes on working.
func testKilledWriter(t *testing.T, c Config) {
	if !c.Processes {
		t.Skip("the store is not shared between processes (Config.Processes)")
	}
	s, addr := fresh(t, c)
	// Large batches, so that a worker spends most of its time inside an
	// Append; each worker is killed at another point of the Append after
	// its batch killAfter, a fraction of the time its last batch took.
	const batches, size, pad, killAfter = 1000, 200, 512, 3
	acked := map[string]int{}
	for i, frac := range []float64{0, 0.3, 0.6, 0.9} {
		writer := fmt.Sprint("K", i)
		acked[writer] = killMidAppend(t, job{Addr: addr, ID: "victim", Writer: writer, Batches: batches, Size: size, Pad: pad}, killAfter, frac)
	}
	stored, err := checkBatches(history(t, s, "victim", 0), size)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for w, n := range acked {
		if stored[w] < n || stored[w] > n+1 {
			t.Fatalf("%s: %d batches stored; it was told %d were, and could have been writing one more", w, stored[w], n)
		}
		total += stored[w]
	}
	t.Logf("batches acknowledged %v, stored %v", acked, stored)
	// The store goes on: another writer appends, and Load sees it all.
	info := appendOK(t, open(t, c, addr), "victim", session.Batch{Messages: batchOf("L", 0, size, 0)})
	if info.Last != int64((total+1)*size) {
		t.Fatalf("Append after the kills: %+v, want %d messages", info, (total+1)*size)
	}
	stored["L"] = 1
	checkWriters(t, s, "victim", size, stored)
}

// killMidAppend runs a worker doing j, kills it frac of the time its
// batch killAfter took once it said that batch is stored, and returns how
// many batches it said it stored.
func killMidAppend(t *testing.T, j job, killAfter int, frac float64) int {
	t.Helper()
	w := startWorker(t, j)
	seen, last, took := -1, time.Now(), time.Duration(0)
	for n := range w.acks {
		now := time.Now()
		seen, last, took = n, now, now.Sub(last)
		if n == killAfter {
			break
		}
	}
	if seen != killAfter {
		w.wait(t, j.Batches) // it ended early: say why
	}
	<-time.After(time.Duration(frac * float64(took)))
	if err := w.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = w.cmd.Wait()
	acked := killAfter + 1
	for n := range w.acks { // the acks it printed before the kill
		acked = n + 1
	}
	return acked
}

// Command bench compares mini-me's MCP client with the floor (bare net/http
// or a bare pipe, hand-built JSON-RPC), the official go-sdk client and
// mcp-go's client, in interleaved rounds, and prints for each scenario the
// raw figures and the ratios between clients: the median of the ratios
// measured in each round, with their spread (min–max).
//
// The servers run in a child process (this program with -serve), so that
// the CPU time, allocations and goroutines counted here are the clients'
// alone: replay servers that answer recorded results at almost no cost, in
// each era, as SSE and as JSON; the official go-sdk server in its stateless
// (2026-07-28) and stateful (2025-11-25) modes; and a stdio replay server.
//
// Usage:
//
//	cd internal/bench && go run . [-rounds 5] [-n 500] [-servers REGEXP] [-clients floor,mini-me,...]
//	cd internal/bench && go run . -scale [-rounds 10] [-parts idle,discover,catalogue,agent]
//
// A quick run: go run . -rounds 3 -n 200. -huge N sets the 16 MiB calls
// per round whose peak live heap is sampled (see peakHeap). To profile the
// 1 MiB result path of one client: go run . -rounds 1 -n 1 -big 200 -servers 'replay
// 2026-07-28 sse' -clients mini-me -cpuprofile cpu.out -memprofile mem.out.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	serve := flag.String("serve", "", "run as the server process: http or stdio (used by the harness itself)")
	rounds := flag.Int("rounds", 5, "interleaved rounds")
	n := flag.Int("n", 500, "calls per latency phase and per throughput level")
	bigs := flag.Int("big", 5, "1 MiB calls per round (raise it, with -n 1, to profile that path)")
	huges := flag.Int("huge", 2, "16 MiB calls per round, whose peak live heap is sampled (0: none)")
	serverRE := flag.String("servers", "", "only the scenarios whose name matches this regexp")
	clients := flag.String("clients", "", "comma-separated contenders (default all: floor,mini-me,go-sdk,mcp-go)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run (filter to one client to profile it)")
	memProfile := flag.String("memprofile", "", "write an allocation profile at the end")
	scale := flag.Bool("scale", false, "measure the costs at scale (idle servers, discovery, catalogues, the agent loop) instead of comparing clients")
	parts := flag.String("parts", "", "with -scale, only these comma-separated parts: idle,discover,catalogue,agent (default all)")
	flag.Parse()
	var err error
	switch *serve {
	case "http":
		err = serveHTTP()
	case "stdio":
		err = serveStdio()
	case "":
		err = run(config{rounds: *rounds, n: *n, bigs: *bigs, huges: *huges, servers: *serverRE, clients: *clients, cpuProfile: *cpuProfile, memProfile: *memProfile, scale: *scale, parts: *parts})
	default:
		err = fmt.Errorf("unknown -serve %q", *serve)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type config struct {
	rounds, n, bigs, huges int
	servers, clients       string
	cpuProfile, memProfile string
	scale                  bool
	parts                  string // of the scale mode
}

// scenario is one server the contenders are measured against.
type scenario struct {
	name  string
	t     target
	stdio bool
	huge  bool // the server answers the 16 MiB tool (a replay server)
}

func run(cfg config) error {
	scenarios, stop, err := startServers()
	if err != nil {
		return err
	}
	defer stop()
	if cfg.cpuProfile != "" {
		f, err := os.Create(cfg.cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if cfg.scale {
		if err := runScale(cfg, scenarios); err != nil {
			return err
		}
		return writeMemProfile(cfg.memProfile)
	}
	if cfg.servers != "" {
		re, err := regexp.Compile(cfg.servers)
		if err != nil {
			return err
		}
		scenarios = slices.DeleteFunc(scenarios, func(s scenario) bool { return !re.MatchString(s.name) })
	}
	cs := contenders
	if cfg.clients != "" {
		want := strings.Split(cfg.clients, ",")
		cs = slices.DeleteFunc(slices.Clone(cs), func(c contender) bool { return !slices.Contains(want, c.name) })
	}
	if len(scenarios) == 0 || len(cs) == 0 {
		return fmt.Errorf("nothing to run")
	}
	res := newResults()
	start := time.Now()
	for r := range cfg.rounds {
		for _, sc := range scenarios {
			for i := range cs {
				c := cs[(i+r)%len(cs)] // rotate the order from round to round
				if res.failed(sc.name, c.name) {
					continue
				}
				figs, err := measure(cfg, sc, c)
				if err != nil {
					res.fail(sc.name, c.name, err)
					continue
				}
				res.add(sc.name, c.name, figs)
			}
		}
		fmt.Fprintf(os.Stderr, "round %d/%d done (%v)\n", r+1, cfg.rounds, time.Since(start).Round(time.Second))
	}
	if err := writeMemProfile(cfg.memProfile); err != nil {
		return err
	}
	res.print(os.Stdout, scenarios, cs, cfg)
	return nil
}

// writeMemProfile writes the allocation profile to path, if not "".
func writeMemProfile(path string) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return pprof.Lookup("allocs").WriteTo(f, 0)
}

// startServers starts the child process and returns the scenarios it
// serves, and how to stop it.
func startServers() ([]scenario, func(), error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(self, "-serve", "http")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	stop := func() { _ = in.Close(); _ = cmd.Wait() }
	var scs []scenario
	lines := bufio.NewScanner(out)
	for _, s := range servers {
		if !lines.Scan() {
			stop()
			return nil, nil, fmt.Errorf("server process: %v", lines.Err())
		}
		scs = append(scs, scenario{name: s.name, t: target{url: lines.Text(), modern: s.modern}, huge: !s.live})
	}
	if !lines.Scan() {
		stop()
		return nil, nil, fmt.Errorf("server process: %v", lines.Err())
	}
	smallURL = lines.Text()
	go func() { _, _ = io.Copy(io.Discard, out) }()
	scs = append(scs, scenario{name: "stdio replay 2026-07-28", t: target{modern: true}, stdio: true, huge: true})
	return scs, stop, nil
}

// figures are one contender's measures in one round.
type figures map[string]float64

// The figures, in table order; higher is better only for throughput.
var figureNames = []string{
	"connect", "list 500 tools", "echo p50", "echo p99", "cpu/call", "allocs/call", "bytes/call",
	"calls/s @1", "calls/s @8", "calls/s @64", "1 MiB result", "1 MiB bytes", "1 MiB bytes / payload",
	"16 MiB peak live bytes", "16 MiB peak / payload", "goroutines after Close",
}

// newTransport is the HTTP transport every contender gets, a fresh one
// each, with enough idle connections for 64 goroutines.
func newTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 128
	return t
}

// measure runs every phase for one contender against one scenario.
func measure(cfg config, sc scenario, c contender) (figures, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	f := figures{}
	tr := newTransport()
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	g0 := runtime.NumGoroutine()

	connects := 5
	if sc.stdio {
		connects = 3
	}
	var ds []float64
	for range connects {
		t0 := time.Now()
		s, err := c.connect(ctx, sc.t, hc)
		if err != nil {
			return nil, fmt.Errorf("connect: %w", err)
		}
		ds = append(ds, float64(time.Since(t0)))
		if err := s.close(); err != nil && !sc.stdio {
			return nil, fmt.Errorf("close: %w", err)
		}
	}
	f["connect"] = median(ds)

	s, err := c.connect(ctx, sc.t, hc)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	closed := false
	defer func() {
		if !closed {
			_ = s.close()
		}
	}()

	if !sc.stdio {
		ds = ds[:0]
		for range 3 {
			t0 := time.Now()
			got, err := s.list(ctx)
			if err != nil {
				return nil, fmt.Errorf("list: %w", err)
			}
			if got != toolCount {
				return nil, fmt.Errorf("list: %d tools, want %d", got, toolCount)
			}
			ds = append(ds, float64(time.Since(t0)))
		}
		f["list 500 tools"] = median(ds)
	}

	for range 20 { // warm up
		if err := s.echo(ctx); err != nil {
			return nil, fmt.Errorf("echo: %w", err)
		}
	}
	lat := make([]float64, 0, cfg.n)
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0 := cpuTime()
	for range cfg.n {
		t0 := time.Now()
		if err := s.echo(ctx); err != nil {
			return nil, fmt.Errorf("echo: %w", err)
		}
		lat = append(lat, float64(time.Since(t0)))
	}
	cpu1 := cpuTime()
	runtime.ReadMemStats(&m1)
	slices.Sort(lat)
	f["echo p50"] = lat[len(lat)/2]
	f["echo p99"] = lat[len(lat)*99/100]
	f["cpu/call"] = float64(cpu1-cpu0) / float64(cfg.n)
	f["allocs/call"] = float64(m1.Mallocs-m0.Mallocs) / float64(cfg.n)
	f["bytes/call"] = float64(m1.TotalAlloc-m0.TotalAlloc) / float64(cfg.n)

	if !sc.stdio {
		for _, g := range []int{1, 8, 64} {
			rate, err := throughput(ctx, s, g, cfg.n)
			if err != nil {
				return nil, fmt.Errorf("throughput @%d: %w", g, err)
			}
			f[fmt.Sprintf("calls/s @%d", g)] = rate
		}
	}

	ds = ds[:0]
	runtime.ReadMemStats(&m0)
	for range cfg.bigs {
		t0 := time.Now()
		if err := s.big(ctx); err != nil {
			return nil, fmt.Errorf("1 MiB: %w", err)
		}
		ds = append(ds, float64(time.Since(t0)))
	}
	runtime.ReadMemStats(&m1)
	f["1 MiB result"] = median(ds)
	f["1 MiB bytes"] = float64(m1.TotalAlloc-m0.TotalAlloc) / float64(cfg.bigs)
	f["1 MiB bytes / payload"] = f["1 MiB bytes"] / bigSize

	if sc.huge && cfg.huges > 0 {
		peak, err := peakHeap(cfg.huges, func(held func()) error { return s.huge(ctx, held) })
		if err != nil {
			// A client may refuse a message this large (go-sdk's stdio line
			// limit): its other figures stand, this one is left out.
			fmt.Fprintf(os.Stderr, "%s, %s: 16 MiB result: %v\n", sc.name, c.name, err)
		} else {
			f["16 MiB peak live bytes"] = peak
			f["16 MiB peak / payload"] = peak / hugeSize
		}
	}

	closed = true
	if err := s.close(); err != nil && !sc.stdio {
		return nil, fmt.Errorf("close: %w", err)
	}
	tr.CloseIdleConnections()
	f["goroutines after Close"] = float64(settle(g0) - g0)
	return f, nil
}

// throughput runs calls echo calls on g goroutines and returns calls per
// second.
func throughput(ctx context.Context, s session, g, calls int) (float64, error) {
	calls = max(calls, 4*g)
	var left atomic.Int64
	left.Store(int64(calls))
	var wg sync.WaitGroup
	errs := make(chan error, g)
	t0 := time.Now()
	for range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				if err := s.echo(ctx); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	el := time.Since(t0)
	select {
	case err := <-errs:
		return 0, err
	default:
	}
	return float64(calls) / el.Seconds(), nil
}

// settle returns the goroutine count once it stops falling to g0, within
// half a second: goroutines a client ended may still be on their way out.
func settle(g0 int) int {
	deadline := time.Now().Add(500 * time.Millisecond)
	n := runtime.NumGoroutine()
	for n > g0 && time.Now().Before(deadline) {
		runtime.Gosched()
		time.Sleep(5 * time.Millisecond)
		n = runtime.NumGoroutine()
	}
	return n
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"git.rickub.com/bots-garden/mini-me/agent"
	mmconfig "git.rickub.com/bots-garden/mini-me/config"
	mm "git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// The scale mode (-scale) measures what a host with many servers pays,
// rather than comparing clients: the memory and goroutines of an idle
// connected server, by transport and era, against the floor of an idle
// keep-alive connection or a bare child process; discovering 100 servers
// that answer after smallDelay, against one of them and against 100 floor
// clients sending the same requests; discovering a
// 10,000-tool catalogue; the agent loop's turn with a 500-tool catalogue
// and tool search on; and one tool search over 10,000 tools.

// smallURL is the child's remote-like server: smallTools tools, every
// answer after smallDelay.
var smallURL string

const (
	smallTools = 10
	smallDelay = 20 * time.Millisecond
	idleHTTP   = 50 // servers connected at once to measure idle cost over HTTP
	idleStdio  = 10 // ... and over stdio (each a process)
)

// scaleFigures are one round's figures, by name.
type scaleFigures map[string]float64

// scaleOrder lists the figures in print order, with their unit.
var scaleOrder []struct{ name, unit string }

func (f scaleFigures) set(name, unit string, v float64) {
	if !slices.ContainsFunc(scaleOrder, func(o struct{ name, unit string }) bool { return o.name == name }) {
		scaleOrder = append(scaleOrder, struct{ name, unit string }{name, unit})
	}
	f[name] = v
}

func runScale(cfg config, scs []scenario) error {
	url := func(name string) string {
		for _, s := range scs {
			if s.name == name {
				return s.t.url
			}
		}
		panic("no scenario " + name)
	}
	parts := map[string]bool{}
	for _, p := range strings.Split(cmp.Or(cfg.parts, strings.Join(scaleParts, ",")), ",") {
		if !slices.Contains(scaleParts, p) {
			return fmt.Errorf("-parts: unknown part %q (want some of %s)", p, strings.Join(scaleParts, ","))
		}
		parts[p] = true
	}
	var rounds []scaleFigures
	start := time.Now()
	for r := range cfg.rounds {
		f := scaleFigures{}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		err := scaleRound(ctx, f, url, parts)
		cancel()
		if err != nil {
			return fmt.Errorf("round %d: %w", r+1, err)
		}
		rounds = append(rounds, f)
		fmt.Fprintf(os.Stderr, "round %d/%d done (%v)\n", r+1, cfg.rounds, time.Since(start).Round(time.Second))
	}
	fmt.Printf("mini-me at scale: %d rounds; each figure is the median over rounds (min–max)\n\n", cfg.rounds)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "figure\tmedian\tmin–max\t")
	for _, o := range scaleOrder {
		var xs []float64
		for _, f := range rounds {
			if v, ok := f[o.name]; ok {
				xs = append(xs, v)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s–%s\t\n", o.name, scaleFormat(o.unit, median(xs)), scaleFormat(o.unit, slices.Min(xs)), scaleFormat(o.unit, slices.Max(xs)))
	}
	return tw.Flush()
}

func scaleFormat(unit string, v float64) string {
	switch unit {
	case "bytes":
		return bytesString(v)
	case "time":
		return format("", v, true)
	case "x":
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// scaleParts are the groups of scale figures, in run order (-parts).
var scaleParts = []string{"idle", "discover", "catalogue", "agent"}

func scaleRound(ctx context.Context, f scaleFigures, url func(string) string, parts map[string]bool) error {
	if parts["idle"] {
		if err := idleFigures(ctx, f, url); err != nil {
			return err
		}
	}
	if parts["discover"] {
		if err := discoverFigures(ctx, f); err != nil {
			return err
		}
	}
	if parts["catalogue"] {
		if err := catalogueFigures(ctx, f, url("replay 2026-07-28 json")); err != nil {
			return err
		}
	}
	if parts["agent"] {
		return agentFigures(ctx, f)
	}
	return nil
}

// idleFigures measures the idle cost of a connected server, by transport
// and era, and their floors.
func idleFigures(ctx context.Context, f scaleFigures, url func(string) string) error {
	idles := []struct {
		name string
		t    target
	}{
		{"HTTP 2026-07-28", target{url: url("replay 2026-07-28 sse"), modern: true}},
		{"HTTP 2025-11-25, no GET stream", target{url: url("replay 2025-11-25 sse")}},
		{"HTTP 2025-11-25, GET stream (go-sdk)", target{url: url("go-sdk 2025-11-25 sse")}},
	}
	for _, in := range idles {
		g, h, err := idleCost(ctx, idleHTTP, func() (io.Closer, error) { return connectIdle(ctx, in.t) })
		if err != nil {
			return fmt.Errorf("idle %s: %w", in.name, err)
		}
		f.set("idle goroutines/server, "+in.name, "n", g)
		f.set("idle heap/server, "+in.name, "bytes", h)
	}
	g, h, err := idleCost(ctx, idleHTTP, func() (io.Closer, error) { return idleConnFloor(ctx, url("replay 2026-07-28 sse")) })
	if err != nil {
		return fmt.Errorf("idle floor: %w", err)
	}
	f.set("idle goroutines/server, floor: a keep-alive connection", "n", g)
	f.set("idle heap/server, floor: a keep-alive connection", "bytes", h)
	g, h, err = idleCost(ctx, idleStdio, func() (io.Closer, error) { return connectIdle(ctx, target{modern: true}) })
	if err != nil {
		return fmt.Errorf("idle stdio: %w", err)
	}
	f.set("idle goroutines/server, stdio", "n", g)
	f.set("idle heap/server, stdio", "bytes", h)
	g, h, err = idleCost(ctx, idleStdio, idleProcFloor)
	if err != nil {
		return fmt.Errorf("idle stdio floor: %w", err)
	}
	f.set("idle goroutines/server, floor: a child process and its pipes", "n", g)
	f.set("idle heap/server, floor: a child process and its pipes", "bytes", h)
	return nil
}

// idleCost connects n servers with connect and returns the goroutines and
// the live heap each adds once they are idle; then it closes them.
func idleCost(ctx context.Context, n int, connect func() (io.Closer, error)) (goroutines, heap float64, err error) {
	g0, h0 := steadyGoroutines(runtime.NumGoroutine()), liveHeap()
	var cs []io.Closer
	defer func() {
		for _, c := range cs {
			_ = c.Close()
		}
	}()
	for range n {
		c, err := connect()
		if err != nil {
			return 0, 0, err
		}
		cs = append(cs, c)
	}
	g1 := steadyGoroutines(g0)
	h1 := liveHeap()
	return float64(g1-g0) / float64(n), (float64(h1) - float64(h0)) / float64(n), ctx.Err()
}

// steadyGoroutines returns the goroutine count once it has stayed the same
// for 50 ms (a legacy GET stream opens after Connect returns), within 2 s;
// from is where it starts.
func steadyGoroutines(from int) int {
	n, since := from, time.Now()
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
		if m := runtime.NumGoroutine(); m != n {
			n, since = m, time.Now()
		} else if time.Since(since) >= 50*time.Millisecond {
			break
		}
	}
	return n
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// connectIdle connects a client as a host would, with a transport of its
// own (servers on distinct hosts share no connection).
func connectIdle(ctx context.Context, t target) (io.Closer, error) {
	s, err := connectMiniMe(ctx, t, &http.Client{Transport: newTransport()})
	if err != nil {
		return nil, err
	}
	return closerFunc(s.close), nil
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// idleConnFloor is what any HTTP client of a server pays: a transport of
// its own, holding the keep-alive connection of one request.
func idleConnFloor(ctx context.Context, url string) (io.Closer, error) {
	tr := newTransport()
	hc := &http.Client{Transport: tr}
	f, err := connectFloor(ctx, target{url: url, modern: true}, hc)
	if err != nil {
		return nil, err
	}
	return closerFunc(func() error { err := f.close(); tr.CloseIdleConnections(); return err }), nil
}

// idleProcFloor is what any stdio client pays: a child process and its
// pipes, after one request.
func idleProcFloor() (io.Closer, error) {
	f, err := connectFloor(context.Background(), target{modern: true}, nil)
	if err != nil {
		return nil, err
	}
	return closerFunc(f.close), nil
}

// discoverFigures times Discover of 100 servers that each answer after
// smallDelay, against the slowest of 5 discoveries of one of them.
func discoverFigures(ctx context.Context, f scaleFigures) error {
	servers := func(n int) []mmconfig.Server {
		out := make([]mmconfig.Server, n)
		for i := range out {
			out[i] = mmconfig.Server{Name: fmt.Sprintf("s%03d", i), URL: smallURL}
		}
		return out
	}
	discover := func(n int) (time.Duration, error) {
		t0 := time.Now()
		ts, err := toolset.Discover(ctx, servers(n), nil)
		el := time.Since(t0)
		if err != nil {
			return 0, err
		}
		defer ts.Close()
		if got := len(ts.Tools()); got != n*smallTools {
			return 0, fmt.Errorf("discover %d servers: %d tools, want %d (%v)", n, got, n*smallTools, ts.Warnings())
		}
		return el, nil
	}
	var slowest time.Duration
	for range 5 {
		d, err := discover(1)
		if err != nil {
			return err
		}
		slowest = max(slowest, d)
	}
	// The floor runs once before mini-me and once after, and counts as the
	// mean of the two, so that neither side always meets a server the
	// other has just warmed.
	before, err := discoverFloor(ctx, 100)
	if err != nil {
		return fmt.Errorf("discover floor: %w", err)
	}
	d, err := discover(100)
	if err != nil {
		return err
	}
	after, err := discoverFloor(ctx, 100)
	if err != nil {
		return fmt.Errorf("discover floor: %w", err)
	}
	fl := (before + after) / 2
	f.set("discover 1 server (20 ms a response; slowest of 5)", "time", float64(slowest))
	f.set("discover 100 servers (20 ms a response)", "time", float64(d))
	f.set("discover 100 / slowest single", "x", float64(d)/float64(slowest))
	f.set("discover 100, floor: the same 2 requests by 100 bare clients", "time", float64(fl))
	f.set("discover 100 / its floor", "x", float64(d)/float64(fl))
	return nil
}

// discoverFloor is what 100 discoveries cost at least: n floor clients,
// each with a transport of its own, send the same two requests as a
// modern Discover (server/discover, then tools/list) at once.
func discoverFloor(ctx context.Context, n int) (time.Duration, error) {
	errs := make(chan error, n)
	t0 := time.Now()
	for range n {
		go func() {
			tr := newTransport()
			defer tr.CloseIdleConnections()
			s, err := connectFloor(ctx, target{url: smallURL, modern: true}, &http.Client{Transport: tr})
			if err != nil {
				errs <- err
				return
			}
			got, err := s.list(ctx)
			if err == nil && got != smallTools {
				err = fmt.Errorf("%d tools, want %d", got, smallTools)
			}
			errs <- errors.Join(err, s.close())
		}()
	}
	var err error
	for range n {
		err = errors.Join(err, <-errs)
	}
	return time.Since(t0), err
}

// catalogueFigures discovers 20 replay servers of 500 tools each: listing,
// naming and checking a 10,000-tool catalogue; then the live heap it
// holds, and the agent's first turn over it, which indexes it for search.
func catalogueFigures(ctx context.Context, f scaleFigures, url string) error {
	servers := make([]mmconfig.Server, 20)
	for i := range servers {
		servers[i] = mmconfig.Server{Name: fmt.Sprintf("c%02d", i), URL: url}
	}
	h0 := liveHeap()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	t0 := time.Now()
	ts, err := toolset.Discover(ctx, servers, nil)
	el := time.Since(t0)
	runtime.ReadMemStats(&m1)
	if err != nil {
		return err
	}
	defer ts.Close()
	if got := len(ts.Tools()); got != 20*toolCount {
		return fmt.Errorf("catalogue: %d tools, want %d", got, 20*toolCount)
	}
	f.set("catalogue of 10,000 tools (20 servers): Discover", "time", float64(el))
	f.set("catalogue of 10,000 tools: allocated by Discover", "bytes", float64(m1.TotalAlloc-m0.TotalAlloc))
	f.set("catalogue of 10,000 tools: live heap of the Toolset", "bytes", float64(liveHeap()-h0))
	return nil
}

// inProcess is a tool source of n tools that cost nothing to call.
type inProcess struct{ tools []toolset.Tool }

var (
	verbs = []string{"create", "list", "delete", "update", "search", "export", "import", "archive", "merge", "render"}
	nouns = []string{"issue", "file", "page", "record", "invoice", "ticket", "branch", "calendar event", "contact", "report",
		"dashboard", "message", "folder", "image", "table", "user", "group", "document", "comment", "release"}
)

func newInProcess(n int) *inProcess {
	schema := []byte(`{"type":"object","properties":{"id":{"type":"string"},"text":{"type":"string"}},"required":["id"]}`)
	s := &inProcess{}
	for i := range n {
		v, o := verbs[i%len(verbs)], nouns[(i/len(verbs))%len(nouns)]
		server := fmt.Sprintf("svc%02d", i/500)
		name := fmt.Sprintf("%s_%s", v, strings.ReplaceAll(o, " ", "_"))
		if i >= len(verbs)*len(nouns) {
			name = fmt.Sprintf("%s_%d", name, i)
		}
		s.tools = append(s.tools, toolset.Tool{Name: server + "_" + name, Server: server, Tool: mm.Tool{Name: name,
			Description: fmt.Sprintf("%s a %s of the %s service, by id (tool %d).", strings.ToUpper(v[:1])+v[1:], o, server, i),
			InputSchema: schema}})
	}
	return s
}

func (s *inProcess) Tools() []toolset.Tool { return s.tools }

func (s *inProcess) Call(_ context.Context, name string, _ any) (*toolset.ToolResult, error) {
	return &toolset.ToolResult{Name: name, Result: &mm.CallToolResult{Content: []mm.Content{{Type: "text", Text: "done"}}}}, nil
}

// scriptModel answers from a script: the tool calls of each step in turn,
// then a final answer. It costs nothing, so that the loop's own cost shows.
type scriptModel struct{ steps [][]agent.ToolCall }

func (m scriptModel) Chat(_ context.Context, req *agent.ChatRequest, _ func(agent.Delta)) (*agent.Reply, error) {
	step := 0
	for _, msg := range req.Messages {
		if msg.Role == agent.RoleAssistant {
			step++
		}
	}
	if step < len(m.steps) {
		return &agent.Reply{Message: agent.Message{Role: agent.RoleAssistant, Parts: agent.Parts("", m.steps[step]...)}, Finish: agent.FinishToolCalls}, nil
	}
	return &agent.Reply{Message: agent.Message{Role: agent.RoleAssistant, Parts: agent.Parts("done")}, Finish: agent.FinishStop}, nil
}

// agentFigures measures, with an in-process model and tools: a turn (a
// model call asking for a tool, the call, a model call answering) over a
// 500-tool catalogue with tool search on (the tool called is pinned), and
// a run whose model searches once over 10,000 tools, against one whose
// model answers at once, over the same catalogue; and the search's first
// run, where the Agent compiles the schemas and indexes the tools.
func agentFigures(ctx context.Context, f scaleFigures) error {
	msgs := []agent.Message{agent.UserMessage("go")}
	policy := permission.NewPolicy(permission.AllowAll{})
	var first time.Duration // of the last perRun: the Agent's first run
	perRun := func(a *agent.Agent, runs int) (time.Duration, float64, float64, error) {
		t0 := time.Now()
		if _, err := a.Run(ctx, msgs); err != nil { // warm up: schemas compiled, tools indexed once per Agent
			return 0, 0, 0, err
		}
		first = time.Since(t0)
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		t0 = time.Now()
		for range runs {
			res, err := a.Run(ctx, msgs)
			if err != nil || res.Answer != "done" {
				return 0, 0, 0, fmt.Errorf("run: %q, %v", res.Answer, err)
			}
		}
		el := time.Since(t0) / time.Duration(runs)
		runtime.ReadMemStats(&m1)
		return el, float64(m1.Mallocs-m0.Mallocs) / float64(runs), float64(m1.TotalAlloc-m0.TotalAlloc) / float64(runs), nil
	}

	src := newInProcess(500)
	pinned := src.tools[7].Name
	call := []agent.ToolCall{{ID: "c1", Name: pinned, Arguments: `{"id":"42"}`}}
	a := &agent.Agent{Model: scriptModel{[][]agent.ToolCall{call}}, Tools: src, Policy: policy, ToolSearch: agent.ToolSearchOn, PinnedTools: []string{pinned}}
	d, allocs, b, err := perRun(a, 200)
	if err != nil {
		return fmt.Errorf("turn, 500 tools: %w", err)
	}
	f.set("agent turn, 500 tools, search on: time", "time", float64(d))
	f.set("agent turn, 500 tools, search on: allocations", "n", allocs)
	f.set("agent turn, 500 tools, search on: bytes", "bytes", b)

	big := newInProcess(10_000)
	search := []agent.ToolCall{{ID: "s1", Name: agent.ToolSearchTool, Arguments: `{"query":"export invoice"}`}}
	a = &agent.Agent{Model: scriptModel{[][]agent.ToolCall{search}}, Tools: big, Policy: policy, ToolSearch: agent.ToolSearchOn}
	dSearch, allocsSearch, _, err := perRun(a, 5)
	if err != nil {
		return fmt.Errorf("search, 10,000 tools: %w", err)
	}
	firstSearch := first
	a = &agent.Agent{Model: scriptModel{}, Tools: big, Policy: policy, ToolSearch: agent.ToolSearchOn}
	dAnswer, allocsAnswer, _, err := perRun(a, 5)
	if err != nil {
		return fmt.Errorf("answer, 10,000 tools: %w", err)
	}
	f.set("run over 10,000 tools, answering at once: time", "time", float64(dAnswer))
	f.set("run over 10,000 tools, one search: time", "time", float64(dSearch))
	f.set("one tool search over 10,000 tools (the difference)", "time", float64(dSearch-dAnswer))
	f.set("one tool search over 10,000 tools: allocations", "n", allocsSearch-allocsAnswer)
	f.set("first run with a search over 10,000 tools (indexes them; schemas compiled)", "time", float64(firstSearch))
	return nil
}

// Command finance is a stdio MCP server for the tests of mini-me's stdio
// transport, modelled on a desktop finance app started with --mcp: it
// lists the profiles the user allowed, select_profile picks one for the
// rest of the process's life, read tools return a summary and
// transactions, a write tool recategorises a transaction, two prompts are
// offered, and refusals are tool results with isError and a stable code.
// Its stdout belongs to the protocol; it logs to stderr.
//
// It speaks the 2026-07-28 revision, the initialize-based 2025-11-25 one,
// or both (-era), and misbehaves on request (see the flags). The tools
// history, echo, slow, env, pid, big, ask_client and flood_client exist
// for the tests; with -list-changed, add_tool changes the tool list and
// says so (on every subscriptions/listen of a modern client, or to a
// legacy one), and
// end_subscriptions ends the subscriptions. log_burst (listed with
// -list-log-burst) sends n log notifications, then tools/list_changed.
// With -resources it offers the resource finance://ledger, subscribable
// (resources/subscribe, or a subscriptions/listen naming it), and the tool
// touch_ledger says it changed to every subscriber.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"git.rickub.com/bots-garden/mini-me/internal/jsonrpc"
)

const (
	modern = "2026-07-28"
	legacy = "2025-11-25"
)

func main() {
	s := &server{out: bufio.NewWriter(os.Stdout), slow: map[string]context.CancelFunc{}, waiting: map[string]chan *jsonrpc.Message{}}
	flag.StringVar(&s.era, "era", "both", "modern, legacy, both, legacy-exit-on-probe (exits on server/discover), legacy-answer-exit-on-probe (answers it with an error, then exits) or legacy-late-probe (answers it only when initialize comes), legacy-unsupported-probe (answers it -32022 listing only the legacy version) or legacy-code0-probe (answers it with error code 0)")
	flag.StringVar(&s.crashOn, "crash-on", "", "tool whose call makes the server exit with status 3")
	ignoreEOF := flag.Bool("ignore-stdin-eof", false, "keep running after stdin ends")
	ignoreTerm := flag.Bool("ignore-sigterm", false, "ignore SIGTERM")
	flood := flag.Bool("flood-stderr", false, "write 2 MiB to stderr before serving and 256 KiB before each answer")
	garbage := flag.Int("garbage-stdout", 0, "lines of text written to stdout before serving")
	flag.BoolVar(&s.garbageReplies, "garbage-replies", false, "answer every request with a line of text")
	exitNow := flag.Bool("exit-immediately", false, "exit with status 2 at once")
	starts := flag.String("starts", "", "file counting the starts of the server, restarts included")
	flag.IntVar(&s.exitOnInit, "exit-on-initialize", 0, "exit with status 4 on initialize when this is start number n (needs -starts)")
	flag.BoolVar(&s.listChanged, "list-changed", false, "offer tools.listChanged, subscriptions/listen, add_tool and end_subscriptions")
	flag.BoolVar(&s.listBurst, "list-log-burst", false, "list log_burst with the tools")
	flag.BoolVar(&s.resources, "resources", false, "offer the subscribable resource finance://ledger and the tool touch_ledger")
	flag.BoolVar(&s.stall, "stall-stdin", false, "stop reading stdin once the first request is answered (its pipe then fills)")
	flag.BoolVar(&s.quiet, "quiet", false, "do not log each request's method to stderr (for benchmarks)")
	flag.StringVar(&s.fault, "fault", "", "answer echo with a broken line: truncate (half of it), invalid-utf8 (bytes that are not UTF-8 in the text) wrong-id (another request's id), bad-value (a whole line with a bad literal in the result) or batch (the answer as a one-message batch, after spaces)")
	slowStart := flag.Duration("slow-start", 0, "wait this long before reading stdin, as a server that downloads itself on first start; server/discover and initialize are then answered in order, as the official SDKs do")
	flag.BoolVar(&s.fixEra, "fix-era", false, "the era is fixed by the first request: initialize after server/discover is refused with -32022, as the official Python SDK does")
	flag.Parse()
	s.inOrder = *slowStart > 0

	if *exitNow {
		fmt.Fprintln(os.Stderr, "finance: cannot open database ledger.db: no such file")
		os.Exit(2)
	}
	if *starts != "" {
		b, _ := os.ReadFile(*starts) // absent: the first start
		s.start, _ = strconv.Atoi(string(b))
		s.start++
		if err := os.WriteFile(*starts, []byte(strconv.Itoa(s.start)), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, "finance:", err)
			os.Exit(2)
		}
	}
	if *ignoreTerm {
		signal.Ignore(syscall.SIGTERM)
	}
	if *flood {
		s.flood = 256 << 10
		floodStderr(2 << 20)
	}
	for i := range *garbage {
		fmt.Fprintf(s.out, "finance 1.4.2 starting (banner line %d)\n", i+1)
	}
	s.out.Flush()
	time.Sleep(*slowStart)
	s.serve(os.Stdin)
	if *ignoreEOF {
		fmt.Fprintln(os.Stderr, "finance: stdin closed, staying up")
		for {
			time.Sleep(time.Hour) // select{} would be a runtime deadlock
		}
	}
}

type server struct {
	era            string
	crashOn        string
	flood          int
	garbageReplies bool
	start          int // number of this start (-starts)
	exitOnInit     int
	listChanged    bool
	fault          string
	listBurst      bool
	resources      bool
	quiet          bool
	stall          bool
	fixEra         bool
	inOrder        bool // answer server/discover and initialize in arrival order

	omu sync.Mutex
	out *bufio.Writer

	mu          sync.Mutex
	initialized bool
	profile     string
	categories  map[string]string // transaction id -> category, once changed
	history     []string          // methods received, in order
	cancelled   []string          // request ids named by notifications/cancelled
	slowIDs     []string          // ids of slow calls
	slow        map[string]context.CancelFunc
	lateProbe   jsonrpc.ID // id of a probe answered late
	waiting     map[string]chan *jsonrpc.Message
	nextID      int
	listens     []jsonrpc.ID // open subscriptions/listen requests
	ledgerSubs  []jsonrpc.ID // listen requests (or, legacy, nil) subscribed to the ledger
	added       []any        // tools added by add_tool
}

func (s *server) serve(in io.Reader) {
	r := bufio.NewReader(in)
	var wg sync.WaitGroup
	for {
		line, err := r.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			var raw json.RawMessage
			msg := &jsonrpc.Message{Result: &raw}
			if jerr := json.Unmarshal(line, msg); jerr != nil {
				s.send(jsonrpc.Response{JSONRPC: jsonrpc.Version, Error: &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: jerr.Error()}})
			} else {
				if msg.Method != "" {
					s.record(msg.Method) // in arrival order
				}
				if msg.Method == "subscriptions/listen" || s.inOrder && (msg.Method == "server/discover" || msg.Method == "initialize") {
					s.message(msg) // open before what follows; answered later
				} else {
					wg.Add(1)
					go func() {
						defer wg.Done()
						s.message(msg)
					}()
				}
			}
		}
		if err != nil {
			break
		}
		if s.stall {
			wg.Wait()
			for {
				time.Sleep(time.Hour) // select{} would be a runtime deadlock
			}
		}
	}
	wg.Wait()
}

func (s *server) message(msg *jsonrpc.Message) {
	switch {
	case msg.IsResponse():
		s.mu.Lock()
		ch := s.waiting[string(msg.ID)]
		s.mu.Unlock()
		if ch != nil {
			ch <- msg
		}
		return
	case msg.IsNotification():
		s.notification(msg)
		return
	}
	if !s.quiet {
		fmt.Fprintf(os.Stderr, "finance: %s\n", msg.Method)
	}
	if s.flood > 0 {
		floodStderr(s.flood)
	}
	if s.garbageReplies {
		s.omu.Lock()
		fmt.Fprintf(s.out, "ok: %s done\n", msg.Method)
		s.out.Flush()
		s.omu.Unlock()
		return
	}
	res, rerr := s.request(msg)
	if res == nil && rerr == nil {
		return // answered later, or never
	}
	s.send(jsonrpc.Response{JSONRPC: jsonrpc.Version, ID: msg.ID, Result: res, Error: rerr})
}

func (s *server) record(method string) {
	s.mu.Lock()
	s.history = append(s.history, method)
	s.mu.Unlock()
}

// firstMethod is the method of the first message received.
func (s *server) firstMethod() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.history) == 0 {
		return ""
	}
	return s.history[0]
}

func (s *server) notification(msg *jsonrpc.Message) {
	switch msg.Method {
	case "notifications/initialized":
	case "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		_ = json.Unmarshal(msg.Params, &p)
		s.mu.Lock()
		s.cancelled = append(s.cancelled, string(p.RequestID))
		if cancel := s.slow[string(p.RequestID)]; cancel != nil {
			cancel()
		}
		s.ledgerSubs = slices.DeleteFunc(s.ledgerSubs, func(id jsonrpc.ID) bool { return string(id) == string(p.RequestID) })
		n := len(s.listens)
		s.listens = slices.DeleteFunc(s.listens, func(id jsonrpc.ID) bool { return string(id) == string(p.RequestID) })
		if len(s.listens) < n {
			fmt.Fprintf(os.Stderr, "finance: subscription %s cancelled\n", p.RequestID)
		}
		s.mu.Unlock()
	}
}

func (s *server) speaks(v string) bool {
	switch s.era {
	case "modern":
		return v == modern
	case "both":
		return v == modern || v == legacy
	}
	return v == legacy
}

func (s *server) request(msg *jsonrpc.Message) (any, *jsonrpc.Error) {
	switch msg.Method {
	case "server/discover":
		switch s.era {
		case "legacy-exit-on-probe":
			fmt.Fprintln(os.Stderr, "finance: unknown method server/discover, exiting")
			os.Exit(1)
		case "legacy-answer-exit-on-probe":
			s.send(jsonrpc.Response{JSONRPC: jsonrpc.Version, ID: msg.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "unexpected request before initialize"}})
			os.Exit(1)
		case "legacy-unsupported-probe":
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeUnsupportedVersion, Message: "unsupported protocol version",
				Data: json.RawMessage(`{"supported":["` + legacy + `"],"requested":"` + modern + `"}`)}
		case "legacy-code0-probe":
			return nil, &jsonrpc.Error{Code: 0, Message: "unknown method"}
		case "legacy-late-probe":
			s.mu.Lock()
			s.lateProbe = msg.ID
			s.mu.Unlock()
			return nil, nil
		}
		if !s.speaks(modern) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: server/discover"}
		}
		versions := []string{modern}
		if s.era == "both" {
			versions = append(versions, legacy)
		}
		return map[string]any{
			"supportedVersions": versions,
			"capabilities":      s.capabilities(),
			"instructions":      "Select a profile before reading data.",
			"ttlMs":             0, "cacheScope": "private",
			"_meta": map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "finance", "version": "1.4.2"}},
		}, nil
	case "initialize":
		if s.fixEra && s.firstMethod() == "server/discover" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeUnsupportedVersion, Message: "unsupported protocol version: the connection speaks " + modern,
				Data: json.RawMessage(`{"supported":["` + modern + `"],"requested":"` + legacy + `"}`)}
		}
		if !s.speaks(legacy) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: initialize"}
		}
		if s.start > 0 && s.start == s.exitOnInit {
			fmt.Fprintln(os.Stderr, "finance: fatal: cannot initialize, exiting")
			os.Exit(4)
		}
		s.mu.Lock()
		if s.initialized {
			s.mu.Unlock()
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "duplicate initialize received"}
		}
		s.initialized = true
		late := s.lateProbe
		s.mu.Unlock()
		if late != nil {
			s.send(jsonrpc.Response{JSONRPC: jsonrpc.Version, ID: late, Error: &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: server/discover"}})
		}
		return map[string]any{
			"protocolVersion": legacy,
			"capabilities":    s.capabilities(),
			"serverInfo":      map[string]any{"name": "finance", "version": "1.4.2"},
		}, nil
	}
	var p struct {
		Meta      map[string]json.RawMessage `json:"_meta"`
		Name      string                     `json:"name"`
		Arguments json.RawMessage            `json:"arguments"`
	}
	if len(msg.Params) > 0 {
		if err := json.Unmarshal(msg.Params, &p); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		}
	}
	if v, ok := p.Meta["io.modelcontextprotocol/protocolVersion"]; ok {
		if string(v) != `"`+modern+`"` || !s.speaks(modern) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeUnsupportedVersion, Message: "unsupported protocol version"}
		}
		if _, ok := p.Meta["io.modelcontextprotocol/clientCapabilities"]; !ok {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "missing clientCapabilities"}
		}
	} else {
		s.mu.Lock()
		ok := s.initialized
		s.mu.Unlock()
		if !ok {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "not initialized"}
		}
	}
	switch msg.Method {
	case "ping":
		return map[string]any{}, nil
	case "tools/list":
		list := tools
		if s.listChanged {
			s.mu.Lock()
			list = slices.Concat(tools, changeTools, s.added)
			s.mu.Unlock()
		}
		if s.listBurst {
			list = append(slices.Clip(list), tool("log_burst", "Send n log notifications, then tools/list_changed.", true, `"n":{"type":"integer"}`))
		}
		return map[string]any{"tools": list}, nil
	case "subscriptions/listen":
		var lp struct {
			Notifications struct {
				URIs []string `json:"resourceSubscriptions"`
			} `json:"notifications"`
		}
		_ = json.Unmarshal(msg.Params, &lp)
		if s.resources && slices.Contains(lp.Notifications.URIs, ledgerURI) {
			s.mu.Lock()
			s.ledgerSubs = append(s.ledgerSubs, msg.ID)
			s.mu.Unlock()
			s.notify("notifications/subscriptions/acknowledged", msg.ID, map[string]any{"notifications": map[string]any{"resourceSubscriptions": []string{ledgerURI}}})
			return nil, nil // answered when the subscription ends
		}
		if !s.listChanged {
			break
		}
		s.mu.Lock()
		s.listens = append(s.listens, msg.ID)
		s.mu.Unlock()
		s.notify("notifications/subscriptions/acknowledged", msg.ID, map[string]any{"notifications": map[string]any{"toolsListChanged": true}})
		return nil, nil // answered when the subscription ends
	case "tools/call":
		if p.Name == "echo" && s.fault != "" {
			s.faulty(msg.ID, p.Arguments)
			return nil, nil
		}
		if p.Name == s.crashOn {
			fmt.Fprintln(os.Stderr, "finance: fatal: database disk image is malformed")
			os.Exit(3)
		}
		return s.call(msg.ID, p.Name, p.Arguments)
	case "resources/list":
		if s.resources {
			return map[string]any{"resources": []any{map[string]any{"uri": ledgerURI, "name": "ledger"}}}, nil
		}
	case "resources/read":
		if s.resources {
			return map[string]any{"contents": []any{map[string]any{"uri": ledgerURI, "text": "balance: 12.30"}}}, nil
		}
	case "prompts/list":
		return map[string]any{"prompts": prompts}, nil
	case "prompts/get":
		var a map[string]string
		_ = json.Unmarshal(p.Arguments, &a)
		switch p.Name {
		case "monthly_review":
			return promptResult("Review my spending for " + a["month"] + "."), nil
		case "find_savings":
			return promptResult("Find three ways to save money."), nil
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown prompt: " + p.Name}
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + msg.Method}
}

var allowed = []string{"perso", "pro"}

// transactions per profile: id, label, amount, category.
var transactions = map[string][][4]string{
	"perso": {{"t1", "Supermarket", "-54.20", "groceries"}, {"t2", "Salary", "2100.00", "income"}, {"t3", "Cinema", "-12.00", "leisure"}},
	"pro":   {{"p1", "Printer ink", "-39.90", "office"}},
}

func (s *server) call(id jsonrpc.ID, name string, raw json.RawMessage) (any, *jsonrpc.Error) {
	var a struct {
		Profile  string   `json:"profile"`
		ID       string   `json:"id"`
		Category string   `json:"category"`
		Text     string   `json:"text"`
		MS       int      `json:"ms"`
		Names    []string `json:"names"`
		Bytes    int      `json:"bytes"`
		N        int      `json:"n"`
		Errors   int      `json:"errors"`
		Method   string   `json:"method"`
		// Params are ask_client's request params ({} when absent).
		Params json.RawMessage `json:"params"`
	}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &a); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "arguments: " + err.Error()}
		}
	}
	s.mu.Lock()
	profile := s.profile
	s.mu.Unlock()
	needProfile := func() any {
		if profile == "" {
			return refusal("no_profile_selected", "call select_profile first")
		}
		return nil
	}
	switch name {
	case "list_profiles":
		return text(strings.Join(allowed, ", ")), nil
	case "select_profile":
		if !slices.Contains(allowed, a.Profile) {
			return refusal("profile_not_allowed", fmt.Sprintf("profile %q is not allowed; allowed: %s", a.Profile, strings.Join(allowed, ", "))), nil
		}
		s.mu.Lock()
		s.profile = a.Profile
		s.mu.Unlock()
		return text("selected " + a.Profile), nil
	case "get_summary":
		if r := needProfile(); r != nil {
			return r, nil
		}
		return text(fmt.Sprintf("profile %s: %d transactions", profile, len(transactions[profile]))), nil
	case "list_transactions":
		if r := needProfile(); r != nil {
			return r, nil
		}
		var list []map[string]string
		s.mu.Lock()
		for _, t := range transactions[profile] {
			cat := t[3]
			if c, ok := s.categories[t[0]]; ok {
				cat = c
			}
			list = append(list, map[string]string{"id": t[0], "label": t[1], "amount": t[2], "category": cat})
		}
		s.mu.Unlock()
		return jsonText(list), nil
	case "recategorize_transaction":
		if r := needProfile(); r != nil {
			return r, nil
		}
		if !slices.ContainsFunc(transactions[profile], func(t [4]string) bool { return t[0] == a.ID }) {
			return refusal("transaction_not_found", "no transaction "+a.ID+" in profile "+profile), nil
		}
		s.mu.Lock()
		if s.categories == nil {
			s.categories = map[string]string{}
		}
		s.categories[a.ID] = a.Category
		s.mu.Unlock()
		return text(a.ID + " -> " + a.Category), nil
	case "echo":
		return text(a.Text), nil
	case "slow":
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(a.MS)*time.Millisecond)
		defer cancel()
		s.mu.Lock()
		s.slow[string(id)] = cancel
		s.slowIDs = append(s.slowIDs, string(id))
		s.mu.Unlock()
		<-ctx.Done()
		if errors.Is(ctx.Err(), context.Canceled) {
			return nil, nil // cancelled: no answer
		}
		return text("done"), nil
	case "history":
		s.mu.Lock()
		defer s.mu.Unlock()
		return jsonText(map[string]any{"methods": s.history, "cancelled": s.cancelled, "slow": s.slowIDs, "listening": len(s.listens)}), nil
	case "env":
		vars := map[string]*string{}
		if len(a.Names) == 0 { // every variable
			for _, kv := range os.Environ() {
				name, v, _ := strings.Cut(kv, "=")
				vars[name] = &v
			}
		}
		for _, n := range a.Names {
			if v, ok := os.LookupEnv(n); ok {
				vars[n] = &v
			} else {
				vars[n] = nil
			}
		}
		return jsonText(vars), nil
	case "pid":
		return jsonText(map[string]int{"pid": os.Getpid(), "ppid": os.Getppid()}), nil
	case "big":
		return text(strings.Repeat("x", a.Bytes)), nil
	case "touch_ledger":
		if s.resources {
			return s.touchLedger(), nil
		}
	case "ask_client":
		return s.ask(a.Method, a.Params), nil
	case "flood_client":
		return s.floodClient(a.Method, a.Params, a.N, a.Errors), nil
	case "log_burst":
		for i := range a.N {
			s.notify("notifications/message", nil, map[string]any{"level": "info", "data": i})
		}
		s.notify("notifications/tools/list_changed", nil, nil)
		return text("sent"), nil
	case "add_tool", "end_subscriptions":
		if s.listChanged {
			return s.change(name, a.Text), nil
		}
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown tool: " + name}
}

// invalidUTF8 is a text with bytes that are not UTF-8.
const invalidUTF8 = "caf\xe9 \xff\xfe ok"

// faulty answers an echo call with the broken line -fault names.
func (s *server) faulty(id jsonrpc.ID, args json.RawMessage) {
	var line []byte
	switch s.fault {
	case "truncate":
		b, _ := json.Marshal(jsonrpc.Response{JSONRPC: jsonrpc.Version, ID: id, Result: text(string(args))})
		line = b[:len(b)/2]
	case "invalid-utf8":
		line = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`+invalidUTF8+`"}]}}`, id)
	case "wrong-id":
		line = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s000,"result":{"content":[{"type":"text","text":"not yours"}]}}`, id)
	case "bad-value":
		line = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"x"}],"isError":tru}}`, id)
	case "batch":
		b, _ := json.Marshal(jsonrpc.Response{JSONRPC: jsonrpc.Version, ID: id, Result: text(string(args))})
		line = fmt.Appendf(nil, " \t[ %s ]", b)
	default:
		fmt.Fprintln(os.Stderr, "finance: unknown -fault", s.fault)
		os.Exit(2)
	}
	s.omu.Lock()
	defer s.omu.Unlock()
	s.out.Write(line)
	s.out.WriteByte('\n')
	s.out.Flush()
}

// ask sends a request to the client and reports its answer.
func (s *server) ask(method string, params json.RawMessage) any {
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	s.mu.Lock()
	s.nextID++
	id := fmt.Sprintf(`"srv-%d"`, s.nextID)
	ch := make(chan *jsonrpc.Message, 1)
	s.waiting[id] = ch
	s.mu.Unlock()
	s.send(jsonrpc.Request{JSONRPC: jsonrpc.Version, ID: jsonrpc.ID(id), Method: method, Params: params})
	select {
	case m := <-ch:
		if m.Error != nil {
			return jsonText(map[string]any{"error": m.Error.Code})
		}
		return jsonText(map[string]any{"result": m.Result})
	case <-time.After(time.Minute):
		return refusal("client_silent", "no answer to "+method)
	}
}

// floodClient sends n requests of method at once and returns, as JSON, how
// many were answered with an error and how many with a result, once
// errors were answered with an error or all n were answered.
func (s *server) floodClient(method string, params json.RawMessage, n, errors int) any {
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	answers := make(chan *jsonrpc.Message, n) // late answers never block
	for range n {
		s.mu.Lock()
		s.nextID++
		id := fmt.Sprintf(`"srv-%d"`, s.nextID)
		s.waiting[id] = answers
		s.mu.Unlock()
		s.send(jsonrpc.Request{JSONRPC: jsonrpc.Version, ID: jsonrpc.ID(id), Method: method, Params: params})
	}
	tally := map[string]int{"errors": 0, "results": 0}
	timeout := time.After(time.Minute)
	for tally["errors"] < errors && tally["errors"]+tally["results"] < n {
		select {
		case m := <-answers:
			if m.Error != nil {
				tally["errors"]++
			} else {
				tally["results"]++
			}
		case <-timeout:
			return refusal("client_silent", fmt.Sprintf("answers to %s: %v", method, tally))
		}
	}
	return jsonText(tally)
}

func (s *server) capabilities() map[string]any {
	caps := map[string]any{"tools": map[string]any{"listChanged": s.listChanged}, "prompts": map[string]any{}}
	if s.resources {
		caps["resources"] = map[string]any{"subscribe": true}
	}
	return caps
}

// ledgerURI is the resource of -resources.
const ledgerURI = "finance://ledger"

// touchLedger tells every subscriber the ledger changed, and says how
// many there were.
func (s *server) touchLedger() any {
	s.mu.Lock()
	subs := slices.Clone(s.ledgerSubs)
	s.mu.Unlock()
	for _, id := range subs {
		s.notify("notifications/resources/updated", id, map[string]any{"uri": ledgerURI})
	}
	return text(fmt.Sprintf("%d subscribers", len(subs)))
}

// change runs add_tool (arg: the new tool's name) or end_subscriptions
// (arg "cancel": with notifications/cancelled, else with the result).
func (s *server) change(name, arg string) any {
	s.mu.Lock()
	listens := s.listens
	if name == "end_subscriptions" {
		s.listens = nil
	} else {
		s.added = append(s.added, tool(arg, "Added at run time.", true, ``))
	}
	legacySession := s.initialized
	s.mu.Unlock()
	if name == "add_tool" && len(listens) == 0 && legacySession {
		s.notify("notifications/tools/list_changed", nil, nil)
	}
	for _, id := range listens {
		switch {
		case name == "add_tool":
			s.notify("notifications/tools/list_changed", id, nil)
		case arg == "cancel":
			s.notify("notifications/cancelled", nil, map[string]any{"requestId": id, "reason": "server shutting the subscription down"})
		default:
			s.send(jsonrpc.Response{JSONRPC: jsonrpc.Version, ID: id, Result: map[string]any{"resultType": "complete",
				"_meta": map[string]any{"io.modelcontextprotocol/subscriptionId": id}}})
		}
	}
	return text(fmt.Sprintf("%s: %d subscriptions", name, len(listens)))
}

// notify sends a notification, tagged with the subscription sub if any.
func (s *server) notify(method string, sub jsonrpc.ID, params map[string]any) {
	msg := jsonrpc.Request{JSONRPC: jsonrpc.Version, Method: method}
	if sub != nil {
		if params == nil {
			params = map[string]any{}
		}
		params["_meta"] = map[string]any{"io.modelcontextprotocol/subscriptionId": sub}
	}
	if params != nil {
		msg.Params = params
	}
	s.send(msg)
}

func (s *server) send(msg any) {
	b, _ := json.Marshal(msg)
	s.omu.Lock()
	defer s.omu.Unlock()
	s.out.Write(b)
	s.out.WriteByte('\n')
	s.out.Flush()
}

func floodStderr(n int) {
	line := "finance: debug: " + strings.Repeat("noise ", 14) + "\n"
	w := bufio.NewWriterSize(os.Stderr, 64<<10)
	for written := 0; written < n; written += len(line) {
		w.WriteString(line)
	}
	w.Flush()
}

func text(t string) any {
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": t}}}
}

func jsonText(v any) any {
	b, _ := json.Marshal(v)
	return text(string(b))
}

// refusal is a tool error the model is meant to read and correct itself
// from: a stable code and a message.
func refusal(code, message string) any {
	b, _ := json.Marshal(map[string]string{"code": code, "message": message})
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": string(b)}}, "isError": true}
}

func promptResult(t string) any {
	return map[string]any{"messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": t}}}}
}

func tool(name, description string, readOnly bool, props string) map[string]any {
	return map[string]any{
		"name": name, "description": description,
		"inputSchema": json.RawMessage(`{"type":"object","properties":{` + props + `}}`),
		"annotations": map[string]any{"readOnlyHint": readOnly},
	}
}

var tools = []any{
	tool("list_profiles", "Profiles the user allowed.", true, ``),
	tool("select_profile", "Select the profile used by every later call.", false, `"profile":{"type":"string"}`),
	tool("get_summary", "Summary of the selected profile.", true, ``),
	tool("list_transactions", "Transactions of the selected profile.", true, ``),
	tool("recategorize_transaction", "Change a transaction's category.", false, `"id":{"type":"string"},"category":{"type":"string"}`),
	tool("echo", "Echo text.", true, `"text":{"type":"string"}`),
	tool("slow", "Wait ms milliseconds, or until cancelled.", true, `"ms":{"type":"integer"}`),
	tool("history", "What the server received.", true, ``),
	tool("env", "Values of environment variables.", true, `"names":{"type":"array","items":{"type":"string"}}`),
	tool("pid", "Process ids.", true, ``),
	tool("big", "A text of n bytes.", true, `"bytes":{"type":"integer"}`),
	tool("ask_client", "Send a request to the client (legacy).", true, `"method":{"type":"string"},"params":{"type":"object"}`),
}

// changeTools are listed with -list-changed.
var changeTools = []any{
	tool("add_tool", "Add a tool named text; the tool list changes.", false, `"text":{"type":"string"}`),
	tool("end_subscriptions", "End every subscription: with notifications/cancelled when text is cancel, else with the result.", false, `"text":{"type":"string"}`),
}

var prompts = []any{
	map[string]any{"name": "monthly_review", "description": "Review a month.", "arguments": []any{map[string]any{"name": "month", "required": true}}},
	map[string]any{"name": "find_savings", "description": "Find savings."},
}

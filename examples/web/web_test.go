package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent/openai"
	"git.rickub.com/bots-garden/mini-me/agent/openai/openaitest"
	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// syncBuffer is a log sink the test reads while the host writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// need returns the environment variable test.sh sets, or fails saying how
// to run the test.
func need(t *testing.T, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		t.Fatalf("%s is not set: run examples/web/test.sh, which installs chromium and the MCP Apps servers", name)
	}
	return v
}

// TestBrowser drives the web host in headless Chromium: a question gets
// a streamed answer, an approval is clicked in the page, the real MCP Apps
// servers of npm render their views in the sandboxed iframes, a view
// calls its own server's tools through the bridge (and its app-only tool,
// which the model never sees), and a call to another server's tool is
// refused.
func TestBrowser(t *testing.T) {
	const answer1 = "The clock app above shows the server's time."
	w := startWeb(t, []config.Server{npmServer(t, "clock", "server-basic-vanillajs"), npmServer(t, "monitor", "server-system-monitor")},
		[]openaitest.Turn{
			{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "clock_get-time", Arguments: `{}`}}},
			{Text: answer1},
			{Text: "Thanks for the message from the app."},
			{ToolCalls: []openaitest.ToolCall{{ID: "c2", Name: "monitor_get-system-info", Arguments: `{}`}}},
			{Text: "Here is the system monitor."},
			{ToolCalls: []openaitest.ToolCall{{ID: "c3", Name: "clock_get-time", Arguments: `{}`}}},
			{Text: "As you wish."},
		})
	ctx, h, llm, browser, logs := w.ctx, w.h, w.llm, w.browser, w.logs

	// The page loads, and says which model and servers it has (issue 40
	// #7): each server's tools, never the app-only ones.
	var model, clockTools, monitorTools string
	require.NoError(t, chromedp.Run(browser,
		chromedp.Navigate(h.HostOrigin+"/"),
		chromedp.WaitVisible("#question", chromedp.ByID),
		chromedp.Text("#model", &model, chromedp.ByID),
		chromedp.Text(`#servers li[data-server="clock"]`, &clockTools, chromedp.ByQuery),
		chromedp.Text(`#servers li[data-server="monitor"]`, &monitorTools, chromedp.ByQuery),
	))
	assert.Regexp(t, `^test at 127\.0\.0\.1:\d+$`, model)
	assert.Equal(t, "clock: 1 tools: get-time", clockTools)
	assert.Contains(t, monitorTools, "get-system-info")
	assert.NotContains(t, monitorTools, "poll-system-stats")

	// A question gets a tool call to approve: the card says what the
	// server says the tool does, and its hints.
	var question, description, hintText string
	require.NoError(t, chromedp.Run(browser,
		chromedp.SendKeys("#question", "What time is it on the server?", chromedp.ByID),
		chromedp.Click("#send", chromedp.ByID),
		chromedp.WaitVisible(".approval button.allow", chromedp.ByQuery),
		chromedp.Text(".approval .question", &question, chromedp.ByQuery),
		chromedp.Text(".approval .description", &description, chromedp.ByQuery),
		chromedp.Text(".approval .hints", &hintText, chromedp.ByQuery),
	))
	assert.Equal(t, "Allow Get Time (get-time) of server clock?", question)
	assert.Regexp(t, `^The server says: \S`, description)
	assert.Regexp(t, `^Hints from the server: \S`, hintText)
	// The tools offered: the model never sees the app-only tool.
	first := llm.Requests()[0]
	var offered []string
	for _, tl := range first.Tools {
		offered = append(offered, tl.Name)
	}
	assert.Contains(t, offered, "clock_get-time")
	assert.Contains(t, offered, "monitor_get-system-info")
	assert.NotContains(t, offered, "monitor_poll-system-stats")

	// Approved, the call runs and the answer streams in; the card keeps
	// the answer given.
	var text, deltas, pressedAllow string
	require.NoError(t, chromedp.Run(browser,
		chromedp.Click(".approval button.allow", chromedp.ByQuery),
		chromedp.WaitVisible(".view iframe", chromedp.ByQuery),
		waitText(".msg.assistant", answer1),
		chromedp.Text(".msg.assistant", &text, chromedp.ByQuery),
		chromedp.AttributeValue(".msg.assistant", "data-deltas", &deltas, nil, chromedp.ByQuery),
		chromedp.AttributeValue(".approval", "data-answer", &pressedAllow, nil, chromedp.ByQuery),
	))
	assert.Equal(t, "allow", pressedAllow)
	assert.Equal(t, answer1, text)
	assert.Greater(t, atoi(deltas), 1, "the answer came in pieces: %s", deltas)

	// The clock's view renders the tool's result, in the inner frame of
	// its sandbox proxy, on the sandbox origin.
	clockFrame := viewFrame(t, browser, "server-time")
	iso := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)
	var shown string
	waitIn(t, browser, clockFrame, `document.getElementById("server-time").textContent`, func(v string) bool { shown = v; return iso.MatchString(v) })
	var where struct {
		Origin         string
		ParentIsTop    bool
		ParentReadable bool
	}
	evalIn(t, browser, clockFrame, `(() => { let readable = true; try { window.top.document.title } catch (e) { readable = false }
		return {origin: window.origin, parentIsTop: window.parent === window.top, parentReadable: readable} })()`, &where)
	assert.Regexp(t, `^http://127\.0\.0\.1:\d+$`, where.Origin, "the view runs on an origin of its own")
	assert.NotEqual(t, h.HostOrigin, where.Origin)
	assert.False(t, where.ParentIsTop, "behind a sandbox proxy")
	assert.False(t, where.ParentReadable, "the host page is out of reach")

	// The view's document runs under the default policy (the clock
	// declares no origins): a fetch of an undeclared origin, the host's
	// own, is blocked by connect-src. The script is the view's own (an
	// inline script, which its policy allows), not the test's world.
	evalIn(t, browser, clockFrame, fmt.Sprintf(`(() => {
		const s = document.createElement("script");
		s.textContent = 'document.addEventListener("securitypolicyviolation", (e) => { document.body.dataset.violated = e.effectiveDirective });' +
			'fetch(%q).then(() => { document.body.dataset.fetched = "yes" }, () => { document.body.dataset.fetched = "no" })';
		document.body.appendChild(s);
		return true })()`, h.HostOrigin+"/events"), nil)
	waitIn(t, browser, clockFrame, `document.body.dataset.fetched || ""`, func(v string) bool { return v != "" })
	var blocked struct{ Fetched, Violated string }
	evalIn(t, browser, clockFrame, `({fetched: document.body.dataset.fetched, violated: document.body.dataset.violated || ""})`, &blocked)
	assert.Equal(t, "no", blocked.Fetched)
	assert.Equal(t, "connect-src", blocked.Violated, "refused by the policy, not by the network")

	// The view calls its own server's tool through the bridge.
	evalIn(t, browser, clockFrame, `document.getElementById("get-time-btn").click(), true`, nil)
	waitIn(t, browser, clockFrame, `document.getElementById("server-time").textContent`, func(v string) bool { return iso.MatchString(v) && v != shown })

	// A call of another server's tool is refused, and never reaches it.
	var refused struct {
		Error struct {
			Code    int
			Message string
		}
	}
	evalIn(t, browser, clockFrame, `new Promise((resolve) => {
		window.addEventListener("message", (ev) => { if (ev.data && ev.data.id === "cross-1") resolve(ev.data) });
		window.parent.postMessage({jsonrpc: "2.0", id: "cross-1", method: "tools/call", params: {name: "poll-system-stats", arguments: {}}}, "*");
	})`, &refused)
	assert.Equal(t, -32000, refused.Error.Code)
	assert.Contains(t, refused.Error.Message, "not a tool of this view's server")

	// ui/open-link asks the user first; the user says no here, and the
	// view is refused.
	dialogs := make(chan string, 4)
	chromedp.ListenTarget(browser, func(ev any) {
		if e, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			dialogs <- e.Message
			go func() { _ = chromedp.Run(browser, page.HandleJavaScriptDialog(false)) }()
		}
	})
	evalIn(t, browser, clockFrame, `document.getElementById("open-link-btn").click(), true`, nil)
	select {
	case msg := <-dialogs:
		assert.Contains(t, msg, "https://modelcontextprotocol.io/")
	case <-ctx.Done():
		t.Fatal("no consent asked for ui/open-link")
	}
	waitUntil(t, ctx, "the refused link in the log", func() bool { return strings.Contains(logs.String(), "ui/open-link refused") })

	// The view's ui/message asks the user first (issue 35 #3): no run
	// starts until they let it through, and a second message of the view
	// is refused while the first waits.
	asked := len(llm.Requests())
	refusals := func() int { return strings.Count(logs.String(), "ui/message refused by the host") }
	evalIn(t, browser, clockFrame, `document.getElementById("send-message-btn").click(), true`, nil)
	var card string
	require.NoError(t, chromedp.Run(browser,
		chromedp.WaitVisible(".ask.app-message button.allow", chromedp.ByQuery),
		chromedp.Text(".ask.app-message p", &card, chromedp.ByQuery),
	))
	assert.Contains(t, card, "The app ui://get-time/mcp-app.html of server clock wants to send this message to the model")
	assert.Equal(t, asked, len(llm.Requests()), "a run started before the user said yes")
	evalIn(t, browser, clockFrame, `document.getElementById("send-message-btn").click(), true`, nil)
	waitUntil(t, ctx, "the second message refused", func() bool { return refusals() == 1 })
	assert.Contains(t, logs.String(), "an earlier message of this app waits for the user")
	// Let through, it starts a turn, shown as the view's message.
	var from, pressed string
	var fromUser int
	require.NoError(t, chromedp.Run(browser,
		chromedp.Click(".ask.app-message button.allow", chromedp.ByQuery),
		waitText(".msg.assistant:last-of-type", "Thanks for the message from the app."),
		chromedp.AttributeValue(".ask.app-message", "data-answer", &pressed, nil, chromedp.ByQuery),
		chromedp.AttributeValue(".msg.app", "data-from", &from, nil, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll('.msg.user[data-from^="app "]').length`, &fromUser),
	))
	assert.Equal(t, "allow", pressed)
	assert.Equal(t, "app ui://get-time/mcp-app.html of server clock", from)
	assert.Zero(t, fromUser, "a view's message shown as the user's")
	// Ignored, a message goes nowhere: the view is refused, no run starts.
	asked = len(llm.Requests())
	evalIn(t, browser, clockFrame, `document.getElementById("send-message-btn").click(), true`, nil)
	require.NoError(t, chromedp.Run(browser,
		chromedp.Poll(`document.querySelectorAll(".ask.app-message button.deny:not([disabled])").length === 1`, nil),
		chromedp.Click(".ask.app-message button.deny:not([disabled])", chromedp.ByQuery),
	))
	waitUntil(t, ctx, "the ignored message refused", func() bool { return refusals() == 2 })
	assert.Equal(t, asked, len(llm.Requests()), "an ignored message started a run")

	// The system monitor: its view polls the app-only tool through the
	// bridge.
	require.NoError(t, chromedp.Run(browser,
		chromedp.SendKeys("#question", "How is the system doing?", chromedp.ByID),
		chromedp.Click("#send", chromedp.ByID),
		chromedp.Poll(`document.querySelectorAll(".approval").length === 2`, nil),
	))
	require.NoError(t, chromedp.Run(browser,
		chromedp.Click(".approval:last-of-type button.allow", chromedp.ByQuery),
		waitText(".msg.assistant:last-of-type", "Here is the system monitor."),
	))
	monitorFrame := viewFrame(t, browser, "memory-percent")
	waitIn(t, browser, monitorFrame, `document.getElementById("memory-percent").textContent`, func(v string) bool {
		return regexp.MustCompile(`^\d+(\.\d+)?%$`).MatchString(v)
	})
	for _, r := range llm.Requests() {
		for _, tl := range r.Tools {
			assert.NotEqual(t, "monitor_poll-system-stats", tl.Name, "offered to the model")
		}
	}

	// Denied, a call shows the user it was, not the text for the model.
	var denied, pressedDeny string
	require.NoError(t, chromedp.Run(browser,
		chromedp.SendKeys("#question", "And the time again?", chromedp.ByID),
		chromedp.Click("#send", chromedp.ByID),
		chromedp.Poll(`document.querySelectorAll(".approval").length === 3`, nil),
		chromedp.Evaluate(`[...document.querySelectorAll(".approval")].pop().querySelector("button.deny").click()`, nil),
		waitText(".msg.assistant", "As you wish."),
		chromedp.Text("#tool-c3", &denied, chromedp.ByID),
		chromedp.Evaluate(`[...document.querySelectorAll(".approval")].pop().dataset.answer`, &pressedDeny),
	))
	assert.Equal(t, "deny", pressedDeny)
	assert.Equal(t, "🔧 clock_get-time: denied", denied)

	log := w.logs.String()
	assert.Contains(t, log, "method=tools/call")
	assert.Regexp(t, `apps: view request refused.*server=clock.*method=tools/call.*not a tool of this view's server`, log)
}

// web is the host of a browser test, with its scripted model, the log it
// writes, and the browser that opened it.
type web struct {
	ctx     context.Context // ends with the test's time
	h       *Host
	llm     *openaitest.Server
	logs    *syncBuffer
	browser context.Context
	calls   *appCalls
}

// startWeb serves a host of servers whose model plays turns, opens
// Chromium on it, and stops everything when the test ends.
func startWeb(t *testing.T, servers []config.Server, turns []openaitest.Turn) *web {
	chromium := need(t, "MINIME_WEB_CHROMIUM")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	w := &web{ctx: ctx, llm: &openaitest.Server{Turns: turns}, logs: &syncBuffer{}}
	llmURL := w.llm.Start()
	t.Cleanup(w.llm.Close)
	var err error
	w.h, err = NewHost(ctx, Setup{Model: &openai.Model{BaseURL: llmURL, Model: "test"}, Servers: servers,
		Log: slog.New(slog.NewTextHandler(w.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	require.NoError(t, err)
	w.calls = &appCalls{next: w.h.AppPolicy}
	w.h.AppPolicy = w.calls
	pageL, err := w.h.Listen(0)
	require.NoError(t, err)
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- w.h.Serve(sctx, pageL) }()
	t.Cleanup(func() {
		stop()
		assert.NoError(t, <-served)
	})

	// The browser outlives the test's time, so that a test that ran out
	// of it still gets its screenshot; its actions get the test's time.
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.WithoutCancel(ctx), chromedp.ExecPath(chromium), chromedp.Headless, chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.Flag("disable-quic", true), chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.WindowSize(1200, 2400)) // a profile of its own, removed once it exited
	t.Cleanup(cancelAlloc)
	browser, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(cancelBrowser)
	require.NoError(t, chromedp.Run(browser)) // starts it
	t.Cleanup(func() { screenshotOnFailure(t, browser, w.logs) })
	var cancelActions context.CancelFunc
	w.browser, cancelActions = context.WithTimeout(browser, time.Until(deadline(ctx)))
	t.Cleanup(cancelActions)
	return w
}

func deadline(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}

// npmServer is one of the MCP Apps servers of npm test.sh installed.
func npmServer(t *testing.T, name, pkg string) config.Server {
	return config.Server{Name: name, Command: "node",
		Args: []string{filepath.Join(need(t, "MINIME_WEB_NPM"), "@modelcontextprotocol", pkg, "dist", "index.js"), "--stdio"}}
}

// appCalls records the tool calls views ask for, and passes them on.
type appCalls struct {
	next permission.Checker
	mu   sync.Mutex
	seen []permission.Request
}

func (a *appCalls) Check(ctx context.Context, req permission.Request) (permission.Decision, error) {
	a.mu.Lock()
	a.seen = append(a.seen, req)
	a.mu.Unlock()
	return a.next.Check(ctx, req)
}

// of returns the calls of the views of server so far.
func (a *appCalls) of(server string) []permission.Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []permission.Request
	for _, r := range a.seen {
		if r.Server == server {
			out = append(out, r)
		}
	}
	return out
}

// waitText waits until the last element sel matches has the text want.
func waitText(sel, want string) chromedp.Action {
	q, _ := json.Marshal(sel)
	w, _ := json.Marshal(want)
	return chromedp.Poll(fmt.Sprintf(`(() => { const all = document.querySelectorAll(%s); return all.length > 0 && all[all.length-1].textContent === %s })()`, q, w), nil)
}

func atoi(s string) int {
	var n int
	_, _ = fmt.Sscan(s, &n)
	return n
}

// viewFrame finds the inner frame of a sandbox proxy (a frame two levels
// below the page) whose document has an element of that id.
func viewFrame(t *testing.T, ctx context.Context, id string) cdp.FrameID {
	t.Helper()
	var found cdp.FrameID
	waitUntil(t, ctx, "a view with #"+id, func() bool {
		var tree *page.FrameTree
		if err := chromedp.Run(ctx, chromedp.ActionFunc(func(ctx context.Context) (err error) {
			tree, err = page.GetFrameTree().Do(ctx)
			return err
		})); err != nil {
			return false
		}
		for _, proxy := range tree.ChildFrames {
			for _, inner := range proxy.ChildFrames {
				var has bool
				if eval(ctx, inner.Frame.ID, fmt.Sprintf(`document.getElementById(%q) !== null`, id), &has) == nil && has {
					found = inner.Frame.ID
					return true
				}
			}
		}
		return false
	})
	return found
}

// eval evaluates expr in an isolated world of the frame: the frame's DOM,
// not its scripts' globals. A promise is awaited.
func eval(ctx context.Context, frame cdp.FrameID, expr string, out any) error {
	return chromedp.Run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		world, err := page.CreateIsolatedWorld(frame).WithWorldName("minime-test").Do(ctx)
		if err != nil {
			return err
		}
		res, exc, err := runtime.Evaluate(expr).WithContextID(world).WithAwaitPromise(true).WithReturnByValue(true).Do(ctx)
		switch {
		case err != nil:
			return err
		case exc != nil:
			return fmt.Errorf("%s: %s", exc.Text, exc.Exception.Description)
		case out != nil:
			return json.Unmarshal(res.Value, out)
		}
		return nil
	}))
}

func evalIn(t *testing.T, ctx context.Context, frame cdp.FrameID, expr string, out any) {
	t.Helper()
	require.NoError(t, eval(ctx, frame, expr, out), "%s", expr)
}

// waitIn waits until the string expr gives in the frame satisfies ok.
func waitIn(t *testing.T, ctx context.Context, frame cdp.FrameID, expr string, ok func(string) bool) {
	t.Helper()
	var last string
	waitUntil(t, ctx, expr, func() bool {
		return eval(ctx, frame, expr, &last) == nil && ok(last)
	})
}

// waitUntil polls cond until it holds or the test's context ends.
func waitUntil(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-tick.C:
		}
	}
}

// screenshotOnFailure saves the page and the host's log when the test
// failed, in $MINIME_WEB_ARTIFACTS (default ./artifacts).
func screenshotOnFailure(t *testing.T, ctx context.Context, logs *syncBuffer) {
	if !t.Failed() {
		return
	}
	dir := os.Getenv("MINIME_WEB_ARTIFACTS")
	if dir == "" {
		dir = "artifacts"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Logf("artifacts: %v", err)
		return
	}
	var png []byte
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := chromedp.Run(sctx, chromedp.FullScreenshot(&png, 100)); err != nil {
		t.Logf("screenshot: %v", err)
	} else {
		_ = os.WriteFile(filepath.Join(dir, t.Name()+".png"), png, 0o644)
	}
	_ = os.WriteFile(filepath.Join(dir, t.Name()+".log"), []byte(logs.String()), 0o644)
	t.Logf("artifacts saved in %s", dir)
}

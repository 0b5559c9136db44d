// Web is a browser chat host built on mini-me: a page on 127.0.0.1 where
// you talk to a model that calls MCP tools, approve each call in the page,
// and see MCP Apps (servers' interactive views, SEP-1865) rendered beside
// the conversation.
//
//	go run .                       # the two MCP Apps example servers, through npx
//	go run . -config servers.yaml  # your own servers (mini-me's configuration format)
//
// It prints the URL to open. The model is any OpenAI-compatible endpoint
// named by environment variables (agent/modelenv: MINIME_MODEL_URL,
// OPENAI_API_KEY, OLLAMA_HOST, ...); without one the page still opens,
// and says how to start one when asked a question.
//
// What it shows:
//
//   - the conversation streamed to the page as Server-Sent Events, by
//     net/http alone; the page is plain HTML, JavaScript and CSS embedded
//     in the binary, with no build step and nothing from a CDN;
//   - approvals in the page: the permission policy defers every model
//     call (permission.ErrDeferred), the run stops with the calls pending,
//     and the page's Allow or Deny resumes it (agent.Agent.ResumeStream);
//   - MCP Apps, safely: MCP Apps is declared to the servers (apps.Declare);
//     a tool whose visibility keeps it from the model is never offered to
//     it; each view runs in a sandbox proxy served from an origin of its
//     own (a port of 127.0.0.1 that no other view shares and that serves
//     nothing but that view), under the Content-Security-Policy the SDK
//     builds from the view's metadata (apps.ContentSecurityPolicyFor),
//     bound to a single-use URL; the page only relays the view's messages
//     to Go, where an apps.Bridge checks every one (a view calls only the
//     app-visible tools of its own server, reads only its own server's
//     resources, opens a link only once the user said yes, and sends the
//     model a message only once the user let it through).
//
// A view's tools/call goes through its own policy: this example allows a
// view the tools its bridge lets through (app-visible tools of its own
// server); a host with approvals for views would plug its approver there.
//
// What a hostile view, page or server can do. A server's view is the
// server's HTML, in a frame without access to the page: it cannot read the
// page or another view (each view has its own origin, so
// top.frames[i].frames[0] is out of reach, with its storage), nor make
// another view's proxy relay anything (a proxy, and the page, take only
// trusted messages from their own child frame and its origin). Its
// document reaches only the public origins it declared, and its own
// server's network besides (loopback for a server started as a command):
// not the user's model server, router or 169.254.169.254 when the server
// is remote. It can show anything in its frame (labelled with its server
// and URI), call its own server's app-visible tools, give the model
// context (ui/update-model-context, marked as data from the app), and ask:
// a ui/message reaches the model only if the user lets it through on a
// card naming the app, one question per view at a time, and is shown as
// the app's message, never the user's; a link opens only if the user
// says yes. Another site open in the browser cannot frame the page to
// clickjack its Allow buttons (X-Frame-Options DENY, frame-ancestors
// 'none'), send it a POST (Origin checked), or reach it through a DNS
// name of its own (Host checked). A server's tool runs only once the user
// allowed the model's call, and its output reaches the model as data. Not
// covered: other programs of the user's machine, which can reach the page
// on 127.0.0.1 as the browser does.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/modelenv"
	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/mcp/apps"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// defaultServers are the two MCP Apps servers of the ext-apps examples.
var defaultServers = []config.Server{
	{Name: "clock", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-basic-vanillajs@2.0.3", "--stdio"}},
	{Name: "monitor", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-system-monitor@2.0.3", "--stdio"}},
}

func main() {
	cfgPath := flag.String("config", "", "a mini-me configuration file naming the MCP servers (default: the two MCP Apps examples, through npx)")
	port := flag.Int("port", 0, "the page's port on 127.0.0.1 (0: any free one); each view takes another")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *cfgPath, *port); err != nil {
		fmt.Fprintln(os.Stderr, "web:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfgPath string, port int) error {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	servers := defaultServers
	if cfgPath != "" {
		cfg, err := config.Load(cfgPath)
		if err != nil {
			return err
		}
		servers = cfg.Servers
	}
	var model agent.Model
	found, err := modelenv.Find(ctx, os.Getenv)
	if err != nil {
		// The page still opens, and says why it cannot answer.
		help := modelenv.Help(err)
		fmt.Fprintln(os.Stderr, help)
		model = noModel{help}
	} else {
		model = found
	}
	h, err := NewHost(ctx, Setup{Model: model, Servers: servers, Log: log})
	if err != nil {
		return err
	}
	page, err := h.Listen(port)
	if err != nil {
		return err
	}
	fmt.Printf("mini-me web host: open http://%s/ (each view is sandboxed on a port of its own)\n", page.Addr())
	return h.Serve(ctx, page)
}

// noModel answers every question with how to start a model.
type noModel struct{ help string }

func (m noModel) Chat(context.Context, *agent.ChatRequest, func(agent.Delta)) (*agent.Reply, error) {
	return nil, errors.New(m.help)
}

// Setup is what a Host is made of.
type Setup struct {
	Model   agent.Model
	Servers []config.Server
	Log     *slog.Logger
}

// NewHost discovers the servers, declaring MCP Apps to them, and makes
// the host; Serve runs it.
func NewHost(ctx context.Context, s Setup) (*Host, error) {
	var opts toolset.Options
	opts.Logger = s.Log
	apps.Declare(&opts.Client)
	ts, err := toolset.Discover(ctx, s.Servers, &opts)
	if err != nil {
		return nil, err
	}
	for _, w := range ts.Warnings() {
		s.Log.Warn("web: " + w.String())
	}
	deferAll := permission.ApproverFunc(func(context.Context, permission.Request) (permission.Decision, error) {
		return permission.Decision{}, permission.ErrDeferred // the page answers, and the run resumes
	})
	reach := map[string]apps.Networks{}
	for _, srv := range s.Servers {
		reach[srv.Name] = apps.ServerNetworks(srv.URL) // "" for a command: this machine
	}
	h := &Host{
		Agent:     &agent.Agent{Model: s.Model, Tools: ts, Policy: permission.NewPolicy(deferAll)},
		Reach:     reach,
		Servers:   toolsetApps{ts},
		AppPolicy: permission.NewPolicy(permission.AllowAll{}),
		Log:       s.Log,
		ts:        ts,
		about:     describe(s.Model, ts),
	}
	h.init()
	return h, nil
}

// toolsetApps gives views their server in the Toolset.
type toolsetApps struct{ ts *toolset.Toolset }

func (t toolsetApps) App(server string) (apps.Server, bool) {
	s, ok := t.ts.AppServer(server)
	if !ok {
		return nil, false
	}
	return s, true
}

// Listen opens the page's listener on 127.0.0.1 (on port, 0 for any) and
// sets the host's origin. Each view opens its own (see sandbox).
func (h *Host) Listen(port int) (net.Listener, error) {
	page, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return nil, err
	}
	h.HostOrigin = "http://" + page.Addr().String()
	return page, nil
}

// Serve serves the page and the views until ctx ends, then closes
// everything.
func (h *Host) Serve(ctx context.Context, page net.Listener) error {
	ps := &http.Server{Handler: h.Handler(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- ps.Serve(page) }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h.Close(sctx)
	_ = ps.Shutdown(sctx)
	if cerr := h.ts.Shutdown(sctx); err == nil {
		err = cerr
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

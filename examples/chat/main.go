// Chat is an interactive agent in the terminal: you type, the model
// answers as it streams, and you approve its tool calls as they come.
//
//	go run ./examples/chat                        # the demo's MCP servers
//	go run ./examples/chat -config mini-me.yaml   # your own servers
//
// Without -config it starts the same two demo servers as the quickstart,
// in-process on 127.0.0.1. It prints every tool with its server, then reads
// your questions. Commands: /tools, /servers, /clear (forget the
// conversation), /quit. Ctrl-C stops the answer being written, or the
// question being asked, and keeps the session; Ctrl-D or /quit leaves.
//
// The model comes from the environment, as for the quickstart (see
// examples/quickstart): MINIME_MODEL_URL and MINIME_MODEL, OPENAI_API_KEY,
// OLLAMA_HOST or Docker Model Runner. Without one, it says how to start
// one and exits with status 0.
//
// A server configured with auth.type oauth is signed in to on first use:
// the chat prints the authorization URL, you open it in a browser, and the
// redirect comes back to a loopback port the chat listens on
// (oauth.Terminal). Tokens are kept in tokens.json under the user's
// configuration directory (mini-me/, mode 0600), so the next run signs in
// only when they can no longer be refreshed.
//
// The chat and the approval questions both read the terminal. One
// goroutine reads its lines, and the chat hands a line to the approver
// (permission.Terminal, reading from a channel) only while a question is
// waiting for it, so the two never compete for the same line.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/modelenv"
	"git.rickub.com/bots-garden/mini-me/agent/render"
	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/examples/internal/demo"
	"git.rickub.com/bots-garden/mini-me/examples/internal/host"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/oauth"
	"git.rickub.com/bots-garden/mini-me/permission"
)

func main() {
	configPath := flag.String("config", "", "configuration file listing the MCP servers (default: the demo's servers)")
	flag.Parse()
	if err := run(*configPath, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "chat:", err)
		os.Exit(1)
	}
}

func run(configPath string, stdin io.Reader, out io.Writer) error {
	cfg, tools, stop, err := discover(configPath)
	if err != nil {
		return err
	}
	defer stop()
	fmt.Fprintf(out, "mini-me chat (%s)\n\n", cfg.File)
	render.Banner(out, tools)

	model, err := modelenv.Find(context.Background(), os.Getenv)
	if err != nil {
		fmt.Fprintf(out, "\n%s\n", modelenv.Help(err))
		return nil
	}
	render.Model(out, model)
	fmt.Fprintln(out, "\nType a question. /tools, /servers, /clear, /quit; Ctrl-C stops an answer.")

	c := &chat{out: out, lines: host.ReadLines(stdin), feed: make(chan string), tools: tools}
	c.agent = &agent.Agent{
		Model:  model,
		Tools:  tools,
		Policy: permission.NewPolicy(c.approver(), agent.PolicyOptions(cfg)...),
	}
	c.interrupts = make(chan os.Signal, 1)
	signal.Notify(c.interrupts, os.Interrupt)
	defer signal.Stop(c.interrupts)
	c.loop()
	return nil
}

// discover reads the configuration at path (config.Load) and discovers its
// servers' tools (mcp.Discover), giving them a minute. When path is empty,
// it starts the demo's servers instead and discovers theirs. stop closes
// the tools, and ends the demo's servers.
func discover(path string) (*config.Config, *mcp.Toolset, func(), error) {
	if path == "" {
		servers, err := demo.Discover(context.Background())
		if err != nil {
			return nil, nil, nil, err
		}
		return servers.Config, servers.Tools, servers.Close, nil
	}
	cfg, err := config.Load(path)
	if err != nil {
		return nil, nil, nil, err
	}
	opts := &mcp.ToolsetOptions{Browser: oauth.Terminal{Out: os.Stderr}}
	limit := time.Minute
	if usesOAuth(cfg) {
		// A sign-in takes a person: give it the terminal helper's time.
		limit = oauth.DefaultTerminalTimeout + time.Minute
		opts.Client.ConnectTimeout = oauth.DefaultTerminalTimeout + 30*time.Second
		store, err := tokenStore()
		if err != nil {
			return nil, nil, nil, err
		}
		opts.TokenStore = store
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	tools, err := mcp.Discover(ctx, cfg.Servers, opts)
	if err != nil {
		return nil, nil, nil, err
	}
	return cfg, tools, func() { host.CloseTools(tools) }, nil
}

func usesOAuth(cfg *config.Config) bool {
	return slices.ContainsFunc(cfg.Servers, func(s config.Server) bool { return s.Auth != nil && s.Auth.Type == config.AuthOAuth })
}

// tokenStore keeps OAuth tokens in the user's configuration directory.
func tokenStore() (*oauth.FileStore, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return nil, fmt.Errorf("token store: %w", err)
	}
	dir = filepath.Join(dir, "mini-me")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("token store: %w", err)
	}
	return &oauth.FileStore{Path: filepath.Join(dir, "tokens.json")}, nil
}

// chat is one session: the conversation so far and the terminal.
type chat struct {
	out        io.Writer
	lines      <-chan string // the terminal's lines; closed at its end
	feed       chan string   // lines handed to the approver; closed at the terminal's end
	asking     atomic.Int32  // approval questions waiting for an answer
	interrupts chan os.Signal

	agent        *agent.Agent
	tools        *mcp.Toolset
	conversation []agent.Message
}

// approver asks at the terminal, through a permission.Terminal that reads
// the lines the chat hands it.
func (c *chat) approver() permission.Approver {
	term := permission.NewTerminal(&lineReader{lines: c.feed}, c.out)
	return permission.ApproverFunc(func(ctx context.Context, req permission.Request) (permission.Decision, error) {
		c.asking.Add(1)
		defer c.asking.Add(-1)
		return term.Approve(ctx, req)
	})
}

// loop reads questions and commands until /quit or the end of the input.
func (c *chat) loop() {
	for {
		fmt.Fprint(c.out, "\nyou> ")
		var line string
		select {
		case l, ok := <-c.lines:
			if !ok {
				fmt.Fprintln(c.out, "\nbye")
				return
			}
			line = strings.TrimSpace(l)
		case <-c.interrupts:
			fmt.Fprint(c.out, "\n(nothing to stop: /quit or Ctrl-D leaves)")
			continue
		}
		switch {
		case line == "":
		case line == "/quit" || line == "/exit":
			fmt.Fprintln(c.out, "bye")
			return
		case strings.HasPrefix(line, "/"):
			c.command(line)
		default:
			if !c.turn(line) {
				fmt.Fprintln(c.out, "\nbye")
				return
			}
		}
	}
}

func (c *chat) command(line string) {
	switch line {
	case "/tools":
		render.Tools(c.out, c.tools)
	case "/servers":
		render.Servers(c.out, c.tools)
	case "/clear":
		c.conversation = nil
		fmt.Fprintln(c.out, "(conversation cleared)")
	default:
		fmt.Fprintln(c.out, "commands: /tools, /servers, /clear, /quit")
	}
}

// turn runs the agent on one question, streaming its answer, until it
// answers or Ctrl-C stops it. It reports false when the input ended.
func (c *chat) turn(question string) (inputOpen bool) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	msgs := append(slices.Clip(c.conversation), agent.Message{Role: agent.RoleUser, Content: question})
	done := make(chan struct{})
	var res agent.Result
	var err error
	fmt.Fprintln(c.out)
	go func() {
		defer close(done)
		res, err = c.agent.RunStream(ctx, msgs, render.Events(c.out))
	}()
	lines := c.lines
	for running := true; running; {
		select {
		case <-done:
			running = false
		case <-c.interrupts:
			cancel()
		case line, ok := <-lines:
			if !ok {
				lines = nil
				close(c.feed) // questions asked from now on are denied
				continue
			}
			c.answer(line)
		}
	}
	c.conversation = res.Messages // whatever happened, it is consistent
	switch {
	case ctx.Err() != nil:
		fmt.Fprintln(c.out, "\n(stopped)")
	case err != nil:
		fmt.Fprintf(c.out, "\n(the run stopped: %s)\n", render.Clean(err.Error(), 300))
	}
	return lines != nil
}

// answer hands a line typed during a turn to the question waiting for it.
// A line typed while no question waits is dropped: it would otherwise
// answer a question not yet asked.
func (c *chat) answer(line string) {
	if c.asking.Load() > 0 {
		select {
		case c.feed <- line + "\n":
			return
		case <-time.After(time.Second):
		}
	}
	fmt.Fprintln(c.out, "(busy: that line was not used; wait for the answer, or press Ctrl-C to stop it)")
}

// lineReader is an io.Reader of the lines sent on a channel; the channel's
// closing is the end of the input.
type lineReader struct {
	lines <-chan string
	rest  string
}

func (r *lineReader) Read(p []byte) (int, error) {
	if r.rest == "" {
		line, ok := <-r.lines
		if !ok {
			return 0, io.EOF
		}
		r.rest = line
	}
	n := copy(p, r.rest)
	r.rest = r.rest[n:]
	return n, nil
}

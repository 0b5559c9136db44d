// Chat is an agent in the terminal, on your own MCP servers: you type, the
// model answers as it streams, and you approve its tool calls as they come.
//
//	go install git.rickub.com/bots-garden/mini-me/examples/chat@latest
//	chat                        # ./mini-me.yaml, else mini-me/mini-me.yaml in your configuration directory
//	chat -config servers.yaml   # another file
//	chat -log servers.log       # the servers' logs, to a file
//
// The configuration is the file -config names; without it, mini-me.yaml in
// the current directory, else mini-me/mini-me.yaml under the user's
// configuration directory (os.UserConfigDir: ~/.config on Linux). With
// none of them, the chat has no tools, and says so. It prints the servers
// and their tools, then reads your questions. After each answer a status
// line shows the model, the servers and the tokens used.
//
// Commands (chat -help lists them with the flags): /tools, /servers,
// /prompts and /resources (the servers' prompts and resources: a prompt
// runs as /<name> [args], and @<uri> in a question attaches a resource),
// /call NAME {json} (call a tool yourself, through the same approval),
// /status, /history (the questions asked), !N (ask question N again),
// /clear (forget the conversation and the approvals given for the
// session), /help, /quit. Ctrl-C stops the answer being written, or the
// question being asked, and keeps the session; Ctrl-D or /quit leaves.
//
// The model comes from the environment (agent/modelenv): MINIME_MODEL_URL
// and MINIME_MODEL, OPENAI_API_KEY, OLLAMA_HOST or Docker Model Runner.
// Without one, the chat says how to start one and goes on without it: the
// servers are connected, and every command but a question or a prompt
// works.
//
// A server configured with auth.type oauth is signed in to on first use:
// the chat prints the authorization URL, you open it in a browser, and the
// redirect comes back to a loopback port the chat listens on
// (oauth.Terminal). Tokens are kept in tokens.json beside the user's
// mini-me.yaml (mode 0600), so the next run signs in only when they can no
// longer be refreshed.
//
// The chat and the approval questions read the same terminal, taking turns
// (permission.NewLines and permission.NewSharedTerminal), so a question
// withdrawn by Ctrl-C never swallows the next line. Nothing else writes
// there: the servers' logs (a stdio server's stderr, reconnections,
// servers skipped) go to the file -log names, appended to, and without it
// nowhere, so they never break into a question or an answer.
//
// /call checks its arguments against the tool's input schema
// (agent.CheckArguments) before it asks you anything: arguments the tool
// would refuse are told at once, every problem listed.
//
// Servers may ask the chat for things, and each goes through you: a
// completion by the chat's model (sampling) is asked about like a tool
// call (y shows you the answer before it goes back, e edits the request
// or the answer, a allows that server's sampling for the session); a form
// is filled in field by field; a URL is shown with its site, never opened
// for you. /roots lists the folders servers may see (at first, the
// configuration's mcp.roots), /roots add <folder> shares one, /roots
// remove <N> stops sharing it; a server with a roots key of its own sees
// those instead.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/modelenv"
	"git.rickub.com/bots-garden/mini-me/agent/openai"
	"git.rickub.com/bots-garden/mini-me/agent/render"
	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/oauth"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// configName is the configuration file looked for.
const configName = "mini-me.yaml"

// commands is the help of the chat's commands.
const commands = `commands:
  a question           asked to the model (@<uri> in it attaches a resource)
  /tools               the tools, by server
  /servers             the servers, their era and state
  /prompts             the servers' prompts; /<prompt> [args] runs one
  /resources           the servers' resources and templates
  /roots               the folders servers may see; /roots add <folder>, /roots remove <N>
  /call NAME {json}    call tool NAME with the JSON object of arguments (checked against
                       its schema first), through the approval
  /status              the model, the servers and the tokens used
  /history             the questions asked; !N asks question N again
  /transcript          the conversation so far, the model's reasoning apart
  /clear               forget the conversation and the approvals given for the session
  /help                this list
  /quit                leave (Ctrl-D too); Ctrl-C stops an answer`

func main() {
	configPath := flag.String("config", "", "the configuration file listing the MCP servers (default: ./"+configName+", else mini-me/"+configName+" in your configuration directory)")
	logPath := flag.String("log", "", "the file the servers' logs are appended to (a stdio server's stderr included); without it they are dropped, never shown in the terminal")
	flag.Usage = func() {
		w := flag.CommandLine.Output()
		fmt.Fprintf(w, "usage: chat [-config FILE] [-log FILE]\n\nAn agent in the terminal, on the MCP servers of a configuration. The model comes from\nMINIME_MODEL_URL and MINIME_MODEL, OPENAI_API_KEY, OLLAMA_HOST or Docker Model Runner;\nwithout one, every command but a question works.\n\nflags:\n")
		flag.PrintDefaults()
		fmt.Fprintf(w, "\n%s\n", commands)
	}
	flag.Parse()
	if err := run(*configPath, *logPath, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "chat:", err)
		os.Exit(1)
	}
}

func run(configPath, logPath string, stdin io.Reader, out io.Writer) error {
	cfg, err := findConfig(configPath)
	if err != nil {
		return err
	}
	logger, closeLog, err := serverLog(logPath)
	if err != nil {
		return err
	}
	defer closeLog()
	lines := permission.NewLines(stdin)
	defer lines.Close()
	term := permission.NewSharedTerminal(lines, out)
	h := newHost(term, cfg)
	tools, err := discover(cfg, h, logger)
	if err != nil {
		return err
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = tools.Shutdown(ctx)
	}()
	if cfg.File == "" {
		fmt.Fprintf(out, "mini-me chat (no %s found: no tools; see -help)\n\n", configName)
	} else {
		fmt.Fprintf(out, "mini-me chat (%s)\n\n", cfg.File)
	}
	render.Banner(out, tools)

	c := &chat{out: out, lines: lines, cfg: cfg, tools: tools, approver: term, host: h}
	model, err := modelenv.Find(context.Background(), os.Getenv)
	if err != nil {
		fmt.Fprintf(out, "\n%s\n", modelenv.Help(err))
		fmt.Fprintln(out, "\nNo model: a question cannot be answered, but /tools, /servers, /prompts, /resources, /roots and /call NAME {json} work; /help lists the commands.")
	} else {
		c.model = model
		fmt.Fprintln(out)
		render.Model(out, model)
		fmt.Fprintln(out, "\nType a question; /help lists the commands; @<uri> attaches a resource; Ctrl-C stops an answer.")
	}
	c.newPolicy()
	c.interrupts = make(chan os.Signal, 1)
	signal.Notify(c.interrupts, os.Interrupt)
	defer signal.Stop(c.interrupts)
	c.loop()
	return nil
}

// findConfig reads the configuration at path, or, when path is empty, the
// first of ./mini-me.yaml and mini-me/mini-me.yaml under the user's
// configuration directory that exists. With none, it is an empty
// configuration whose File is "".
func findConfig(path string) (*config.Config, error) {
	if path != "" {
		return config.Load(path)
	}
	candidates := []string{configName}
	if dir, err := os.UserConfigDir(); err == nil {
		candidates = append(candidates, filepath.Join(dir, "mini-me", configName))
	}
	for _, p := range candidates {
		cfg, err := config.Load(p)
		if !errors.Is(err, fs.ErrNotExist) {
			return cfg, err
		}
	}
	return &config.Config{}, nil
}

// serverLog is the servers' logger: a text log appended to the file at
// path, or nil (nothing logged) when path is empty. The terminal is never
// the log: a line there would land in the middle of a question.
func serverLog(path string) (*slog.Logger, func(), error) {
	if path == "" {
		return nil, func() {}, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("log: %w", err)
	}
	return slog.New(slog.NewTextHandler(f, nil)), func() { _ = f.Close() }, nil
}

// discover discovers the servers' tools (toolset.Discover), their requests
// answered by h and their logs sent to logger, giving them a minute, or
// the time a person takes to sign in when a server uses OAuth.
func discover(cfg *config.Config, h *host, logger *slog.Logger) (*toolset.Toolset, error) {
	opts := &toolset.Options{Client: h.options(), Roots: h.serverRoots, Browser: oauth.Terminal{Out: os.Stderr}}
	opts.Logger = logger
	limit := time.Minute
	if slices.ContainsFunc(cfg.Servers, func(s config.Server) bool { return s.Auth != nil && s.Auth.Type == config.AuthOAuth }) {
		limit = oauth.DefaultTerminalTimeout + time.Minute
		opts.Client.ConnectTimeout = oauth.DefaultTerminalTimeout + 30*time.Second
		store, err := tokenStore()
		if err != nil {
			return nil, err
		}
		opts.TokenStore = store
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	return toolset.Discover(ctx, cfg.Servers, opts)
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
	lines      *permission.Lines // the terminal, shared with the approver
	approver   permission.Approver
	host       *host              // answers the servers' requests
	policy     *permission.Policy // the agent's, and /call's
	interrupts chan os.Signal

	cfg          *config.Config
	tools        *toolset.Toolset
	model        *openai.Model // nil without a model
	agent        *agent.Agent
	conversation []agent.Message
	history      []string      // the questions asked, in order
	tokens       int           // used by the session
	last         *agent.Result // the last run's
}

// loop reads questions and commands until /quit or the end of the input.
func (c *chat) loop() {
	for {
		fmt.Fprint(c.out, "\nyou> ")
		line, err := c.next()
		switch {
		case errors.Is(err, context.Canceled):
			fmt.Fprint(c.out, "\n(nothing to stop: /quit or Ctrl-D leaves)")
			continue
		case err != nil:
			fmt.Fprintln(c.out, "\nbye")
			return
		}
		line = strings.TrimSpace(line)
		if n, ok := strings.CutPrefix(line, "!"); ok {
			i, err := strconv.Atoi(n)
			if err != nil || i < 1 || i > len(c.history) {
				fmt.Fprintf(c.out, "(no question %s: /history lists them)\n", render.Clean(n, 20))
				continue
			}
			line = c.history[i-1]
			fmt.Fprintf(c.out, "you> %s\n", render.Clean(line, 200))
		}
		switch {
		case line == "":
		case line == "/quit" || line == "/exit":
			fmt.Fprintln(c.out, "bye")
			return
		case strings.HasPrefix(line, "/"):
			c.command(line)
		default:
			m, err := c.question(line)
			if err != nil {
				fmt.Fprintf(c.out, "(%s)\n", render.Clean(err.Error(), 300))
				continue
			}
			c.turn(line, m)
		}
	}
}

// next returns the next line the user types, or context.Canceled when
// Ctrl-C is pressed first.
func (c *chat) next() (string, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-c.interrupts:
			cancel()
		case <-ctx.Done():
		}
	}()
	return c.lines.Next(ctx)
}

func (c *chat) command(line string) {
	if rest, ok := strings.CutPrefix(line, "/call"); ok && (rest == "" || rest[0] == ' ') {
		c.call(strings.TrimSpace(rest))
		return
	}
	switch line {
	case "/help":
		fmt.Fprintln(c.out, commands)
	case "/tools":
		render.Tools(c.out, c.tools)
	case "/servers":
		render.Servers(c.out, c.tools)
	case "/status":
		c.status()
	case "/history":
		if len(c.history) == 0 {
			fmt.Fprintln(c.out, "(no question yet)")
		}
		for i, q := range c.history {
			fmt.Fprintf(c.out, "%3d  %s\n", i+1, render.Clean(q, 200))
		}
	case "/transcript":
		render.Transcript(c.out, c.conversation, 300)
	case "/clear":
		c.conversation = nil
		c.newPolicy()
		fmt.Fprintln(c.out, "(conversation cleared, and the approvals given for the session)")
	default:
		if rest, ok := strings.CutPrefix(line, "/roots"); ok && (rest == "" || rest[0] == ' ') {
			c.rootsCommand(rest)
			return
		}
		if !c.promptCommand(line) {
			fmt.Fprintf(c.out, "(no command %s)\n%s\n", render.Clean(line, 40), commands)
		}
	}
}

// newPolicy starts the session's approvals afresh: the agent's tool calls,
// /call and the servers' sampling requests are asked about under one
// policy.
func (c *chat) newPolicy() {
	c.policy = agent.PolicyFromConfig(c.cfg, c.approver)
	if c.agent == nil {
		c.agent = &agent.Agent{Tools: c.tools}
		if c.model != nil { // a nil *OpenAI would be a Model that is not nil
			c.agent.Model = c.model
		}
	}
	c.agent.Policy = c.policy
	c.host.answerWith(c.model, c.policy, c.cfg.Servers) // a nil model refuses sampling
}

// notifyTimeout bounds telling the servers the roots changed.
const notifyTimeout = 5 * time.Second

// status prints one line: the model, the servers connected and the
// tokens used.
func (c *chat) status() {
	var up []string
	for _, s := range c.tools.Servers() {
		if s.Connected {
			up = append(up, s.Name)
		}
	}
	servers := "no server"
	if len(up) > 0 {
		servers = fmt.Sprintf("%s (%d tools)", strings.Join(up, ", "), len(c.tools.Tools()))
	}
	run := ""
	if c.last != nil {
		run = fmt.Sprintf(" · last answer: %s, %d tokens", plural(c.last.Turns, "turn"), c.last.Usage.TotalTokens)
	}
	model := "no model"
	if c.model != nil {
		model = render.Clean(c.model.Model, 60)
	}
	fmt.Fprintf(c.out, "[%s · %s%s · session: %d tokens]\n", model, servers, run, c.tokens)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// turn runs the agent on the next messages (the question's, or a
// prompt's), streaming its answer, until it answers or Ctrl-C stops it;
// the history keeps the line typed.
func (c *chat) turn(line string, next ...agent.Message) {
	c.history = append(c.history, line)
	if c.model == nil {
		fmt.Fprintln(c.out, "(no model: not sent; set MINIME_MODEL_URL and MINIME_MODEL, OPENAI_API_KEY or OLLAMA_HOST, and start the chat again)")
		return
	}
	msgs := append(slices.Clip(c.conversation), next...)
	var res agent.Result
	var err error
	fmt.Fprintln(c.out)
	stopped := c.interruptible(func(ctx context.Context) {
		res, err = c.agent.RunStream(ctx, msgs, render.Events(c.out))
	})
	c.conversation = res.Messages // whatever happened, it is consistent
	c.last = &res
	c.tokens += res.Usage.TotalTokens
	switch {
	case stopped:
		fmt.Fprintln(c.out, "\n(stopped)")
	case err != nil:
		fmt.Fprintf(c.out, "\n(the run stopped: %s)\n", render.Clean(err.Error(), 300))
	}
	c.status()
}

// interruptible runs f with a context that Ctrl-C cancels, and reports
// whether it did.
func (c *chat) interruptible(f func(ctx context.Context)) bool {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(ctx)
	}()
	for {
		select {
		case <-done:
			return ctx.Err() != nil
		case <-c.interrupts:
			cancel()
		}
	}
}

// call runs "/call NAME {json}": the tool NAME with the JSON object of
// arguments, checked against the tool's input schema, then asked about as
// the agent asks (the policy, and the approval prompt when it asks), the
// steps of a task-backed tool and its result printed. It needs no model.
func (c *chat) call(arg string) {
	name, args, _ := strings.Cut(arg, " ")
	if name == "" {
		fmt.Fprintln(c.out, "(usage: /call NAME {json}, as in /call text_count {\"text\":\"hello\"}; /tools lists the names)")
		return
	}
	st, ok := c.tools.Tool(name)
	if !ok {
		fmt.Fprintf(c.out, "(no tool %s: /tools lists them)\n", render.Clean(name, 60))
		return
	}
	raw := json.RawMessage(cmp.Or(strings.TrimSpace(args), "{}"))
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		fmt.Fprintf(c.out, "(the arguments of /call %s are not a JSON object: %s)\n", st.Name, render.Clean(string(raw), 80))
		return
	}
	raw, err := agent.CheckArguments(st, raw)
	if err != nil { // refused before anyone is asked to approve it
		fmt.Fprintf(c.out, "(%s)\n", render.Clean(err.Error(), 1000))
		return
	}
	var res *toolset.ToolResult
	var denied string
	stopped := c.interruptible(func(ctx context.Context) {
		d, cerr := c.policy.Check(ctx, agent.PermissionRequest(st, raw))
		if cerr != nil || !d.Allowed() {
			denied = d.String()
			return
		}
		// A task-backed tool's steps are printed as a run prints them.
		events := render.Events(c.out)
		ctx = mcp.WithTaskObserver(ctx, func(s mcp.TaskStatus) {
			events(&agent.ToolStatus{Call: agent.ToolCall{Name: st.Name, Arguments: string(raw)}, Task: s})
		})
		res, err = c.tools.Call(ctx, st.Name, raw)
	})
	switch {
	case stopped:
		fmt.Fprintln(c.out, "(stopped)")
	case denied != "":
		fmt.Fprintf(c.out, "← not run (%s)\n", render.Clean(denied, 200))
	case err != nil:
		fmt.Fprintf(c.out, "← failed: %s\n", render.Clean(err.Error(), 300))
	case res.IsError():
		fmt.Fprintf(c.out, "← tool error: %s\n", render.CleanText(res.Text(), 2000))
	default:
		fmt.Fprintf(c.out, "← ok %s:\n%s\n", st.Name, render.CleanText(res.Text(), 4000))
	}
}

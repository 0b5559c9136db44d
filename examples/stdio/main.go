// Stdio shows an MCP server run as a local subprocess, spoken to over its
// stdin and stdout, and driven by the agent: a personal-finance ledger with
// profiles, read tools and one tool that writes.
//
//	go run ./examples/stdio
//	go run ./examples/stdio 'Which category did I spend the most on?'
//
// The program is its own server: started with --serve-mcp, it serves the
// ledger on stdin and stdout. Otherwise it lists, in its configuration, a
// server whose command is its own executable (os.Executable) with that
// flag, so nothing needs building first. The configuration puts the
// server in auto mode, so its reads run without asking, while its
// destructive tool (recategorize, which overwrites a category) is still
// asked at the terminal (confirmDestructive, on by default). A tool
// without annotations would run without asking too: it is not declared
// destructive (the banner shows it as destructive*). It also
// marks the server "egress: local": personal finances stay on this
// machine, and with a hosted model the agent withholds the ledger's tools
// and says so.
//
// The model comes from the environment, as for the quickstart
// (agent/modelenv). Without one, the program says how to start one,
// then makes the calls itself, through the same permission policy: it
// selects a profile, sums its spending, and asks you before it changes a
// transaction. It exits with status 0 in both cases.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"strings"
	"time"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/modelenv"
	"git.rickub.com/bots-garden/mini-me/agent/render"
	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/examples/demo"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// serveFlag makes the program the MCP server.
const serveFlag = "--serve-mcp"

// configTemplate lists the program itself as a stdio server; %q is its
// path, quoted (Go's quoting is valid YAML).
const configTemplate = `
mcp:
  servers:
    - name: finance
      command: %q
      args: [%q]
      permissions: auto   # reads run without asking; destructive tools are still asked
      egress: local       # never shown to a hosted model
`

// withoutModel is what the program does when there is no model.
var withoutModel = demo.Fallback{
	Intro: "Without a model, here are the calls made directly, through the same\npermission policy: the reads run by themselves (auto mode), the destructive\nrecategorize is asked (answer y to run it).\n\n",
	Calls: []demo.Call{
		{Tool: "finance_select_profile", Args: map[string]any{"profile": "perso"}},
		{Tool: "finance_spending_summary", Args: map[string]any{}},
		{Tool: "finance_recategorize", Args: map[string]any{"id": "t6", "category": "groceries"}},
		{Tool: "finance_spending_summary", Args: map[string]any{}},
	},
}

func main() {
	if len(os.Args) == 2 && os.Args[1] == serveFlag {
		// The server's stdout belongs to the protocol: errors go to stderr,
		// which the client forwards to its logger.
		if err := demo.Finance().ServeStdio(context.Background(), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "finance:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	question := "Select my personal profile and tell me what I spent on groceries. " +
		"Transaction t6, at the Fromagerie, was cheese: file it under groceries first."
	if len(os.Args) > 1 {
		question = strings.Join(os.Args[1:], " ")
	}
	if err := run(ctx, question, os.Stdin, os.Stdout); err != nil {
		log.SetFlags(0)
		log.Fatal("stdio: ", err) // an interrupt, too: the run's error says so
	}
}

func run(ctx context.Context, question string, stdin io.Reader, stdout io.Writer) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this program, to run it as the server: %w", err)
	}
	cfg, err := config.Parse([]byte(fmt.Sprintf(configTemplate, self, serveFlag)))
	if err != nil {
		return err
	}

	// Discover starts the subprocess; Close stops it (closing its stdin,
	// then signalling it if it lingers).
	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	tools, err := toolset.Discover(dctx, cfg.Servers, nil)
	cancel()
	if err != nil {
		return err
	}
	defer tools.Shutdown(context.WithoutCancel(ctx)) // Close bounds each server's ending itself
	fmt.Fprintf(stdout, "mini-me stdio: the finance server runs as a subprocess (%s %s)\n\n", self, serveFlag)
	render.Banner(stdout, tools)

	policy := agent.PolicyFromConfig(cfg, permission.NewTerminal(stdin, stdout))

	model, err := modelenv.Find(ctx, os.Getenv)
	if err != nil {
		return withoutModel.Run(ctx, stdout, err, tools, policy)
	}
	a := &agent.Agent{Model: model, Tools: tools, Policy: policy}
	fmt.Fprintln(stdout)
	render.Model(stdout, model)
	fmt.Fprintf(stdout, "\nyou: %s\n\n", question)
	_, err = a.RunStream(ctx, []agent.Message{agent.UserMessage(question)}, render.Events(stdout))
	return err
}

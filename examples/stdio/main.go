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
// asked at the terminal (confirmDestructive, on by default). It also
// marks the server "egress: local": personal finances stay on this
// machine, and with a hosted model the agent withholds the ledger's tools
// and says so.
//
// The model comes from the environment, as for the quickstart (see
// examples/quickstart). Without one, the program says how to start one,
// then makes the calls itself, through the same permission policy: it
// selects a profile, sums its spending, and asks you before it changes a
// transaction. It exits with status 0 in both cases.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/examples/internal/demo"
	"git.rickub.com/bots-garden/mini-me/examples/internal/host"
	"git.rickub.com/bots-garden/mini-me/examples/internal/modelenv"
	"git.rickub.com/bots-garden/mini-me/mcp"
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout)
	switch {
	case ctx.Err() != nil:
		fmt.Fprintln(os.Stderr, "stdio: interrupted")
		os.Exit(130)
	case err != nil:
		fmt.Fprintln(os.Stderr, "stdio:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	question := "Select my personal profile and tell me what I spent on groceries. " +
		"Transaction t6, at the Fromagerie, was cheese: file it under groceries first."
	if len(args) > 0 {
		question = strings.Join(args, " ")
	}
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
	tools, err := mcp.Discover(dctx, cfg.Servers, nil)
	cancel()
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = tools.Close(cctx)
	}()
	fmt.Fprintf(stdout, "mini-me stdio: the finance server runs as a subprocess (%s %s)\n\n", self, serveFlag)
	host.PrintBanner(stdout, tools)

	policy := permission.NewPolicy(permission.NewTerminal(stdin, stdout), agent.PolicyOptions(cfg)...)

	model, err := modelenv.Find(ctx, os.Getenv)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		fmt.Fprintf(stdout, "\n%s\n\nWithout a model, here are the calls made directly, through the same\npermission policy: the reads run by themselves (auto mode), the write is\nasked (answer y to run it).\n\n", modelenv.Help(err))
		calls := []struct {
			tool string
			args map[string]any
		}{
			{"finance_select_profile", map[string]any{"profile": "perso"}},
			{"finance_spending_summary", map[string]any{}},
			{"finance_recategorize", map[string]any{"id": "t6", "category": "groceries"}},
			{"finance_spending_summary", map[string]any{}},
		}
		for _, c := range calls {
			if err := host.CallTool(ctx, stdout, tools, policy, c.tool, c.args); err != nil {
				return err
			}
		}
		return nil
	}

	fmt.Fprintln(stdout)
	host.PrintModel(stdout, model)
	a := &agent.Agent{Model: model, Tools: tools, Policy: policy}
	fmt.Fprintf(stdout, "\nyou: %s\n\n", question)
	res, err := a.RunStream(ctx, []agent.Message{{Role: agent.RoleUser, Content: question}}, host.Render(stdout))
	if err != nil {
		return fmt.Errorf("the run stopped (%s): %w", res.Stop, err)
	}
	return nil
}

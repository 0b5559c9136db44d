// Host is the README's host program in full: the MCP servers of
// mini-me.yaml, the model the MINIME_* variables name (or a local model
// server found by itself: see agent/modelenv), and the user approving
// tool calls at the terminal. Run it where a mini-me.yaml is.
package main

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/modelenv"
	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
	"git.rickub.com/bots-garden/mini-me/permission"
)

func main() {
	ctx := context.Background()
	cfg, err := config.Load("mini-me.yaml")
	if err != nil {
		log.Fatal(err) // every problem of the file, each with its line
	}
	// A server that fails is skipped: the logger gets a warning for it.
	opts := &toolset.Options{Logger: slog.Default()}
	tools, err := toolset.Discover(ctx, cfg.Servers, opts)
	if err != nil {
		log.Fatal(err)
	}
	defer tools.Close()
	model, err := modelenv.Find(ctx, os.Getenv)
	if err != nil {
		log.Fatal(modelenv.Help(err)) // what went wrong, and how to start or name a model
	}

	a := &agent.Agent{
		Model:  model,
		Tools:  tools,
		Policy: agent.PolicyFromConfig(cfg, permission.NewTerminal(os.Stdin, os.Stdout)), // the file's permissions apply
	}
	res, err := a.Run(ctx, []agent.Message{agent.UserMessage("What is on my calendar today?")})
	if err != nil {
		log.Fatalf("stopped (%s): %v", res.Stop, err)
	}
	fmt.Println(res.Answer)
}

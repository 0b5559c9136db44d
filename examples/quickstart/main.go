// Quickstart shows mini-me from end to end, in one command, on a fresh
// machine:
//
//	go run ./examples/quickstart
//	go run ./examples/quickstart 'Write "to be or not to be" in title case.'
//
// It starts two small MCP servers in-process on 127.0.0.1 (text tools that
// speak the stateless 2026-07-28 revision, and a notepad that speaks only
// the initialize-based 2025-11-25 one), reads a configuration that points
// at them (config.Decode), discovers their tools (mcp.Discover), all three
// in demo.Discover, and prints what it found. Then it puts a question to a model, which calls the tools;
// you approve each call at the terminal (permission.NewTerminal).
//
// The model is any OpenAI-compatible endpoint, named by environment
// variables, the first that is set winning:
//
//	MINIME_MODEL_URL   base URL ending in /v1, with MINIME_MODEL (model name)
//	                   and MINIME_API_KEY (its key, if it needs one)
//	OPENAI_API_KEY     OpenAI, or with OPENAI_BASE_URL another provider;
//	                   OPENAI_MODEL names the model
//	OLLAMA_HOST        Ollama, such as 127.0.0.1:11434
//	MODEL_RUNNER_HOST  Docker Model Runner, such as http://localhost:12434;
//	                   its default address is tried when nothing is set
//
// MINIME_MODEL names the model on any of them; by default the endpoint's
// first model is used. With no model, or one that does not answer within
// two seconds, the program says how to start one, then shows the rest
// anyway: one tool call made directly, through the same permission policy.
// It exits with status 0 in both cases; 1 when something is broken, 130
// when interrupted.
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/modelenv"
	"git.rickub.com/bots-garden/mini-me/agent/render"
	"git.rickub.com/bots-garden/mini-me/examples/internal/demo"
	"git.rickub.com/bots-garden/mini-me/examples/internal/host"
	"git.rickub.com/bots-garden/mini-me/permission"
)

const sample = "The quick brown fox jumps over the lazy dog"

// withoutModel is what the program does when there is no model.
var withoutModel = host.Fallback{
	Intro: "Without a model, here is one tool call made directly, through the same\npermission policy (answer y to run it):\n",
	Calls: []host.Call{{Tool: "text_count", Args: map[string]any{"text": sample}}},
}

func main() { host.Main("quickstart", run) }

func run(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	question := host.Question(args, fmt.Sprintf("How many words are there in %q?", sample))

	// MCP servers on 127.0.0.1, the configuration that lists them
	// (config.Decode) and their tools (mcp.Discover: every server at once,
	// each in the era it speaks; a server that cannot be used is skipped,
	// with a warning). examples/stdio calls config.Parse and mcp.Discover
	// itself.
	servers, err := demo.Discover(ctx)
	if err != nil {
		return err
	}
	defer servers.Close()
	cfg, tools := servers.Config, servers.Tools
	fmt.Fprintf(stdout, "mini-me quickstart: %d MCP servers started on 127.0.0.1\n\n", len(cfg.Servers))
	render.Banner(stdout, tools)

	// The permission policy applies the configuration's modes ("ask" here)
	// and asks the person at the terminal.
	policy := permission.NewPolicy(permission.NewTerminal(stdin, stdout), agent.PolicyOptions(cfg)...)

	model, err := modelenv.Find(ctx, os.Getenv)
	if err != nil {
		return withoutModel.Run(ctx, stdout, err, tools, policy)
	}

	// The agent: the model answers, calling the tools through the policy.
	res, err := host.Ask(ctx, stdout, &agent.Agent{Model: model, Tools: tools, Policy: policy}, question)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\n(%d model turns, %d tokens)\n", res.Turns, res.Usage.TotalTokens)
	return nil
}

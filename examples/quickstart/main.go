// Quickstart shows mini-me from end to end, in one command, on a fresh
// machine:
//
//	go run ./examples/quickstart
//	go run ./examples/quickstart 'Write "to be or not to be" in title case.'
//
// It starts two small MCP servers in-process on 127.0.0.1 (text tools that
// speak the stateless 2026-07-28 revision, and a notepad that speaks only
// the initialize-based 2025-11-25 one), reads a configuration that points
// at them (config.Decode), discovers their tools (toolset.Discover), all three
// in demo.Discover, and prints what it found (render.Banner). Then it puts
// a question to a model, which calls the tools; you approve each call at
// the terminal (permission.NewTerminal).
//
// The model is any OpenAI-compatible endpoint, named by environment
// variables (agent/modelenv), the first that is set winning:
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
	"os/signal"
	"strings"
	"syscall"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/modelenv"
	"git.rickub.com/bots-garden/mini-me/agent/render"
	"git.rickub.com/bots-garden/mini-me/examples/demo"
	"git.rickub.com/bots-garden/mini-me/permission"
)

const sample = "The quick brown fox jumps over the lazy dog"

// withoutModel is what the program does when there is no model.
var withoutModel = demo.Fallback{
	Intro: "Without a model, here is one tool call made directly, through the same\npermission policy (answer y to run it):\n",
	Calls: []demo.Call{{Tool: "text_count", Args: map[string]any{"text": sample}}},
}

// main runs until done, or until Ctrl-C (or SIGTERM) ends ctx; it exits
// with status 0, 1 after an error, or 130 when interrupted.
func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout)
	interrupted := ctx.Err() != nil
	stop()
	switch {
	case interrupted:
		fmt.Fprintln(os.Stderr, "quickstart: interrupted")
		os.Exit(130)
	case err != nil:
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	question := fmt.Sprintf("How many words are there in %q?", sample)
	if len(args) > 0 {
		question = strings.Join(args, " ")
	}

	// MCP servers on 127.0.0.1, the configuration that lists them
	// (config.Decode) and their tools (toolset.Discover: every server at once,
	// each in the era it speaks; a server that cannot be used is skipped,
	// with a warning). examples/stdio calls config.Parse and toolset.Discover
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
	policy := agent.PolicyFromConfig(cfg, permission.NewTerminal(stdin, stdout))

	model, err := modelenv.Find(ctx, os.Getenv)
	if err != nil {
		return withoutModel.Run(ctx, stdout, err, tools, policy)
	}

	// The agent: the model answers, calling the tools through the policy;
	// every step is printed as it comes (render.Events).
	fmt.Fprintln(stdout)
	render.Model(stdout, model)
	fmt.Fprintf(stdout, "\nyou: %s\n\n", question)
	a := &agent.Agent{Model: model, Tools: tools, Policy: policy}
	res, err := a.RunStream(ctx, []agent.Message{agent.UserMessage(question)}, render.Events(stdout))
	if err != nil {
		return fmt.Errorf("the run stopped (%s): %w", res.Stop, err)
	}
	turns := fmt.Sprintf("%d model turns", res.Turns)
	if res.Turns == 1 {
		turns = "1 model turn"
	}
	fmt.Fprintf(stdout, "\n(%s, %d tokens)\n", turns, res.Usage.TotalTokens)
	return nil
}

package openai_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/openai"
	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// The usual set-up with MCP servers: the configuration's servers are
// discovered into a Toolset, and the agent offers their tools to a local
// model, asking the user before calls the configuration does not allow.
func ExampleModel() {
	cfg, err := config.Load("mini-me.yaml")
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	tools, err := toolset.Discover(ctx, cfg.Servers, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer tools.Close()

	a := &agent.Agent{
		// Ollama; llama-server is "http://localhost:8080/v1", Docker Model
		// Runner "http://localhost:12434/engines/v1". A hosted service also
		// needs APIKeyEnv, naming the variable that holds the key.
		Model:  &openai.Model{BaseURL: "http://localhost:11434/v1", Model: "qwen3:4b"},
		Tools:  tools,
		Policy: permission.NewPolicy(permission.NewTerminal(os.Stdin, os.Stderr), agent.PolicyOptions(cfg)...),
	}
	res, err := a.Run(ctx, []agent.Message{agent.UserMessage("List my open issues.")})
	if err != nil {
		log.Printf("stopped (%s): %v", res.Stop, err)
	}
	fmt.Println(res.Answer)
}

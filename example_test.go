package minime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/openai"
	"git.rickub.com/bots-garden/mini-me/agent/openai/openaitest"
	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/mcp/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// The whole pipeline, runnable: a configuration naming an MCP server, its
// tools discovered, a policy that runs the server's calls without asking
// (permissions: auto), and a model that calls one tool, then answers. The
// server and the model here are test doubles on 127.0.0.1; real ones are
// configured the same way.
func Example_pipeline() {
	srv, err := mcptest.NewServer(mcptest.Tool{Name: "today", Description: "Today's events",
		Handler: func(context.Context, json.RawMessage) (string, error) { return "10:00 stand-up", nil }})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	mcpURL := srv.URL
	llm := &openaitest.Server{Turns: []openaitest.Turn{
		{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "calendar_today", Arguments: `{}`}}},
		{Text: "You have a stand-up at 10:00."},
	}}
	modelURL := llm.Start()
	defer llm.Close()

	ctx := context.Background()
	cfg, err := config.Parse([]byte("mcp:\n  servers:\n    - name: calendar\n      url: " + mcpURL + "\n      permissions: auto\n"))
	if err != nil {
		log.Fatal(err)
	}
	tools, err := toolset.Discover(ctx, cfg.Servers, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer tools.Close()

	a := &agent.Agent{
		Model:  &openai.Model{BaseURL: modelURL, Model: "qwen3:4b"},
		Tools:  tools,
		Policy: permission.NewPolicy(permission.DenyAll{}, permission.WithServerMode("calendar", permission.ModeAuto)),
	}
	res, err := a.RunStream(ctx, []agent.Message{agent.UserMessage("What is on my calendar today?")},
		func(e agent.Event) {
			if r, ok := e.(*agent.ToolFinished); ok {
				fmt.Printf("%s: %s\n", r.Call.Name, r.Output)
			}
		})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Answer)
	// Output:
	// calendar_today: 10:00 stand-up
	// You have a stand-up at 10:00.
}

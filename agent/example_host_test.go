package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/openai"
	"git.rickub.com/bots-garden/mini-me/agent/openai/openaitest"
	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// A server's sampling request is answered by the agent's model once the
// policy allowed it. The Sampler is the client's handler: in a host, set
// sampler.Sample as toolset.Options.Client.Sample. The model is a
// scripted server on 127.0.0.1.
func ExampleSampler() {
	llm := &openaitest.Server{Turns: []openaitest.Turn{{Text: "Bonjour !"}}}
	baseURL := llm.Start()
	defer llm.Close()

	sampler := &agent.Sampler{
		Model:     &openai.Model{BaseURL: baseURL, Model: "qwen3:4b"},
		ModelName: "qwen3:4b",
		Servers:   []config.Server{{Name: "translator"}},
		Policy: permission.NewPolicy(permission.ApproverFunc(func(_ context.Context, req permission.Request) (permission.Decision, error) {
			fmt.Printf("%s asks for at most %d tokens: %q\n", req.Server, req.Sampling.MaxTokens, req.Sampling.Messages[0].Text)
			return permission.Decision{Verdict: permission.AllowOnce}, nil
		})),
	}
	res, err := sampler.Sample(context.Background(), &mcp.SampleRequest{
		Server:    "translator", // the Toolset fills it in
		MaxTokens: 50,
		Messages:  []mcp.SamplingMessage{{Role: "user", Content: mcp.SamplingContents{{Type: "text", Text: "Say hello in French."}}}},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Model, res.StopReason, res.Content[0].Text)
	// Output:
	// translator asks for at most 50 tokens: "Say hello in French."
	// qwen3:4b endTurn Bonjour !
}

// A host whose user answers later (a web page) keeps each elicitation
// pending and answers it when the user does.
func ExampleElicitor() {
	e := &agent.Elicitor{}
	e.OnPending = func(p agent.PendingElicitation) {
		fmt.Printf("%s asks: %s\n", p.Elicitation.Server, p.Elicitation.Message)
		go func() {
			// An answer that does not fit the form is refused; the
			// request stays pending.
			if err := e.Answer(p.ID, permission.ElicitAnswer{Action: "accept", Content: map[string]any{"city": 7}}); err != nil {
				fmt.Println("refused:", err)
			}
			if err := e.Answer(p.ID, permission.ElicitAnswer{Action: "accept", Content: map[string]any{"city": "Lyon"}}); err != nil {
				fmt.Println(err)
			}
		}()
	}
	res, err := e.Elicit(context.Background(), &mcp.ElicitRequest{Server: "weather", Mode: "form", Message: "Which city?",
		RequestedSchema: json.RawMessage(`{"type":"object","required":["city"],"properties":{"city":{"type":"string"}}}`)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Action, res.Content["city"])
	// Output:
	// weather asks: Which city?
	// refused: permission: elicitation answer: field "city": not a string
	// accept Lyon
}

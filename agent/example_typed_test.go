package agent_test

import (
	"context"
	"fmt"
	"log"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/openai"
	"git.rickub.com/bots-garden/mini-me/agent/openai/openaitest"
)

// A typed answer: the host asks for a Go value, the agent sends its JSON
// Schema as a response format (llama-server and Ollama make it a grammar),
// validates the reply and decodes it. The model here is a scripted
// OpenAI-compatible server on 127.0.0.1 that reads the request as
// llama-server does.
func ExampleRunTyped() {
	llm := &openaitest.Server{Dialect: openaitest.DialectLlamaCpp, Turns: []openaitest.Turn{
		{Text: `{"title":"Crash on start","severity":"high","labels":["bug","regression"]}`},
	}}
	baseURL := llm.Start()
	defer llm.Close()

	type triage struct {
		Title    string   `json:"title" jsonschema:"a short title"`
		Severity string   `json:"severity" jsonschema:"low, medium or high"`
		Labels   []string `json:"labels"`
	}
	a := &agent.Agent{Model: &openai.Model{BaseURL: baseURL, Model: "qwen3:4b"}}
	report := []agent.Message{agent.UserMessage("Triage: since 1.4 the app crashes at start.")}
	t, res, err := agent.RunTyped[triage](context.Background(), a, report, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s (%s) %v\n", t.Title, t.Severity, t.Labels)
	fmt.Println("the server held the reply to the schema:", llm.Requests()[0].Schema != nil, "turns:", res.Turns)
	// Output:
	// Crash on start (high) [bug regression]
	// the server held the reply to the schema: true turns: 1
}

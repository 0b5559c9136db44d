package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/openai"
	"git.rickub.com/bots-garden/mini-me/agent/openai/openaitest"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// A full run: the model asks for a tool, the policy allows it, the tool
// runs, and the model answers with its result. The model here is a
// scripted OpenAI-compatible server on 127.0.0.1; a real one is configured
// the same way (see the openai package's ExampleModel).
func Example() {
	llm := &openaitest.Server{Turns: []openaitest.Turn{
		{ToolCalls: []openaitest.ToolCall{{ID: "call_1", Name: "weather", Arguments: `{"city":"Paris"}`}}},
		{Text: "It is sunny in Paris, 18 °C."},
	}}
	baseURL := llm.Start()
	defer llm.Close()

	type weatherIn struct {
		City string `json:"city" jsonschema:"the city"`
	}
	weather, err := agent.NewFunc("weather", "Current weather in a city",
		func(_ context.Context, in weatherIn) (string, error) {
			return "sunny, 18 °C in " + in.City, nil
		})
	if err != nil {
		log.Fatal(err)
	}

	a := &agent.Agent{
		Model:  &openai.Model{BaseURL: baseURL, Model: "qwen3:4b"},
		Funcs:  []*agent.Func{weather},
		Policy: permission.NewPolicy(permission.AllowAll{}),
	}
	conversation := []agent.Message{agent.UserMessage("What's the weather in Paris?")}
	res, err := a.RunStream(context.Background(), conversation, func(e agent.Event) {
		switch e := e.(type) {
		case *agent.ToolCallProposed:
			fmt.Printf("model asks for %s %s\n", e.Call.Name, e.Call.Arguments)
		case *agent.ApprovalDecided:
			fmt.Println("policy says:", e.Decision)
		case *agent.ToolFinished:
			fmt.Printf("tool result (%s): %s\n", e.Status, e.Output)
		case *agent.TextDelta:
			fmt.Print(e.Text)
		case *agent.TurnFinished:
			if e.ToolCalls == 0 {
				fmt.Println()
			}
			fmt.Printf("turn %d finished: %s\n", e.Turn, e.Finish)
		}
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("stop: %s after %d turns, %d messages\n", res.Stop, res.Turns, len(res.Messages))
	// Output:
	// turn 1 finished: tool_calls
	// model asks for weather {"city":"Paris"}
	// policy says: allow once
	// tool result (ok): sunny, 18 °C in Paris
	// It is sunny in Paris, 18 °C.
	// turn 2 finished: stop
	// stop: answer after 2 turns, 4 messages
}

// A conversation is plain data: the host stores it as JSON after a run and
// carries it on later.
func ExampleAgent_Run() {
	llm := &openaitest.Server{Turns: []openaitest.Turn{{Text: "Hello!"}, {Text: "You said hi."}}}
	baseURL := llm.Start()
	defer llm.Close()
	a := &agent.Agent{Model: &openai.Model{BaseURL: baseURL}}

	res, err := a.Run(context.Background(), []agent.Message{agent.UserMessage("hi")})
	if err != nil {
		log.Fatal(err)
	}
	saved, _ := json.Marshal(res.Messages)
	fmt.Println(string(saved))

	var conversation []agent.Message
	if err := json.Unmarshal(saved, &conversation); err != nil {
		log.Fatal(err)
	}
	conversation = append(conversation, agent.UserMessage("what did I say?"))
	res, err = a.Run(context.Background(), conversation)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Answer)
	// Output:
	// [{"role":"user","parts":[{"kind":"text","text":"hi"}]},{"role":"assistant","parts":[{"kind":"text","text":"Hello!"}]}]
	// You said hi.
}

// Limits stop a model that loops: here it calls the same tool with the
// same arguments again and again. The first repeat is refused with an
// explanation, the second stops the run; FinalAnswer then asks the model,
// without tools, for what it has.
func ExampleAgent_RunStream_limits() {
	again := openaitest.Turn{ToolCalls: []openaitest.ToolCall{{ID: "c", Name: "lookup", Arguments: `{"id":42}`}}}
	llm := &openaitest.Server{Turns: []openaitest.Turn{again, again, again, {Text: "Item 42 is a teapot."}}}
	baseURL := llm.Start()
	defer llm.Close()

	lookup, err := agent.NewFunc("lookup", "Looks an item up", func(_ context.Context, in struct {
		ID int `json:"id"`
	}) (string, error) {
		return fmt.Sprintf("item %d: teapot", in.ID), nil
	})
	if err != nil {
		log.Fatal(err)
	}
	a := &agent.Agent{
		Model:       &openai.Model{BaseURL: baseURL},
		Funcs:       []*agent.Func{lookup},
		Policy:      permission.NewPolicy(permission.AllowAll{}),
		MaxTurns:    5,
		FinalAnswer: true,
	}
	res, err := a.RunStream(context.Background(), []agent.Message{agent.UserMessage("What is item 42?")}, func(e agent.Event) {
		if r, ok := e.(*agent.ToolFinished); ok {
			fmt.Printf("turn %d: %s\n", r.Turn, r.Status)
		}
	})
	fmt.Println(err)
	fmt.Println(res.Stop, "-", res.Answer)
	// Output:
	// turn 1: ok
	// turn 2: repeated
	// turn 3: repeated
	// agent: the model repeated the same tool call
	// repeated-call - Item 42 is a teapot.
}

package agent_test

import (
	"context"
	"fmt"
	"log"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/openai"
	"git.rickub.com/bots-garden/mini-me/agent/openai/openaitest"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// A Trace sees the run, each model call and each tool call; the nested
// module agent/otel turns them into OpenTelemetry spans. Here the hooks
// print.
func ExampleWithTrace() {
	llm := &openaitest.Server{Turns: []openaitest.Turn{
		{ToolCalls: []openaitest.ToolCall{{ID: "call_1", Name: "weather", Arguments: `{"city":"Paris"}`}},
			Usage: &openaitest.Usage{PromptTokens: 50, CompletionTokens: 12}},
		{Text: "Sunny.", Usage: &openaitest.Usage{PromptTokens: 70, CompletionTokens: 3}},
	}}
	baseURL := llm.Start()
	defer llm.Close()
	type weatherIn struct {
		City string `json:"city"`
	}
	weather, err := agent.NewFunc("weather", "Current weather in a city",
		func(_ context.Context, in weatherIn) (string, error) { return "sunny in " + in.City, nil })
	if err != nil {
		log.Fatal(err)
	}
	a := &agent.Agent{Model: &openai.Model{BaseURL: baseURL, Model: "qwen3"}, Funcs: []*agent.Func{weather},
		Policy: permission.NewPolicy(permission.AllowAll{})}

	ctx := agent.WithTrace(context.Background(), &agent.Trace{
		ModelDone: func(_ context.Context, call *agent.ModelCall, res *agent.ModelResult) {
			fmt.Printf("%s: turn %d, %d in, %d out, %s\n", call.SpanName(), call.Turn,
				res.Reply.Usage.PromptTokens, res.Reply.Usage.CompletionTokens, res.Reply.Finish)
		},
		ToolDone: func(_ context.Context, call *agent.ToolCallInfo, res *agent.ToolFinished) {
			fmt.Printf("%s: %s, approval %s\n", call.SpanName(), res.Status, call.Decision.Verdict)
		},
	})
	res, err := a.Run(ctx, []agent.Message{agent.UserMessage("Weather in Paris?")})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Answer)
	// Output:
	// chat qwen3: turn 1, 50 in, 12 out, tool_calls
	// execute_tool weather: ok, approval allow once
	// chat qwen3: turn 2, 70 in, 3 out, stop
	// Sunny.
}

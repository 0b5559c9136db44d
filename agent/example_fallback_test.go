package agent_test

import (
	"context"
	"fmt"
	"log"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/openai"
	"git.rickub.com/bots-garden/mini-me/agent/openai/openaitest"
)

// A hosted model first, a local one when it cannot be reached: the
// Fallback passes over the first model, which refuses connections here,
// and the local one, retried should it be busy, answers. The turn's event
// names the model that answered.
func ExampleFallback() {
	llm := &openaitest.Server{Turns: []openaitest.Turn{{Text: "Paris."}}}
	localURL := llm.Start()
	defer llm.Close()

	a := &agent.Agent{Model: &agent.Fallback{Models: []agent.Model{
		&openai.Model{BaseURL: "http://127.0.0.1:1/v1", Model: "hosted", MaxRetries: -1},
		&agent.Retry{Model: &openai.Model{BaseURL: localURL, Model: "qwen3:4b", MaxRetries: -1}},
	}}}
	res, err := a.RunStream(context.Background(), []agent.Message{agent.UserMessage("Capital of France?")},
		func(e agent.Event) {
			if tf, ok := e.(*agent.TurnFinished); ok {
				fmt.Println("answered by", tf.Model)
			}
		})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Answer)
	// Output:
	// answered by qwen3:4b
	// Paris.
}

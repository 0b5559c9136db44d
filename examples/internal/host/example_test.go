package host_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/examples/internal/host"
)

// parrot is a model that answers the last message with its own words.
type parrot struct{}

func (parrot) Chat(_ context.Context, req *agent.ChatRequest, onDelta func(agent.Delta)) (*agent.Reply, error) {
	text := req.Messages[len(req.Messages)-1].Content
	onDelta(agent.Delta{Text: text})
	return &agent.Reply{Message: agent.Message{Role: agent.RoleAssistant, Content: text}, Finish: agent.FinishStop}, nil
}

// Ask prints the question, then the run as it streams.
func ExampleAsk() {
	res, err := host.Ask(context.Background(), os.Stdout, &agent.Agent{Model: parrot{}}, "Is anyone there?")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("(%s after %d turn)\n", res.Stop, res.Turns)
	// Output:
	// you: Is anyone there?
	//
	// Is anyone there?
	// (answer after 1 turn)
}

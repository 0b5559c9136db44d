package render_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/render"
)

// Text from a server or a model cannot move the cursor or reorder what
// the terminal shows.
func ExampleClean() {
	fmt.Println(render.Clean("invoice\x1b[2J paid\u202e\nnext line", 40))
	// Output: invoice�[2J paid�⏎next line
}

// parrot is a model that answers the last message with its own words.
type parrot struct{}

func (parrot) Chat(_ context.Context, req *agent.ChatRequest, onDelta func(agent.Delta)) (*agent.Reply, error) {
	text := req.Messages[len(req.Messages)-1].Text()
	onDelta(agent.Delta{Text: text})
	return &agent.Reply{Message: agent.Message{Role: agent.RoleAssistant, Parts: agent.Parts(text)}, Finish: agent.FinishStop}, nil
}

// A run printed as it streams.
func ExampleEvents() {
	a := &agent.Agent{Model: parrot{}}
	msgs := []agent.Message{agent.UserMessage("Is anyone there?")}
	if _, err := a.RunStream(context.Background(), msgs, render.Events(os.Stdout)); err != nil {
		log.Fatal(err)
	}
	// Output: Is anyone there?
}

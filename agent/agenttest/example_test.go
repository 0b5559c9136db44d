package agenttest_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/agenttest"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// A host's test runs its agent on a scripted model: the model calls the
// host's tool, then answers; the test checks what the model was sent and
// that the whole script was played.
func ExampleModel() {
	model := &agenttest.Model{Turns: []agenttest.Turn{
		agenttest.CallTool("weather", `{"city":"Paris"}`),
		{
			Text: "It is sunny in Paris.",
			// The second request must carry the tool's result.
			Expect: func(req *agent.ChatRequest) error {
				last := req.Messages[len(req.Messages)-1]
				if last.Role != agent.RoleTool || !strings.Contains(last.Text(), "sunny") {
					return errors.New("the tool's result was not sent")
				}
				return nil
			},
		},
	}}

	type weatherIn struct {
		City string `json:"city"`
	}
	weather, err := agent.NewFunc("weather", "Current weather in a city",
		func(_ context.Context, in weatherIn) (string, error) { return "sunny in " + in.City, nil })
	if err != nil {
		log.Fatal(err)
	}
	a := &agent.Agent{Model: model, Funcs: []*agent.Func{weather}, Policy: permission.NewPolicy(permission.AllowAll{})}
	res, err := a.Run(context.Background(), []agent.Message{agent.UserMessage("Weather in Paris?")})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Messages[len(res.Messages)-1].Text())
	fmt.Println("tools offered:", model.Requests()[0].Tools[0].Name)
	fmt.Println("verify:", model.Verify())
	// Output:
	// It is sunny in Paris.
	// tools offered: weather
	// verify: <nil>
}

// A turn may fail as a provider does, with an *agent.ModelError whose Kind
// the agent and its wrappers act on: here Retry asks again.
func ExampleFail() {
	model := &agenttest.Model{Turns: []agenttest.Turn{
		agenttest.Fail(&agent.ModelError{Kind: agent.ErrOverloaded, StatusCode: 503}),
		agenttest.Answer("ok"),
	}}
	retry := &agent.Retry{Model: model, Backoff: 1}
	reply, err := retry.Chat(context.Background(), &agent.ChatRequest{Messages: []agent.Message{agent.UserMessage("hi")}}, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(reply.Message.Text(), len(model.Requests()))
	// Output: ok 2
}

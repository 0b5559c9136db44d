package openaitest_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/openai"
	"git.rickub.com/bots-garden/mini-me/agent/openai/openaitest"
)

// A test points the OpenAI-compatible driver at the scripted server: the
// first request is refused with a 400, the second gets a streamed answer,
// and the test reads what the server was sent.
func ExampleServer() {
	srv := &openaitest.Server{Turns: []openaitest.Turn{
		{Status: 400, Error: "bad tool schema"},
		{Text: "Hello!"},
	}}
	baseURL := srv.Start()
	defer srv.Close()

	m := &openai.Model{BaseURL: baseURL, Model: "test"}
	req := &agent.ChatRequest{Messages: []agent.Message{agent.UserMessage("hi")}}
	_, err := m.Chat(context.Background(), req, nil)
	fmt.Println("bad request:", errors.Is(err, agent.ErrBadRequest))
	reply, err := m.Chat(context.Background(), req, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(reply.Message.Text())
	got := srv.Requests()
	fmt.Println(len(got), got[1].Model, got[1].Messages[0].Content)
	// Output:
	// bad request: true
	// Hello!
	// 2 test hi
}

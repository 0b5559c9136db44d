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

// An approval that waits: a web host's Approver defers every call, so the
// run stops with the call pending; the host stores the State as JSON,
// shows the call to the user, and, once they answer, resumes the run from
// the JSON in a fresh Agent, as another process would.
func ExampleAgent_Resume() {
	llm := &openaitest.Server{Turns: []openaitest.Turn{
		{ToolCalls: []openaitest.ToolCall{{ID: "call_1", Name: "send_invoice", Arguments: `{"to":"ada@example.com"}`}}},
		{Text: "The invoice is on its way to ada@example.com."},
	}}
	baseURL := llm.Start()
	defer llm.Close()

	type invoiceIn struct {
		To string `json:"to" jsonschema:"the recipient"`
	}
	sendInvoice, err := agent.NewFunc("send_invoice", "Sends this month's invoice",
		func(_ context.Context, in invoiceIn) (string, error) { return "sent to " + in.To, nil })
	if err != nil {
		log.Fatal(err)
	}
	later := permission.ApproverFunc(func(context.Context, permission.Request) (permission.Decision, error) {
		return permission.Decision{}, permission.ErrDeferred // the user answers on the web page
	})
	newAgent := func() *agent.Agent {
		return &agent.Agent{
			Model:  &openai.Model{BaseURL: baseURL, Model: "qwen3:4b"},
			Funcs:  []*agent.Func{sendInvoice},
			Policy: permission.NewPolicy(later),
		}
	}

	// The request: the run stops, and the host stores its State.
	res, err := newAgent().Run(context.Background(), []agent.Message{agent.UserMessage("Send Ada her invoice.")})
	fmt.Println(res.Stop, err)
	stored, err := json.Marshal(res.Pending)
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range res.Pending.Pending {
		fmt.Printf("waiting: %s %s\n", p.Request.PrefixedName, p.Request.Arguments)
	}

	// Later: the user said yes. The host reads the State back and resumes.
	var st agent.State
	if err := json.Unmarshal(stored, &st); err != nil {
		log.Fatal(err)
	}
	decisions := map[string]permission.Decision{st.Pending[0].ID: {Verdict: permission.AllowOnce}}
	res, err = newAgent().ResumeStream(context.Background(), &st, decisions, func(e agent.Event) {
		if e, ok := e.(*agent.ToolFinished); ok {
			fmt.Printf("tool result (%s): %s\n", e.Status, e.Output)
		}
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Answer)
	// Output:
	// pending-approval agent: the run waits for approvals
	// waiting: send_invoice {"to":"ada@example.com"}
	// tool result (ok): sent to ada@example.com
	// The invoice is on its way to ada@example.com.
}

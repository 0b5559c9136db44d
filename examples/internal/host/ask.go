package host

import (
	"context"
	"fmt"
	"io"

	"git.rickub.com/bots-garden/mini-me/agent"
)

// Ask runs a on one question, streaming the run to w: it prints the model
// (PrintModel, when a.Model is an *agent.OpenAI) and the question, then
// each event as it comes (Render). The error says why the run stopped; the
// Result is the run's, whatever happened.
func Ask(ctx context.Context, w io.Writer, a *agent.Agent, question string) (agent.Result, error) {
	fmt.Fprintln(w)
	if m, ok := a.Model.(*agent.OpenAI); ok {
		PrintModel(w, m)
	}
	fmt.Fprintf(w, "\nyou: %s\n\n", question)
	res, err := a.RunStream(ctx, []agent.Message{{Role: agent.RoleUser, Content: question}}, Render(w))
	if err != nil {
		return res, fmt.Errorf("the run stopped (%s): %w", res.Stop, err)
	}
	return res, nil
}

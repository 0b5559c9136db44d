package host

import (
	"context"
	"fmt"
	"io"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/render"
)

// Ask runs a on one question, streaming the run to w: it prints the model
// (render.Model, when a.Model is an *agent.OpenAI) and the question, then
// each event as it comes (render.Events). The error says why the run stopped; the
// Result is the run's, whatever happened.
func Ask(ctx context.Context, w io.Writer, a *agent.Agent, question string) (agent.Result, error) {
	fmt.Fprintln(w)
	if m, ok := a.Model.(*agent.OpenAI); ok {
		render.Model(w, m)
	}
	fmt.Fprintf(w, "\nyou: %s\n\n", question)
	res, err := a.RunStream(ctx, []agent.Message{{Role: agent.RoleUser, Content: question}}, render.Events(w))
	if err != nil {
		return res, fmt.Errorf("the run stopped (%s): %w", res.Stop, err)
	}
	return res, nil
}

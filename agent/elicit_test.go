package agent_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/permission"
)

func TestElicitorAsksAtOnce(t *testing.T) {
	var got permission.Elicitation
	e := &agent.Elicitor{Ask: func(_ context.Context, q permission.Elicitation) (permission.ElicitAnswer, error) {
		got = q
		return permission.ElicitAnswer{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
	}}
	res, err := e.Elicit(context.Background(), &mcp.ElicitRequest{Server: "crm", Mode: "form", Message: "Name?", RequestedSchema: json.RawMessage(`{"type":"object"}`)})
	require.NoError(t, err)
	assert.Equal(t, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, res)
	assert.Equal(t, permission.Elicitation{Server: "crm", Mode: "form", Message: "Name?", Schema: json.RawMessage(`{"type":"object"}`)}, got)
}

func TestElicitorAnsweredLater(t *testing.T) {
	pending := make(chan agent.PendingElicitation, 4)
	e := &agent.Elicitor{OnPending: func(p agent.PendingElicitation) { pending <- p }}
	type result struct {
		res *mcp.ElicitResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := e.Elicit(context.Background(), &mcp.ElicitRequest{Server: "bank", Mode: "url", Message: "Sign in", URL: "https://bank.example/"})
		done <- result{res, err}
	}()
	p := <-pending
	assert.Equal(t, "https://bank.example/", p.Elicitation.URL)
	assert.Equal(t, []agent.PendingElicitation{p}, e.Pending())
	require.NoError(t, e.Answer(p.ID, permission.ElicitAnswer{Action: "accept"}))
	r := <-done
	require.NoError(t, r.err)
	assert.Equal(t, "accept", r.res.Action)
	assert.ErrorIs(t, e.Answer(p.ID, permission.ElicitAnswer{Action: "accept"}), agent.ErrNotPending, "answered once")
	assert.Empty(t, e.Pending())

	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, err := e.Elicit(ctx, &mcp.ElicitRequest{Server: "bank", Mode: "form", Message: "Code?"})
		done <- result{nil, err}
	}()
	p = <-pending
	cancel() // the call that brought the request ended
	r = <-done
	require.ErrorIs(t, r.err, context.Canceled)
	assert.ErrorIs(t, e.Answer(p.ID, permission.ElicitAnswer{Action: "decline"}), agent.ErrNotPending, "withdrawn")
	assert.Empty(t, e.Pending())
}

func TestElicitorWithoutUICancels(t *testing.T) {
	res, err := (&agent.Elicitor{}).Elicit(context.Background(), &mcp.ElicitRequest{Mode: "form"})
	require.NoError(t, err)
	assert.Equal(t, "cancel", res.Action)
}

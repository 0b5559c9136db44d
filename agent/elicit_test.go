package agent_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/openai/openaitest"
	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
	"git.rickub.com/bots-garden/mini-me/permission"
)

func TestElicitorAsksAtOnce(t *testing.T) {
	var got permission.Elicitation
	e := &agent.Elicitor{Ask: func(_ context.Context, q permission.Elicitation) (permission.ElicitAnswer, error) {
		got = q
		return permission.ElicitAnswer{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
	}}
	res, err := e.Elicit(context.Background(), &mcp.ElicitRequest{Server: "crm", Mode: "form", Message: "Name?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
	require.NoError(t, err)
	assert.Equal(t, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, res)
	assert.Equal(t, permission.Elicitation{Server: "crm", Mode: "form", Message: "Name?", Schema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)}, got)
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

// startElicitingMCP starts a server speaking version whose task tool
// "signup" asks the client for a form, then for consent to a URL, and
// returns what it was answered; the Toolset answers through e.
func startElicitingMCP(t *testing.T, version string, e *agent.Elicitor) *toolset.Toolset {
	t.Helper()
	s := &mcptest.Server{Versions: []string{version}, Tasks: &mcptest.Tasks{PollInterval: time.Millisecond},
		Tools: []mcptest.Tool{{
			Def: json.RawMessage(`{"name":"signup","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}`),
			Task: func(ctx context.Context, _ json.RawMessage, run *mcptest.TaskRun) (any, error) {
				form, err := run.Input(ctx, "elicitation/create", map[string]any{"mode": "form", "message": "Your name?",
					"requestedSchema": json.RawMessage(`{"type":"object","required":["name"],"properties":{"name":{"type":"string","minLength":2}}}`)})
				if err != nil {
					return nil, err
				}
				page, err := run.Input(ctx, "elicitation/create", map[string]any{"mode": "url", "message": "Sign in",
					"url": "https://auth.example/p\u202eath", "elicitationId": "e1"})
				if err != nil {
					return nil, err
				}
				return map[string]any{"content": []any{map[string]any{"type": "text", "text": string(form) + " " + string(page)}}}, nil
			},
		}}}
	url := s.Start()
	t.Cleanup(s.Close)
	ts, err := toolset.Discover(context.Background(), []config.Server{{Name: "crm", URL: url}},
		&toolset.Options{Client: mcp.Options{Elicit: e.Elicit, ElicitURL: true}})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, ts.Close()) })
	require.Empty(t, ts.Warnings())
	return ts
}

func TestElicitationEventsOfARun(t *testing.T) {
	for _, version := range []string{mcptest.Modern, mcptest.Legacy} {
		t.Run(version, func(t *testing.T) {
			e := &agent.Elicitor{OnPending: func(agent.PendingElicitation) {}}
			ts := startElicitingMCP(t, version, e)
			_, model := startLLM(t,
				openaitest.Turn{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "crm_signup", Arguments: `{}`}}},
				openaitest.Turn{Text: "Signed up."},
			)
			requested := make(chan *agent.ElicitationRequested, 2)
			var rec recorder
			a := &agent.Agent{Model: model, Tools: ts, Policy: allowAll()}
			done := make(chan error, 1)
			go func() {
				_, err := a.RunStream(context.Background(), user("Sign me up"), func(ev agent.Event) {
					rec.on(ev)
					if r, ok := ev.(*agent.ElicitationRequested); ok {
						requested <- r
					}
				})
				done <- err
			}()

			// The host answers later, from the event.
			form := <-requested
			assert.Equal(t, 1, form.Turn)
			assert.Equal(t, 0, form.Index)
			assert.Equal(t, "crm_signup", form.Call.Name)
			assert.Equal(t, "crm", form.Elicitation.Server)
			assert.Equal(t, "form", form.Elicitation.Mode)
			assert.Equal(t, "Your name?", form.Elicitation.Message)
			assert.JSONEq(t, `{"type":"object","required":["name"],"properties":{"name":{"type":"string","minLength":2}}}`, string(form.Elicitation.Schema))
			assert.Empty(t, form.Site)
			// An answer that does not fit is refused, and the request waits.
			assert.ErrorContains(t, e.Answer(form.ID, permission.ElicitAnswer{Action: "accept", Content: map[string]any{"name": "A"}}), `field "name": wrong length`)
			assert.ErrorContains(t, e.Answer(form.ID, permission.ElicitAnswer{Action: "accept", Content: map[string]any{}}), `required field "name" missing`)
			require.Len(t, e.Pending(), 1)
			require.NoError(t, e.Answer(form.ID, permission.ElicitAnswer{Action: "accept", Content: map[string]any{"name": "Ada"}}))

			page := <-requested
			assert.Equal(t, "url", page.Elicitation.Mode)
			assert.Equal(t, "https://auth.example/p%E2%80%AEath", page.Elicitation.URL, "the bidi override is escaped")
			assert.Equal(t, "auth.example", page.Site)
			assert.Empty(t, page.SiteWarning)
			require.NoError(t, e.Answer(page.ID, permission.ElicitAnswer{Action: "decline"}))
			require.NoError(t, <-done)

			var trace []string
			rec.mu.Lock()
			for _, ev := range rec.events {
				switch ev := ev.(type) {
				case *agent.ToolStarted:
					trace = append(trace, "started")
				case *agent.ElicitationRequested:
					trace = append(trace, "requested "+ev.Elicitation.Mode+" "+ev.ID)
				case *agent.ElicitationAnswered:
					assert.Equal(t, "crm", ev.Server)
					assert.Equal(t, 1, ev.Turn)
					assert.Equal(t, "crm_signup", ev.Call.Name)
					assert.NoError(t, ev.Err)
					trace = append(trace, "answered "+ev.Action+" "+ev.ID)
				case *agent.ToolFinished:
					trace = append(trace, "finished "+string(ev.Status)+" "+ev.Output)
				}
			}
			rec.mu.Unlock()
			assert.Equal(t, []string{"started",
				"requested form " + form.ID, "answered accept " + form.ID,
				"requested url " + page.ID, "answered decline " + page.ID,
				`finished ok {"action":"accept","content":{"name":"Ada"}} {"action":"decline"}`}, trace)
		})
	}
}

func TestElicitorAskAnswerChecked(t *testing.T) {
	e := &agent.Elicitor{Ask: func(context.Context, permission.Elicitation) (permission.ElicitAnswer, error) {
		return permission.ElicitAnswer{Action: "accept", Content: map[string]any{"age": "old"}}, nil
	}}
	_, err := e.Elicit(context.Background(), &mcp.ElicitRequest{Server: "crm", Mode: "form",
		RequestedSchema: json.RawMessage(`{"type":"object","properties":{"age":{"type":"integer"}}}`)})
	assert.ErrorContains(t, err, `the host's answer to crm's elicitation was not sent: permission: elicitation answer: field "age": not a integer`)
}

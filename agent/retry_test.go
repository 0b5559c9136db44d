package agent_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/agenttest"
)

// sleeps records the waits of a Retry instead of waiting.
type sleeps struct{ waits []time.Duration }

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.waits = append(s.waits, d)
	return ctx.Err()
}

// Retry waits what the provider asks (Retry-After), else a backoff that
// doubles, and gives up after Retries or on a wait longer than MaxWait;
// it never retries a refusal nor a call that streamed part of an answer.
func TestRetry(t *testing.T) {
	req := &agent.ChatRequest{Messages: user("x")}
	limited := &agent.ModelError{Kind: agent.ErrRateLimited, StatusCode: 429, RetryAfter: 7 * time.Second}
	for _, tt := range []struct {
		name   string
		retry  agent.Retry
		turns  []agenttest.Turn
		waits  []time.Duration
		calls  int
		answer bool
		kind   error
	}{
		{name: "retry-after then backoff", turns: []agenttest.Turn{agenttest.Fail(limited), agenttest.Fail(overloaded), agenttest.Answer("ok")},
			waits: []time.Duration{7 * time.Second, 2 * time.Second}, calls: 3, answer: true},
		{name: "backoff doubles", retry: agent.Retry{Backoff: 100 * time.Millisecond, Retries: 3},
			turns: []agenttest.Turn{agenttest.Fail(unreachable), agenttest.Fail(unreachable), agenttest.Fail(unreachable), agenttest.Answer("ok")},
			waits: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}, calls: 4, answer: true},
		{name: "retries exhausted", turns: []agenttest.Turn{agenttest.Fail(overloaded), agenttest.Fail(overloaded), agenttest.Fail(overloaded), agenttest.Answer("never")},
			waits: []time.Duration{time.Second, 2 * time.Second}, calls: 3, kind: agent.ErrOverloaded},
		{name: "wait too long", retry: agent.Retry{MaxWait: 5 * time.Second}, turns: []agenttest.Turn{agenttest.Fail(limited), agenttest.Answer("never")},
			calls: 1, kind: agent.ErrRateLimited},
		{name: "refusal", turns: []agenttest.Turn{agenttest.Fail(refused), agenttest.Answer("never")}, calls: 1, kind: agent.ErrRefused},
		{name: "no retries", retry: agent.Retry{Retries: -1}, turns: []agenttest.Turn{agenttest.Fail(overloaded), agenttest.Answer("never")},
			calls: 1, kind: agent.ErrOverloaded},
		{name: "partial answer", turns: []agenttest.Turn{{Text: "half", Err: overloaded}, agenttest.Answer("never")},
			calls: 1, kind: agent.ErrOverloaded},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := &agenttest.Model{Name: "m", Turns: tt.turns}
			s := &sleeps{}
			r := tt.retry
			r.Model, r.Sleep = m, s.sleep
			reply, err := r.Chat(context.Background(), req, func(agent.Delta) {})
			if tt.answer {
				require.NoError(t, err)
				assert.Equal(t, "ok", reply.Message.Text())
			} else {
				require.ErrorIs(t, err, tt.kind)
			}
			assert.Equal(t, tt.waits, s.waits)
			assert.Equal(t, tt.calls, len(m.Requests()))
		})
	}
}

// A wait is cut short by ctx, and the error says both why it waited and
// why it stopped.
func TestRetryCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	m := &agenttest.Model{Name: "m", Turns: []agenttest.Turn{agenttest.Fail(overloaded), agenttest.Answer("never")}}
	r := &agent.Retry{Model: m, Sleep: func(ctx context.Context, _ time.Duration) error {
		cancel()
		<-ctx.Done()
		return ctx.Err()
	}}
	_, err := r.Chat(ctx, &agent.ChatRequest{Messages: user("x")}, nil)
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, err, agent.ErrOverloaded)
	assert.Equal(t, 1, len(m.Requests()))

	_, err = (&agent.Retry{}).Chat(context.Background(), &agent.ChatRequest{}, nil)
	assert.Error(t, err, "no Model")
	assert.False(t, errors.Is(err, agent.ErrOverloaded))
}

// Fallback over Retry: the primary is retried, then passed over, and the
// turn names the model that answered; the trace reports it too.
func TestRetryInFallback(t *testing.T) {
	primary := &agenttest.Model{Name: "primary", Turns: []agenttest.Turn{agenttest.Fail(overloaded), agenttest.Fail(overloaded), agenttest.Fail(overloaded)}}
	secondary := &agenttest.Model{Name: "secondary", Turns: []agenttest.Turn{agenttest.Answer("ok")}}
	s := &sleeps{}
	a := &agent.Agent{Model: &agent.Fallback{Models: []agent.Model{&agent.Retry{Model: primary, Sleep: s.sleep}, secondary}}}
	var attrs []string
	ctx := agent.WithTrace(context.Background(), &agent.Trace{ModelDone: func(_ context.Context, _ *agent.ModelCall, res *agent.ModelResult) {
		for _, a := range res.Attributes() {
			if a.Key == "gen_ai.response.model" {
				attrs = append(attrs, a.Value.String())
			}
		}
	}})
	rec := &recorder{}
	res, err := a.RunStream(ctx, user("x"), rec.on)
	require.NoError(t, err)
	assert.Equal(t, "ok", res.Answer)
	assert.Equal(t, 3, len(primary.Requests()), "asked once and retried twice")
	assert.Len(t, s.waits, 2)
	assert.Equal(t, []string{"secondary"}, turnModels(rec))
	assert.Equal(t, []string{"secondary"}, attrs)
}

package agent_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/agenttest"
)

// clock is a fake time for cool-downs: it moves only when told.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// turnModels returns the Model of each TurnFinished event.
func turnModels(rec *recorder) []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var out []string
	for _, e := range rec.events {
		if tf, ok := e.(*agent.TurnFinished); ok {
			out = append(out, tf.Model)
		}
	}
	return out
}

var (
	unreachable = &agent.ModelError{Kind: agent.ErrUnreachable, Err: errors.New("dial tcp 127.0.0.1:1: connection refused")}
	overloaded  = &agent.ModelError{Kind: agent.ErrOverloaded, StatusCode: 503}
	refused     = &agent.ModelError{Kind: agent.ErrRefused, StatusCode: 400, Err: errors.New("flagged by the content filter")}
	badRequest  = &agent.ModelError{Kind: agent.ErrBadRequest, StatusCode: 422}
)

// A primary that cannot be reached is passed over for the secondary,
// which answers, and the turn's event names it; while the primary cools
// down it is not asked; once the cool-down is over it is asked first again.
func TestFallbackCooldown(t *testing.T) {
	primary := &agenttest.Model{Name: "primary", Turns: []agenttest.Turn{agenttest.Fail(unreachable), agenttest.Answer("back")}}
	secondary := &agenttest.Model{Name: "secondary", Turns: []agenttest.Turn{agenttest.Answer("one"), agenttest.Answer("two")}}
	clk := &clock{now: time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)}
	fb := &agent.Fallback{Models: []agent.Model{primary, secondary}, Cooldown: time.Minute, Now: clk.Now}
	a := &agent.Agent{Model: fb}

	rec := &recorder{}
	res, err := a.RunStream(context.Background(), user("1"), rec.on)
	require.NoError(t, err)
	assert.Equal(t, "one", res.Answer)
	assert.Equal(t, []string{"secondary"}, turnModels(rec))
	assert.Equal(t, 1, len(primary.Requests()))

	clk.advance(59 * time.Second)
	rec = &recorder{}
	res, err = a.RunStream(context.Background(), user("2"), rec.on)
	require.NoError(t, err)
	assert.Equal(t, "two", res.Answer)
	assert.Equal(t, []string{"secondary"}, turnModels(rec))
	assert.Equal(t, 1, len(primary.Requests()), "not asked while it cools down")

	clk.advance(time.Second)
	rec = &recorder{}
	res, err = a.RunStream(context.Background(), user("3"), rec.on)
	require.NoError(t, err)
	assert.Equal(t, "back", res.Answer)
	assert.Equal(t, []string{"primary"}, turnModels(rec), "asked first again after the cool-down")
	assert.Equal(t, 2, len(secondary.Requests()))
}

// A refusal, a bad request and a request too long for the context are
// the request's fault: they are returned, the next model not asked.
func TestFallbackDoesNotMoveOn(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		kind error
	}{
		{"refused", refused, agent.ErrRefused},
		{"bad request", badRequest, agent.ErrBadRequest},
		{"context exceeded", &agent.ModelError{Kind: agent.ErrContextExceeded}, agent.ErrContextExceeded},
		{"unclassified", errors.New("driver misconfigured"), nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			primary := &agenttest.Model{Name: "primary", Turns: []agenttest.Turn{agenttest.Fail(tt.err)}}
			secondary := &agenttest.Model{Name: "secondary", Turns: []agenttest.Turn{agenttest.Answer("never")}}
			fb := &agent.Fallback{Models: []agent.Model{primary, secondary}}
			_, err := fb.Chat(context.Background(), &agent.ChatRequest{Messages: user("x")}, nil)
			require.ErrorIs(t, err, tt.err)
			if tt.kind != nil {
				require.ErrorIs(t, err, tt.kind)
			}
			assert.Equal(t, 0, len(secondary.Requests()))
		})
	}
}

// Every model failing gives every error, joined; a model that streamed
// part of its answer before failing is not followed by another; When
// chooses what moves on; no model, or a nil one, is an error.
func TestFallbackFailures(t *testing.T) {
	req := &agent.ChatRequest{Messages: user("x")}
	t.Run("all fail", func(t *testing.T) {
		fb := &agent.Fallback{Models: []agent.Model{
			&agenttest.Model{Name: "a", Turns: []agenttest.Turn{agenttest.Fail(unreachable)}},
			&agenttest.Model{Name: "b", Turns: []agenttest.Turn{agenttest.Fail(overloaded)}}}}
		_, err := fb.Chat(context.Background(), req, nil)
		require.ErrorIs(t, err, agent.ErrUnreachable)
		require.ErrorIs(t, err, agent.ErrOverloaded)
		assert.ErrorContains(t, err, "every model failed")
	})
	t.Run("partial answer", func(t *testing.T) {
		primary := &agenttest.Model{Name: "primary", Turns: []agenttest.Turn{{Text: "half", Err: overloaded}}}
		secondary := &agenttest.Model{Name: "secondary", Turns: []agenttest.Turn{agenttest.Answer("never")}}
		fb := &agent.Fallback{Models: []agent.Model{primary, secondary}}
		var got []string
		_, err := fb.Chat(context.Background(), req, func(d agent.Delta) { got = append(got, d.Text) })
		require.ErrorIs(t, err, agent.ErrOverloaded)
		assert.Equal(t, []string{"half"}, got)
		assert.Equal(t, 0, len(secondary.Requests()))
	})
	t.Run("When", func(t *testing.T) {
		secondary := &agenttest.Model{Name: "secondary", Turns: []agenttest.Turn{agenttest.Answer("ok")}}
		fb := &agent.Fallback{Models: []agent.Model{&agenttest.Model{Name: "primary", Turns: []agenttest.Turn{agenttest.Fail(badRequest)}}, secondary},
			When: func(err error) bool { return errors.Is(err, agent.ErrBadRequest) }}
		reply, err := fb.Chat(context.Background(), req, nil)
		require.NoError(t, err)
		assert.Equal(t, "secondary", reply.Model)
	})
	t.Run("no model", func(t *testing.T) {
		_, err := (&agent.Fallback{}).Chat(context.Background(), req, nil)
		require.ErrorIs(t, err, agent.ErrNoModel)
	})
	t.Run("nil model", func(t *testing.T) {
		secondary := &agenttest.Model{Name: "secondary", Turns: []agenttest.Turn{agenttest.Answer("never")}}
		_, err := (&agent.Fallback{Models: []agent.Model{secondary, nil}}).Chat(context.Background(), req, nil)
		require.ErrorContains(t, err, "Fallback.Models[1] is nil")
		assert.Empty(t, secondary.Requests(), "a Fallback set up wrong asks no model")
	})
}

// A Fallback claims what every one of its models claims: it is local only
// if all are, so that local-only tools never reach a remote fallback.
func TestFallbackCapabilities(t *testing.T) {
	local := &agenttest.Model{Name: "local", Claims: agent.Capabilities{Local: true, Schema: true, Streaming: true, ContextWindow: 8192}}
	remote := &agenttest.Model{Name: "remote", Claims: agent.Capabilities{Schema: true, ContextWindow: 128000}}
	assert.Equal(t, agent.Capabilities{Local: true, Schema: true, Streaming: true, ContextWindow: 8192},
		agent.CapabilitiesOf(&agent.Fallback{Models: []agent.Model{local}}))
	assert.Equal(t, agent.Capabilities{Schema: true, ContextWindow: 8192},
		agent.CapabilitiesOf(&agent.Fallback{Models: []agent.Model{local, remote}}))
	assert.Equal(t, "local", (&agent.Fallback{Models: []agent.Model{local, remote}}).ModelInfo().Name)
}

package temporal

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"git.rickub.com/bots-garden/mini-me/agent"
)

// failing is a Model whose every call fails with err.
type failing struct{ err error }

func (f failing) Chat(context.Context, *agent.ChatRequest, func(agent.Delta)) (*agent.Reply, error) {
	return nil, f.err
}

// The contract's error crosses the Chat activity whole: the workflow's
// side rebuilds an *agent.ModelError of the same kind, with its status,
// its wait and its context figures (the loop's refit needs them), and
// the activity is retried only for the kinds that may pass.
func TestModelErrorAcrossActivity(t *testing.T) {
	for name, k := range modelKinds {
		t.Run(name, func(t *testing.T) {
			sent := &agent.ModelError{Kind: k.kind, StatusCode: 400, RetryAfter: 2 * time.Second,
				PromptTokens: 9000, ContextSize: 2048, Err: errors.New("agent: model endpoint: boom")}
			var suite testsuite.WorkflowTestSuite
			env := suite.NewTestActivityEnvironment()
			env.RegisterActivityWithOptions((&Activities{Model: failing{sent}}).Chat, activity.RegisterOptions{Name: chatActivity})
			_, err := env.ExecuteActivity(chatActivity, &agent.ChatRequest{Messages: []agent.Message{agent.UserMessage("x")}})
			require.Error(t, err)
			var app *temporal.ApplicationError
			require.ErrorAs(t, err, &app)
			assert.Equal(t, !k.retry, app.NonRetryable())

			got := modelError(err)
			require.ErrorIs(t, got, k.kind)
			var me *agent.ModelError
			require.ErrorAs(t, got, &me)
			assert.Equal(t, [4]int{400, 9000, 2048, int(2 * time.Second / time.Millisecond)},
				[4]int{me.StatusCode, me.PromptTokens, me.ContextSize, int(me.RetryAfter / time.Millisecond)})
			assert.Equal(t, "agent: model endpoint: boom", me.Error())
		})
	}
	t.Run("unclassified", func(t *testing.T) {
		var suite testsuite.WorkflowTestSuite
		env := suite.NewTestActivityEnvironment()
		env.RegisterActivityWithOptions((&Activities{Model: failing{errors.New("misconfigured")}}).Chat, activity.RegisterOptions{Name: chatActivity})
		_, err := env.ExecuteActivity(chatActivity, &agent.ChatRequest{Messages: []agent.Message{agent.UserMessage("x")}})
		var me *agent.ModelError
		assert.False(t, errors.As(modelError(err), &me))
	})
}

// A Fallback whose first model was overloaded and whose second found the
// request too long returns both errors joined: the kind that crosses the
// activity is the one that ends the call (the context exceeded, with its
// figures, not retried), not the first one found in the join.
func TestModelErrorAcrossActivityFromFallback(t *testing.T) {
	overloaded := &agent.ModelError{Kind: agent.ErrOverloaded, StatusCode: 503, Err: errors.New("busy")}
	tooLong := &agent.ModelError{Kind: agent.ErrContextExceeded, StatusCode: 400, PromptTokens: 9000, ContextSize: 2048, Err: errors.New("too long")}
	fb := &agent.Fallback{Models: []agent.Model{failing{overloaded}, failing{tooLong}}}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions((&Activities{Model: fb}).Chat, activity.RegisterOptions{Name: chatActivity})
	_, err := env.ExecuteActivity(chatActivity, &agent.ChatRequest{Messages: []agent.Message{agent.UserMessage("x")}})
	var app *temporal.ApplicationError
	require.ErrorAs(t, err, &app)
	assert.True(t, app.NonRetryable())
	got := modelError(err)
	require.ErrorIs(t, got, agent.ErrContextExceeded)
	var me *agent.ModelError
	require.ErrorAs(t, got, &me)
	assert.Equal(t, [2]int{9000, 2048}, [2]int{me.PromptTokens, me.ContextSize})
}

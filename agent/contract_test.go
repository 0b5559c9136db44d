package agent_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/agenttest"
)

// The loop reacts to the contract's errors from any Model, not to a
// driver's types: a scripted model that is not the OpenAI driver gets a
// request too long for its context shortened and sent again, from the
// figures of its ModelError.
func TestContractContextExceeded(t *testing.T) {
	tooLong := &agent.ModelError{Kind: agent.ErrContextExceeded, PromptTokens: 9000, ContextSize: 2048,
		Err: errors.New("the request exceeds the available context size")}
	m := &agenttest.Model{Name: "m", Turns: []agenttest.Turn{agenttest.Fail(tooLong), agenttest.Answer("ok")}}
	rec := &recorder{}
	res, err := (&agent.Agent{Model: m, Funcs: []*agent.Func{echoFunc(t)}}).RunStream(context.Background(), withOldOutput(30_000), rec.on)
	require.NoError(t, err)
	assert.Equal(t, "ok", res.Answer)
	reqs := m.Requests()
	require.Len(t, reqs, 2)
	assert.Len(t, reqs[0].Messages[3].Text(), 30_000)
	assert.Less(t, len(reqs[1].Messages[3].Text()), 1500, "shortened from the error's figures")
	assert.Equal(t, []agent.WarningKind{agent.WarnContextBudget}, rec.warnings())
	assert.Equal(t, []string{"m"}, turnModels(rec), "a Model that does not fill Reply.Model is named by its ModelInfo")

	m = &agenttest.Model{Name: "m", Turns: []agenttest.Turn{agenttest.Fail(tooLong), agenttest.Fail(tooLong)}}
	_, err = (&agent.Agent{Model: m, Funcs: []*agent.Func{echoFunc(t)}}).Run(context.Background(), withOldOutput(30_000))
	require.ErrorIs(t, err, agent.ErrContextExceeded)
	var me *agent.ModelError
	require.ErrorAs(t, err, &me)
	assert.Equal(t, 2048, me.ContextSize)
}

// A model that claims Capabilities.Schema is sent the schema; one that
// answers ErrBadRequest to it is asked through the answer tool instead;
// one that claims nothing is asked through the tool from the start.
func TestContractTypedAnswer(t *testing.T) {
	type city struct {
		City string `json:"city"`
	}
	call := agenttest.Turn{ToolCalls: []agent.ToolCall{{ID: "a1", Name: agent.AnswerTool, Arguments: `{"city":"Paris"}`}}}
	t.Run("schema refused", func(t *testing.T) {
		m := &agenttest.Model{Name: "m", Claims: agent.Capabilities{Schema: true}, Turns: []agenttest.Turn{agenttest.Fail(badRequest), call}}
		got, res, err := agent.RunTyped[city](context.Background(), &agent.Agent{Model: m}, user("where?"), nil)
		require.NoError(t, err)
		assert.Equal(t, "Paris", got.City)
		reqs := m.Requests()
		require.Len(t, reqs, 2)
		assert.NotNil(t, reqs[0].Schema)
		assert.Nil(t, reqs[1].Schema)
		require.Len(t, res.Warnings, 1)
		assert.Equal(t, agent.WarnTypedAnswer, res.Warnings[0].Kind)
	})
	t.Run("no capability", func(t *testing.T) {
		m := &agenttest.Model{Name: "m", Turns: []agenttest.Turn{call}}
		got, _, err := agent.RunTyped[city](context.Background(), &agent.Agent{Model: m}, user("where?"), nil)
		require.NoError(t, err)
		assert.Equal(t, "Paris", got.City)
		assert.Nil(t, m.Requests()[0].Schema)
	})
}

// A ModelError's kind is found with errors.Is and its figures with
// errors.As through any wrapping; its text is the driver's.
func TestModelError(t *testing.T) {
	cause := errors.New("agent: model endpoint http://127.0.0.1/v1/chat/completions: status 429: slow down")
	err := fmt.Errorf("run: %w", &agent.ModelError{Kind: agent.ErrRateLimited, StatusCode: 429, Err: cause})
	assert.ErrorIs(t, err, agent.ErrRateLimited)
	assert.ErrorIs(t, err, cause)
	assert.False(t, errors.Is(err, agent.ErrOverloaded))
	assert.True(t, agent.Transient(err))
	assert.False(t, agent.Transient(refused))
	assert.Equal(t, "run: "+cause.Error(), err.Error())
	assert.Equal(t, agent.ErrOverloaded.Error(), (&agent.ModelError{Kind: agent.ErrOverloaded}).Error())
}

package agent_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent/openai/openaitest"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// lenient is a Policy whose Answer allows whatever it is given.
type lenient struct{}

func (lenient) Check(context.Context, permission.Request) (permission.Decision, error) {
	return permission.Decision{}, permission.ErrDeferred
}

func (lenient) Answer(permission.Request, permission.Decision) permission.Decision {
	return permission.Decision{Verdict: permission.AllowOnce}
}

// A Policy's Answer may deny a call the host approved, never run one the
// host denied: the denied calls stay denied, whether their tool is still
// offered or has gone.
func TestResumeAnswerCannotOverturnADenial(t *testing.T) {
	for _, gone := range []bool{false, true} {
		mcp, st, r := pausedFiles(t, openaitest.Turn{Text: "ok"})
		r.agent.Policy = lenient{}
		if gone {
			r.agent.Tools = nil
		}
		res, err := r.agent.Resume(context.Background(), st, map[string]permission.Decision{
			st.Pending[0].ID: {}, st.Pending[1].ID: {Reason: "no"},
		})
		require.NoError(t, err)
		assert.Equal(t, "ok", res.Answer)
		assert.Len(t, toolCalls(mcp), 1, "only the read of the first run ran")
		msgs := toolMessages(res.Messages)
		for _, p := range st.Pending {
			assert.Contains(t, msgs[p.Call.ID], "Permission denied", p.Call.Name)
		}
	}
}

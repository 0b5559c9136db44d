package agent_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/internal/llmtest"
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
		mcp, st, r := pausedFiles(t, llmtest.Turn{Text: "ok"})
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

// The decisions of a Resume reach the trace as those of a run do: each
// pending call is reported decided, and a call that runs carries its
// approval, not the zero (deny) Decision.
func TestTraceResumeDecisions(t *testing.T) {
	_, st, r := pausedFiles(t, llmtest.Turn{Text: "done"})
	var mu sync.Mutex
	decided, started := map[string]permission.Verdict{}, map[string]permission.Verdict{}
	ctx := agent.WithTrace(context.Background(), &agent.Trace{
		ToolDecided: func(_ context.Context, call *agent.ToolCallInfo) {
			mu.Lock()
			defer mu.Unlock()
			decided[call.Call.ID] = call.Decision.Verdict
		},
		ToolStart: func(ctx context.Context, call *agent.ToolCallInfo) context.Context {
			mu.Lock()
			defer mu.Unlock()
			started[call.Call.ID] = call.Decision.Verdict
			return ctx
		},
	})
	_, err := r.agent.Resume(ctx, st, map[string]permission.Decision{
		st.Pending[0].ID: {Verdict: permission.AllowOnce}, st.Pending[1].ID: {Reason: "no"},
	})
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, map[string]permission.Verdict{st.Pending[0].Call.ID: permission.AllowOnce, st.Pending[1].Call.ID: permission.Deny}, decided)
	assert.Equal(t, map[string]permission.Verdict{st.Pending[0].Call.ID: permission.AllowOnce}, started)
}

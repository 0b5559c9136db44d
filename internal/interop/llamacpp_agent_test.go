//go:build unix

package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// step is what the host saw of one tool call of a run.
type step struct {
	Turn             int
	Server, Tool     string
	Arguments        string
	Asked            bool
	Status           agent.CallStatus
	Output           string
	ApprovalDecision string
}

func TestLlamaCppAgentRun(t *testing.T) {
	base := startLlama(t, nil)
	_, tools := startTool(t, "dict", `{"name":"lookup","description":"Looks a word up in the dictionary","inputSchema":`+lookupSchema+`}`)
	add, err := agent.NewFunc("add", "Adds two integers", func(_ context.Context, in struct {
		A int64 `json:"a"`
		B int64 `json:"b"`
	}) (int64, error) {
		return in.A + in.B, nil
	})
	require.NoError(t, err)

	// run runs the conversation with the seed, every call put to an
	// approver, and returns what the host saw.
	run := func(t *testing.T, seed int, noStream bool) (agent.Result, []step) {
		var mu sync.Mutex
		asked := map[string]bool{}
		policy := permission.NewPolicy(permission.ApproverFunc(func(_ context.Context, req permission.Request) (permission.Decision, error) {
			mu.Lock()
			defer mu.Unlock()
			asked[req.Server+"/"+req.Tool+" "+string(req.Arguments)] = true
			return permission.Decision{Verdict: permission.AllowOnce}, nil
		}))
		m := tiny(base, noStream)
		one := 1.0
		m.Temperature, m.Seed = &one, &seed
		a := &agent.Agent{Model: m, Tools: tools, Funcs: []*agent.Func{add}, Policy: policy, MaxTurns: 4}
		var steps []step
		var text strings.Builder
		res, err := a.RunStream(llamaCtx(t), []agent.Message{agent.UserMessage("add, then look it up")}, func(e agent.Event) {
			switch e := e.(type) {
			case *agent.TextDelta:
				text.WriteString(e.Text)
			case *agent.ToolCallProposed:
				steps = append(steps, step{Turn: e.Turn, Server: e.Server, Tool: e.Tool, Arguments: e.Call.Arguments})
			case *agent.ApprovalDecided:
				steps[len(steps)-1].ApprovalDecision = e.Decision.Verdict.String()
			case *agent.ToolFinished:
				s := &steps[len(steps)-1]
				s.Status, s.Output = e.Status, e.Output
			}
		})
		require.NoError(t, err)
		assert.Equal(t, agent.StopAnswer, res.Stop)
		assert.True(t, strings.HasSuffix(text.String(), res.Answer), "the answer reached the host as text")
		for i := range steps {
			s := &steps[i]
			var compact bytes.Buffer
			require.NoError(t, json.Compact(&compact, []byte(s.Arguments)))
			s.Asked = asked[s.Server+"/"+s.Tool+" "+compact.String()]
			assert.True(t, s.Asked, "the approver was asked about %s/%s %s", s.Server, s.Tool, s.Arguments)
			assert.Equal(t, agent.StatusOK, s.Status)
		}
		return res, steps
	}

	// Which tool the model picks, and whether it says more than nothing
	// after the result, depends on the seed: try seeds until both the MCP
	// tool and the Func have been called, and an answer had words.
	called := map[string]bool{}
	answered := false
	for seed := 1; seed <= 20 && (len(called) < 2 || !answered); seed++ {
		streamed, steps := run(t, seed, false)
		whole, wholeSteps := run(t, seed, true)
		require.NotEmpty(t, steps, "seed %d: the model called a tool", seed)
		assert.Equal(t, steps, wholeSteps, "seed %d: the same calls, streamed or not", seed)
		assert.Equal(t, streamed.Answer, whole.Answer, "seed %d", seed)
		answered = answered || strings.TrimSpace(streamed.Answer) != ""
		t.Logf("seed %d: %d turns, calls %+v, answer %q", seed, streamed.Turns, steps, streamed.Answer)
		assert.Equal(t, streamed.Turns, whole.Turns)
		assert.Equal(t, uncached(t, streamed.Usage), uncached(t, whole.Usage))
		assert.Equal(t, roles(streamed.Messages), roles(whole.Messages))
		for _, s := range steps {
			called[s.Server] = true
			switch s.Server {
			case agent.FuncServer:
				var in struct{ A, B int64 }
				require.NoError(t, json.Unmarshal([]byte(s.Arguments), &in))
				assert.Contains(t, s.Output, strconv.FormatInt(in.A+in.B, 10))
			case "dict":
				assert.Contains(t, s.Output, "done: ")
			default:
				t.Errorf("a call of server %q", s.Server)
			}
		}
	}
	assert.True(t, called["dict"], "the MCP tool was called")
	assert.True(t, called[agent.FuncServer], "the Func was called")
	assert.True(t, answered, "an answer had words")
}

func roles(msgs []agent.Message) []agent.Role {
	out := make([]agent.Role, len(msgs))
	for i, m := range msgs {
		out[i] = m.Role
	}
	return out
}

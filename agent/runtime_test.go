package agent_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// seqRuntime runs the calls of a turn one after the other, in order, on
// a clock that moves a second per reading, with IDs counted from 1: what
// a deterministic engine would do.
type seqRuntime struct {
	batches []int
	clock   time.Time
	ids     int
}

func (s *seqRuntime) Parallel(ctx context.Context, limit int, fns []func(context.Context)) {
	s.batches = append(s.batches, len(fns))
	for _, fn := range fns {
		fn(ctx)
	}
}

func (s *seqRuntime) Now() time.Time {
	s.clock = s.clock.Add(time.Second)
	return s.clock
}

func (s *seqRuntime) NewID() string {
	s.ids++
	return fmt.Sprintf("id-%d", s.ids)
}

// TestRuntime: a run with a Runtime runs a turn's calls through it, times
// them on its clock and names its pause with its IDs.
func TestRuntime(t *testing.T) {
	_, srv := filesServer(t)
	_, model := startLLM(t, threeCalls)
	rt := &seqRuntime{}
	a := &agent.Agent{Model: model, Tools: discover(t, srv), Policy: permission.NewPolicy(webHost), Runtime: rt}
	var durations []time.Duration
	res, err := a.RunStream(context.Background(), user("tidy the files"), func(ev agent.Event) {
		if r, ok := ev.(*agent.ToolFinished); ok && r.Status == agent.StatusOK {
			durations = append(durations, r.Duration)
		}
	})
	require.ErrorIs(t, err, agent.ErrPendingApproval)
	assert.Equal(t, []int{1}, rt.batches, "the read ran through Parallel; the write and the delete wait")
	assert.Equal(t, []time.Duration{time.Second}, durations)
	require.NotNil(t, res.Pending)
	assert.Equal(t, "id-3", res.Pending.ID)
	require.Len(t, res.Pending.Pending, 2)
	assert.Equal(t, "id-1", res.Pending.Pending[0].ID)
	assert.Equal(t, "id-2", res.Pending.Pending[1].ID)
}

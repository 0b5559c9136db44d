package mcp_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
)

// TestInputRoundBound: one input_required round that asks for more input
// requests than a task may make in its whole life is refused before any
// handler runs (issue 35 #12: 500 roots/list were 500 handler calls).
func TestInputRoundBound(t *testing.T) {
	for _, tc := range []struct {
		n       int
		refused bool
	}{{mcp.MaxInputRequests, false}, {mcp.MaxInputRequests + 1, true}, {500, true}} {
		t.Run(fmt.Sprint(tc.n), func(t *testing.T) {
			reqs := make([]string, tc.n)
			for i := range reqs {
				reqs[i] = fmt.Sprintf(`"r%d":{"method":"roots/list","params":{}}`, i)
			}
			s := inputRoundServer(`{"resultType":"input_required","inputRequests":{` + strings.Join(reqs, ",") + `}}`)
			var calls atomic.Int32
			c := connect(t, mcptest.Start(t, s), &mcp.Options{Roots: func(context.Context) ([]mcp.Root, error) {
				calls.Add(1)
				return []mcp.Root{{URI: "file:///srv"}}, nil
			}})
			_, err := c.CallTool(context.Background(), "ask", nil)
			if !tc.refused {
				require.NoError(t, err)
				assert.EqualValues(t, tc.n, calls.Load())
				return
			}
			require.ErrorIs(t, err, mcp.ErrProtocol)
			assert.Contains(t, err.Error(), fmt.Sprintf("%d input requests", tc.n))
			assert.Zero(t, calls.Load(), "no handler runs for a round over the bound")
			assert.Equal(t, 1, s.Count("tools/call"), "the call is not retried")
		})
	}
}

package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/internal/jsonrpc"
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

// lister is a 2026-07-28 server whose listings (tools, prompts, resources,
// resource templates) each hold total items, made page by page as they are
// asked for, pageSize a page.
func lister(total, pageSize int) *mcptest.Server {
	items := map[string]struct{ key, item string }{
		"tools/list":               {"tools", `{"name":"t%d","inputSchema":{"type":"object"}}`},
		"prompts/list":             {"prompts", `{"name":"p%d"}`},
		"resources/list":           {"resources", `{"uri":"file:///r%d","name":"r"}`},
		"resources/templates/list": {"resourceTemplates", `{"uriTemplate":"file:///t%d/{x}","name":"t"}`},
	}
	s := &mcptest.Server{Versions: []string{mcptest.Modern}}
	s.Intercept = func(w http.ResponseWriter, _ *http.Request, msg *jsonrpc.Message) bool {
		list, ok := items[msg.Method]
		if !ok {
			return false
		}
		var p struct{ Cursor string }
		_ = json.Unmarshal(msg.Params, &p)
		from, _ := strconv.Atoi(p.Cursor)
		to := min(from+pageSize, total)
		page := make([]string, 0, to-from)
		for i := from; i < to; i++ {
			page = append(page, fmt.Sprintf(list.item, i))
		}
		next := ""
		if to < total {
			next = fmt.Sprintf(`,"nextCursor":"%d"`, to)
		}
		jsonReply(w, json.RawMessage(msg.ID), fmt.Sprintf(`{%q:[%s]%s}`, list.key, strings.Join(page, ","), next))
		return true
	}
	return s
}

// TestListBound: a listing is cut at Options.MaxListItems
// (DefaultMaxListItems when zero), the host told, and no page past the
// bound is asked for: a server listing 100,000 items costs the client
// 10,000 (issue 35 #8: 1,000,000 tools took 265 MiB).
func TestListBound(t *testing.T) {
	list := map[string]func(context.Context, *mcp.Client) (int, error){
		"tools/list": func(ctx context.Context, c *mcp.Client) (int, error) {
			l, err := c.ListTools(ctx)
			return len(l), err
		},
		"prompts/list": func(ctx context.Context, c *mcp.Client) (int, error) {
			l, err := c.ListPrompts(ctx)
			return len(l), err
		},
		"resources/list": func(ctx context.Context, c *mcp.Client) (int, error) {
			l, err := c.ListResources(ctx)
			return len(l), err
		},
		"resources/templates/list": func(ctx context.Context, c *mcp.Client) (int, error) {
			l, err := c.ListResourceTemplates(ctx)
			return len(l), err
		},
	}
	for _, tc := range []struct {
		name            string
		total, pageSize int
		max             int // Options.MaxListItems
		want, pages     int
		cut             bool
	}{
		{"default bound", 100000, 1000, 0, mcp.DefaultMaxListItems, mcp.DefaultMaxListItems/1000 + 1, true},
		{"bound inside a page", 95, 10, 42, 42, 5, true},
		{"exactly the bound", 50, 10, 50, 50, 5, false},
	} {
		for method, call := range list {
			t.Run(tc.name+"/"+method, func(t *testing.T) {
				s := lister(tc.total, tc.pageSize)
				var cuts []string
				c := connect(t, mcptest.Start(t, s), &mcp.Options{MaxListItems: tc.max, OnListCut: func(method string, limit int) {
					cuts = append(cuts, fmt.Sprint(method, " ", limit))
				}})
				n, err := call(context.Background(), c)
				require.NoError(t, err)
				assert.Equal(t, tc.want, n)
				assert.Equal(t, tc.pages, s.Count(method), "pages asked for")
				if tc.cut {
					assert.Equal(t, []string{fmt.Sprint(method, " ", tc.want)}, cuts)
				} else {
					assert.Empty(t, cuts)
				}
			})
		}
	}
}

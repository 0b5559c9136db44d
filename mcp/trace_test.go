package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

// recorder is a ClientTrace that records what it is told; each request's
// Start puts a value in the context that Done and TraceContext must see.
type recorder struct {
	mu        sync.Mutex
	starts    []mcp.RequestInfo
	dones     []traced
	discover  []string
	parent    string // the traceparent TraceContext returns
	sawMarker bool   // TraceContext got RequestStart's context
}

type traced struct {
	info   mcp.RequestInfo
	res    mcp.RequestResult
	marked bool
	attrs  map[string]any
}

type marker struct{}

func (r *recorder) trace() *mcp.ClientTrace {
	return &mcp.ClientTrace{
		RequestStart: func(ctx context.Context, req *mcp.RequestInfo) context.Context {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.starts = append(r.starts, *req)
			return context.WithValue(ctx, marker{}, req.ID)
		},
		RequestDone: func(ctx context.Context, req *mcp.RequestInfo, res *mcp.RequestResult) {
			r.mu.Lock()
			defer r.mu.Unlock()
			attrs := map[string]any{}
			for _, a := range append(req.Attributes(), res.Attributes()...) {
				attrs[a.Key] = a.Value.Any()
			}
			r.dones = append(r.dones, traced{info: *req, res: *res, marked: ctx.Value(marker{}) == req.ID, attrs: attrs})
		},
		TraceContext: func(ctx context.Context) (string, string) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.sawMarker = ctx.Value(marker{}) != nil
			return r.parent, "vendor=1"
		},
	}
}

// discoverTrace records the discovery hooks.
func (r *recorder) discoverTrace() *toolset.Trace {
	return &toolset.Trace{
		DiscoverStart: func(ctx context.Context, server string) context.Context {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.discover = append(r.discover, "start "+server)
			return context.WithValue(ctx, marker{}, server)
		},
		DiscoverDone: func(ctx context.Context, server string, p *toolset.DiscoverProgress) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.discover = append(r.discover, fmt.Sprintf("done %s %s %d marked=%v", server, p.Stage, p.Tools, ctx.Value(marker{}) == server))
		},
	}
}

// sentMeta returns the JSON-RPC id and params._meta of every request the
// server got for method.
func sentMeta(t *testing.T, s *mcptest.Server, method string) (ids []int64, metas []map[string]any) {
	t.Helper()
	for _, r := range s.Requests() {
		if r.Method != method {
			continue
		}
		var msg struct {
			ID     int64 `json:"id"`
			Params struct {
				Meta map[string]any `json:"_meta"`
			} `json:"params"`
		}
		require.NoError(t, json.Unmarshal(r.Body, &msg))
		ids, metas = append(ids, msg.ID), append(metas, msg.Params.Meta)
	}
	return ids, metas
}

const parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

func TestTraceRequests(t *testing.T) {
	for _, version := range []string{mcptest.Modern, mcptest.Legacy} {
		t.Run(version, func(t *testing.T) {
			s := &mcptest.Server{Versions: []string{version}, Tools: []mcptest.Tool{mcptest.EchoTool(), failTool()}}
			c := connect(t, mcptest.Start(t, s), &mcp.Options{ServerName: "srv"})
			rec := &recorder{parent: parent}
			ctx := mcp.WithTrace(context.Background(), rec.trace())

			_, err := c.CallTool(ctx, "echo", map[string]string{"text": "hi"})
			require.NoError(t, err)
			res, err := c.CallTool(ctx, "fail", nil)
			require.NoError(t, err)
			require.True(t, res.IsError)
			_, err = c.CallTool(ctx, "nope", nil)
			var rpc *mcp.RPCError
			require.ErrorAs(t, err, &rpc)
			_, err = c.CallTool(context.Background(), "echo", nil) // no trace: not reported
			require.NoError(t, err)

			ids, metas := sentMeta(t, s, "tools/call")
			require.Len(t, ids, 4)
			require.Len(t, rec.starts, 3)
			require.Len(t, rec.dones, 3)
			assert.True(t, rec.sawMarker, "TraceContext gets the context RequestStart returned")
			for i, d := range rec.dones {
				assert.True(t, d.marked, "RequestDone gets the context RequestStart returned")
				assert.Equal(t, ids[i], d.info.ID, "the JSON-RPC id sent")
				assert.Equal(t, parent, metas[i]["traceparent"])
				assert.Equal(t, "vendor=1", metas[i]["tracestate"])
				assert.Equal(t, "srv", d.info.Server)
				assert.Equal(t, "tools/call", d.info.Method)
				assert.Equal(t, version, d.info.ProtocolVersion)
				assert.Equal(t, "tcp", d.info.Transport)
				assert.Equal(t, "127.0.0.1", d.info.Address)
				assert.Positive(t, d.info.Port)
				assert.Equal(t, "execute_tool", d.attrs["gen_ai.operation.name"])
				assert.Equal(t, d.info.Name, d.attrs["gen_ai.tool.name"])
				assert.Equal(t, fmt.Sprint(ids[i]), d.attrs["jsonrpc.request.id"])
				assert.Equal(t, "tools/call "+d.info.Name, d.info.SpanName())
				if version == mcptest.Legacy {
					assert.NotEmpty(t, d.info.SessionID)
					assert.Equal(t, d.info.SessionID, d.attrs["mcp.session.id"])
				} else {
					assert.Empty(t, d.info.SessionID)
					assert.Contains(t, metas[i], "io.modelcontextprotocol/protocolVersion", "the protocol _meta stays")
				}
			}
			assert.Nil(t, metas[3]["traceparent"], "no trace, no traceparent")
			assert.Equal(t, []string{"echo", "fail", "nope"}, []string{rec.dones[0].info.Name, rec.dones[1].info.Name, rec.dones[2].info.Name})
			assert.Empty(t, rec.dones[0].res.ErrorType)
			assert.NotContains(t, rec.dones[0].attrs, "error.type")
			assert.Equal(t, "tool_error", rec.dones[1].attrs["error.type"])
			assert.NoError(t, rec.dones[1].res.Err)
			assert.Equal(t, "-32602", rec.dones[2].attrs["error.type"])
			assert.Equal(t, "-32602", rec.dones[2].attrs["rpc.response.status_code"])
			assert.ErrorAs(t, rec.dones[2].res.Err, &rpc)
		})
	}
}

func TestTraceContextInvalidNotSent(t *testing.T) {
	s := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{mcptest.EchoTool()}}
	c := connect(t, mcptest.Start(t, s), nil)
	for _, bad := range []string{"", "garbage", "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		"00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01", `00-0af7651916cd43dd8448eb211c80319c-b7ad6b716920333"-01`,
		// All zeros is no trace id, no parent id (W3C Trace Context §3.2.2.3, §3.2.2.4).
		"00-00000000000000000000000000000000-b7ad6b7169203331-01", "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01"} {
		rec := &recorder{parent: bad}
		_, err := c.CallTool(mcp.WithTrace(context.Background(), rec.trace()), "echo", nil)
		require.NoError(t, err)
	}
	_, metas := sentMeta(t, s, "tools/call")
	require.Len(t, metas, 7)
	for _, m := range metas {
		assert.NotContains(t, m, "traceparent")
		assert.NotContains(t, m, "tracestate")
	}
}

func TestTraceResourcesAndPrompts(t *testing.T) {
	s := &mcptest.Server{Versions: []string{mcptest.Modern}, Catalog: &mcptest.Catalog{
		Prompts:   []mcptest.Prompt{mcptest.TextPrompt("greet")},
		Resources: []mcptest.Resource{mcptest.TextResource("file:///a.txt", "a", "A")},
	}}
	c := connect(t, mcptest.Start(t, s), nil)
	rec := &recorder{}
	ctx := mcp.WithTrace(context.Background(), rec.trace())
	_, err := c.GetPrompt(ctx, "greet", map[string]string{"topic": "x"})
	require.NoError(t, err)
	_, err = c.ReadResource(ctx, "file:///a.txt")
	require.NoError(t, err)
	_, err = c.ListTools(ctx)
	require.NoError(t, err)
	require.Len(t, rec.dones, 3)
	p, r, l := rec.dones[0], rec.dones[1], rec.dones[2]
	assert.Equal(t, "prompts/get greet", p.info.SpanName())
	assert.Equal(t, "greet", p.attrs["gen_ai.prompt.name"])
	assert.Equal(t, "resources/read", r.info.SpanName(), "a URI is not in the span name")
	assert.Equal(t, "file:///a.txt", r.attrs["mcp.resource.uri"])
	assert.Equal(t, "tools/list", l.info.SpanName())
	assert.NotContains(t, l.attrs, "gen_ai.operation.name")
}

func TestTraceDiscover(t *testing.T) {
	good := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{mcptest.EchoTool()}}
	rec := &recorder{}
	ctx := toolset.WithTrace(mcp.WithTrace(context.Background(), rec.trace()), rec.discoverTrace())
	ts, err := toolset.Discover(ctx, []config.Server{
		{Name: "good", URL: mcptest.Start(t, good)},
		{Name: "down", URL: "http://127.0.0.1:1/mcp"},
	}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ts.Close() })
	assert.ElementsMatch(t, []string{"start good", "start down", "done good ready 1 marked=true", "done down skipped 0 marked=true"}, rec.discover)
	var list *traced
	for i := range rec.dones {
		if rec.dones[i].info.Method == "tools/list" && rec.dones[i].info.Server == "good" {
			list = &rec.dones[i]
		}
	}
	require.NotNil(t, list, "the discovery's requests are traced, with the server's name")
}

func TestWithTraceComposes(t *testing.T) {
	s := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{mcptest.EchoTool()}}
	c := connect(t, mcptest.Start(t, s), nil)
	var order []string
	type key string
	hooks := func(name string, tc func(context.Context) (string, string)) *mcp.ClientTrace {
		return &mcp.ClientTrace{
			RequestStart: func(ctx context.Context, _ *mcp.RequestInfo) context.Context {
				order = append(order, "start "+name)
				return context.WithValue(ctx, key(name), true)
			},
			RequestDone: func(ctx context.Context, _ *mcp.RequestInfo, _ *mcp.RequestResult) {
				order = append(order, fmt.Sprintf("done %s outer=%v inner=%v", name, ctx.Value(key("outer")), ctx.Value(key("inner"))))
			},
			TraceContext: tc,
		}
	}
	outerParent := func(context.Context) (string, string) { return parent, "" }
	ctx := mcp.WithTrace(context.Background(), hooks("outer", outerParent))
	ctx = mcp.WithTrace(ctx, hooks("inner", nil))
	ctx = mcp.WithTrace(ctx, &mcp.ClientTrace{}) // nothing to add: changes nothing
	_, err := c.CallTool(ctx, "echo", nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"start outer", "start inner", "done inner outer=true inner=true", "done outer outer=true inner=true"}, order)
	_, metas := sentMeta(t, s, "tools/call")
	assert.Equal(t, parent, metas[0]["traceparent"], "the outer TraceContext serves when the inner has none")
}

func TestTraceErrorTypes(t *testing.T) {
	c := connect(t, mcptest.Start(t, &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{mcptest.EchoTool()}}), nil)
	rec := &recorder{}
	ctx, cancel := context.WithCancel(mcp.WithTrace(context.Background(), rec.trace()))
	cancel()
	_, err := c.CallTool(ctx, "echo", nil)
	require.Error(t, err)
	require.NoError(t, c.Close())
	_, err = c.CallTool(mcp.WithTrace(context.Background(), rec.trace()), "echo", nil)
	require.ErrorIs(t, err, mcp.ErrClosed)
	require.Len(t, rec.dones, 1, "a call on a closed client sends nothing and is not reported")
	assert.Equal(t, "canceled", rec.dones[0].res.ErrorType)
	assert.True(t, errors.Is(rec.dones[0].res.Err, context.Canceled))
}

// BenchmarkCallToolTrace shows what tracing costs a call: "none" is a
// call without a trace, to compare with BenchmarkCallTool on main (no
// allocation more); "hooks" a trace whose hooks do nothing but be called,
// with a traceparent to send.
func BenchmarkCallToolTrace(b *testing.B) {
	c := connect(b, mcptest.Start(b, &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{mcptest.EchoTool()}}), nil)
	hooks := &mcp.ClientTrace{
		RequestStart: func(ctx context.Context, _ *mcp.RequestInfo) context.Context { return ctx },
		RequestDone:  func(context.Context, *mcp.RequestInfo, *mcp.RequestResult) {},
		TraceContext: func(context.Context) (string, string) { return parent, "" },
	}
	args := map[string]string{"text": "hello"}
	for _, bc := range []struct {
		name string
		ctx  context.Context
	}{{"none", context.Background()}, {"hooks", mcp.WithTrace(context.Background(), hooks)}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := c.CallTool(bc.ctx, "echo", args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestTraceInitialize(t *testing.T) {
	s := &mcptest.Server{Versions: []string{mcptest.Legacy}, Tools: []mcptest.Tool{mcptest.EchoTool()}}
	rec := &recorder{}
	c, err := mcp.Connect(mcp.WithTrace(context.Background(), rec.trace()), &mcp.HTTPTransport{URL: mcptest.Start(t, s)},
		&mcp.Options{ProtocolVersion: mcptest.Legacy})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	ids, _ := sentMeta(t, s, "initialize")
	require.Len(t, ids, 1)
	require.Len(t, rec.dones, 1)
	assert.Equal(t, "initialize", rec.dones[0].info.SpanName())
	assert.Equal(t, ids[0], rec.dones[0].info.ID)
	assert.Empty(t, rec.dones[0].res.ErrorType)
}

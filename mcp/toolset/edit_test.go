package toolset_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

// gateTool is a tool "wait" whose calls say they started on started and
// return when release is closed, or when the request ends.
func gateTool(started chan<- struct{}, release <-chan struct{}) mcptest.Tool {
	return mcptest.Tool{
		Def: json.RawMessage(`{"name":"wait","inputSchema":{"type":"object"}}`),
		Call: func(ctx context.Context, _ json.RawMessage, _ func(string, any)) (any, error) {
			started <- struct{}{}
			select {
			case <-release:
			case <-ctx.Done():
			}
			return map[string]any{"content": []any{map[string]any{"type": "text", "text": "released"}}}, nil
		},
	}
}

func serverNames(ts *toolset.Toolset) []string {
	var out []string
	for _, s := range ts.Servers() {
		out = append(out, s.Name)
	}
	return out
}

func TestToolsetAddRemove(t *testing.T) {
	started, release := make(chan struct{}, 4), make(chan struct{})
	a := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{gateTool(started, release)}}
	b := &mcptest.Server{Versions: []string{mcptest.Legacy}, Tools: []mcptest.Tool{mcptest.PlainTool("look"), gateTool(started, release)}}
	bcfg := config.Server{Name: "b", URL: mcptest.Start(t, b)}
	changes := newChanges()
	ts := discover(t, []config.Server{{Name: "a", URL: mcptest.Start(t, a)}}, &toolset.Options{OnChange: changes.record})

	// A call runs on a while b is added.
	first := make(chan error, 1)
	go func() {
		res, err := ts.Call(context.Background(), "a_wait", nil)
		if err == nil && res.Text() != "released" {
			err = assert.AnError
		}
		first <- err
	}()
	<-started
	require.NoError(t, ts.Add(context.Background(), bcfg))
	assert.Equal(t, toolset.ToolsChange{Server: "b", Added: []string{"b_look", "b_wait"}}, changes.next(t))
	assert.Equal(t, []string{"a", "b"}, serverNames(ts))
	assert.Equal(t, []string{"a_wait", "b_look", "b_wait"}, toolNames(ts))
	_, err := ts.Call(context.Background(), "b_look", nil)
	require.NoError(t, err)
	assert.ErrorIs(t, ts.Add(context.Background(), config.Server{Name: "B", URL: bcfg.URL}), toolset.ErrServerConfig, "names are unique ignoring case")

	// Remove waits for b's call in flight: it ends with its result, not
	// with ErrClosed.
	second := make(chan error, 1)
	go func() {
		_, err := ts.Call(context.Background(), "b_wait", nil)
		second <- err
	}()
	<-started
	removed := make(chan error, 1)
	go func() { removed <- ts.Remove(context.Background(), "b") }()
	require.Eventually(t, func() bool { _, ok := ts.Tool("b_wait"); return !ok }, 5*time.Second, time.Millisecond,
		"the tools leave the catalogue before the calls are waited for")
	_, err = ts.Call(context.Background(), "b_look", nil)
	require.ErrorIs(t, err, toolset.ErrUnknownTool)
	close(release)
	require.NoError(t, <-second)
	require.NoError(t, <-first)
	require.NoError(t, <-removed)
	assert.Equal(t, toolset.ToolsChange{Server: "b", Removed: []string{"b_look", "b_wait"}}, changes.next(t))
	assert.Equal(t, []string{"a"}, serverNames(ts))
	assert.ErrorIs(t, ts.Remove(context.Background(), "b"), toolset.ErrUnknownServer)

	// Added again, its tools get their names back.
	require.NoError(t, ts.Add(context.Background(), bcfg))
	assert.Equal(t, []string{"a_wait", "b_look", "b_wait"}, toolNames(ts))
}

func TestToolsetRemoveBounded(t *testing.T) {
	started, release := make(chan struct{}, 1), make(chan struct{})
	defer close(release)
	s := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{gateTool(started, release)}}
	ts := discover(t, []config.Server{{Name: "s", URL: mcptest.Start(t, s)}}, nil)
	done := make(chan error, 1)
	go func() {
		_, err := ts.Call(context.Background(), "s_wait", nil)
		done <- err
	}()
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	require.NoError(t, ts.Remove(ctx, "s"))
	require.ErrorIs(t, <-done, mcp.ErrClosed, "the call still running when ctx ended is cut")
	assert.Empty(t, ts.Servers())
}

func TestToolsetReload(t *testing.T) {
	srv := func(tool string) string {
		return mcptest.Start(t, &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{mcptest.PlainTool(tool)}})
	}
	keep, gone, changed, added := srv("k"), srv("g"), srv("c"), srv("n")
	old := []config.Server{{Name: "keep", URL: keep, Line: 3}, {Name: "gone", URL: gone}, {Name: "changed", URL: srv("old")}}
	ts := discover(t, old, nil)
	now := []config.Server{{Name: "keep", URL: keep, Line: 9}, {Name: "changed", URL: changed}, {Name: "new", URL: added}}
	require.NoError(t, ts.Reload(context.Background(), now))
	assert.Equal(t, []string{"keep", "changed", "new"}, serverNames(ts))
	assert.Equal(t, []string{"keep_k", "changed_c", "new_n"}, toolNames(ts))

	bad := append(now, config.Server{Name: "down", URL: mcptest.ClosedURL(t)})
	err := ts.Reload(context.Background(), bad)
	require.ErrorIs(t, err, mcp.ErrUnreachable)
	assert.Equal(t, []string{"keep", "changed", "new"}, serverNames(ts), "a server that cannot be used is not added")

	// The difference is taken from what the Toolset holds, not from a
	// configuration the caller remembers: every server not in the new one
	// goes, whatever was reloaded before.
	require.NoError(t, ts.Reload(context.Background(), now[:1]))
	assert.Equal(t, []string{"keep"}, serverNames(ts))
}

func TestToolsetAddAfterClose(t *testing.T) {
	ts, err := toolset.Discover(context.Background(), nil, nil)
	require.NoError(t, err)
	require.NoError(t, ts.Close())
	require.ErrorIs(t, ts.Add(context.Background(), config.Server{Name: "x", URL: "http://127.0.0.1:1/mcp"}), mcp.ErrClosed)
	require.ErrorIs(t, ts.Remove(context.Background(), "x"), mcp.ErrClosed)
}

// A host that watches its configuration file applies each new version
// without touching the servers that did not change.
func ExampleToolset_Reload() {
	ctx := context.Background()
	cfg, err := config.Load("mini-me.yaml")
	if err != nil {
		log.Fatal(err)
	}
	tools, err := toolset.Discover(ctx, cfg.Servers, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer tools.Shutdown(ctx)

	// ... the file changed:
	next, err := config.Load("mini-me.yaml")
	if err != nil {
		log.Print(err) // keep the servers as they are
		return
	}
	if err := tools.Reload(ctx, next.Servers); err != nil {
		log.Print(err) // the servers that could not be added
	}
	for _, s := range tools.Servers() {
		fmt.Println(s.Name, s.Tools)
	}
}

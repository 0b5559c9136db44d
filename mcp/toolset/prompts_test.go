package toolset_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

func testCatalog() *mcptest.Catalog {
	return &mcptest.Catalog{
		Prompts: []mcptest.Prompt{mcptest.TextPrompt("summary"), mcptest.TextPrompt("review.code"), mcptest.TextPrompt("review_code")},
		Resources: []mcptest.Resource{
			mcptest.TextResource("file:///notes.txt", "notes", "some notes"),
			mcptest.TextResource("file:///todo.txt", "todo", "buy milk"),
		},
		Templates: []json.RawMessage{json.RawMessage(`{"uriTemplate":"logs://{day}","name":"logs"}`)},
		PageSize:  1,
	}
}

func promptNames(ts *toolset.Toolset) []string {
	var names []string
	for _, p := range ts.Prompts() {
		names = append(names, p.Name)
	}
	return names
}

func resourceURIs(ts *toolset.Toolset) []string {
	var uris []string
	for _, r := range ts.Resources() {
		uris = append(uris, r.Server+" "+r.Resource.URI)
	}
	return uris
}

func warningKinds(ws []toolset.Warning) []toolset.WarningKind {
	var kinds []toolset.WarningKind
	for _, w := range ws {
		kinds = append(kinds, w.Kind)
	}
	return kinds
}

// Prompts and resources are gathered from every page, prefixed and made
// unique like tools, counted in the status, and routed back by name or URI.
func TestToolsetPromptsAndResources(t *testing.T) {
	mcptest.Eras(t, func(t *testing.T, v string) {
		cat := testCatalog()
		s := &mcptest.Server{Versions: []string{v}, Catalog: cat}
		ts := discover(t, []config.Server{{Name: "docs", URL: mcptest.Start(t, s)}}, nil)

		hashed := "docs_review_code_" + fnvHex("docs\x00review_code")
		assert.Equal(t, []string{"docs_summary", "docs_review_code", hashed}, promptNames(ts), "collisions get a hashed name")
		assert.Equal(t, []string{"docs file:///notes.txt", "docs file:///todo.txt"}, resourceURIs(ts))
		require.Len(t, ts.ResourceTemplates(), 1)
		assert.Equal(t, []string{"day"}, ts.ResourceTemplates()[0].Variables)
		st := ts.Servers()[0]
		assert.Equal(t, [3]int{3, 2, 1}, [3]int{st.Prompts, st.Resources, st.ResourceTemplates})
		assert.Empty(t, ts.Warnings())
		assert.Equal(t, 3, s.Count("prompts/list"), "every page is listed")

		ctx := context.Background()
		p, err := ts.GetPrompt(ctx, hashed, map[string]string{"topic": "Go"})
		require.NoError(t, err)
		assert.Equal(t, "docs", p.Server)
		require.Len(t, p.Result.Messages, 1)
		assert.Equal(t, "Summarise Go.", p.Result.Messages[0].Content.Text)
		_, err = ts.GetPrompt(ctx, "docs_nope", nil)
		require.ErrorIs(t, err, toolset.ErrUnknownPrompt)

		r, err := ts.ReadResource(ctx, "file:///todo.txt")
		require.NoError(t, err)
		assert.Equal(t, "buy milk", r.Result.Contents[0].Text)
		r, err = ts.ReadResource(ctx, "logs://monday")
		require.NoError(t, err, "a URI a template matches is read")
		assert.Equal(t, "logs://monday", r.Result.Contents[0].Text)
		assert.Equal(t, []string{"file:///todo.txt", "logs://monday"}, cat.Reads())
	})
}

// A URI no server listed, and no template of it matches, is sent nowhere;
// a URI listed by two servers goes to the first.
func TestToolsetReadResourceRouting(t *testing.T) {
	a := &mcptest.Catalog{Resources: []mcptest.Resource{mcptest.TextResource("file:///shared.txt", "shared", "from a")}}
	b := &mcptest.Catalog{
		Resources: []mcptest.Resource{mcptest.TextResource("file:///shared.txt", "shared", "from b"), mcptest.TextResource("file:///b.txt", "b", "only b")},
		Templates: []json.RawMessage{json.RawMessage(`{"uriTemplate":"db://tables/{name}","name":"table"}`)},
	}
	sa := &mcptest.Server{Versions: []string{mcptest.Modern}, Catalog: a}
	sb := &mcptest.Server{Versions: []string{mcptest.Legacy}, Catalog: b}
	ts := discover(t, []config.Server{{Name: "a", URL: mcptest.Start(t, sa)}, {Name: "b", URL: mcptest.Start(t, sb)}}, nil)
	assert.Equal(t, []string{"a file:///shared.txt", "b file:///b.txt"}, resourceURIs(ts))
	assert.Equal(t, []toolset.WarningKind{toolset.WarnInvalidResource}, warningKinds(ts.Warnings()))

	ctx := context.Background()
	r, err := ts.ReadResource(ctx, "file:///shared.txt")
	require.NoError(t, err)
	assert.Equal(t, "a", r.Server)
	assert.Equal(t, "from a", r.Result.Contents[0].Text)
	r, err = ts.ReadResource(ctx, "db://tables/users")
	require.NoError(t, err)
	assert.Equal(t, "b", r.Server)

	for _, uri := range []string{"file:///etc/passwd", "db://tables/users/../../secrets", "db://tables/a?x=1", "file:///b.txt#x", ""} {
		_, err := ts.ReadResource(ctx, uri)
		require.ErrorIs(t, err, toolset.ErrUnknownResource, uri)
	}
	assert.Equal(t, []string{"file:///shared.txt"}, a.Reads())
	assert.Equal(t, []string{"db://tables/users"}, b.Reads(), "no unlisted URI reached a server")
}

func TestToolsetPromptAndResourceAllowlists(t *testing.T) {
	s := &mcptest.Server{Versions: []string{mcptest.Modern}, Catalog: testCatalog()}
	ts := discover(t, []config.Server{{Name: "docs", URL: mcptest.Start(t, s),
		Prompts:   []string{"summary", "gone"},
		Resources: []string{"file:///notes.txt", "logs://{day}", "file:///gone.txt"},
	}}, nil)
	assert.Equal(t, []string{"docs_summary"}, promptNames(ts))
	assert.Equal(t, []string{"docs file:///notes.txt"}, resourceURIs(ts))
	assert.Len(t, ts.ResourceTemplates(), 1)
	assert.Equal(t, []toolset.WarningKind{toolset.WarnPromptNotFound, toolset.WarnResourceNotFound}, warningKinds(ts.Warnings()))

	_, err := ts.ReadResource(context.Background(), "file:///todo.txt")
	require.ErrorIs(t, err, toolset.ErrUnknownResource, "a resource left out by the allowlist is not read")
}

// A server without the capabilities is not asked; one whose listing fails
// still serves its tools.
func TestToolsetPromptsNotOffered(t *testing.T) {
	plain := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{mcptest.PlainTool("echo")}}
	broken := &mcptest.Server{Versions: []string{mcptest.Legacy}, Tools: []mcptest.Tool{mcptest.PlainTool("echo")}, Catalog: testCatalog(),
		Fault: &mcptest.Fault{Match: mcptest.OnMethod("prompts/list"), Do: mcptest.HTMLStatus(500, "", "")}}
	ts := discover(t, []config.Server{{Name: "plain", URL: mcptest.Start(t, plain)}, {Name: "broken", URL: mcptest.Start(t, broken)}}, nil)
	assert.Zero(t, plain.Count("prompts/list")+plain.Count("resources/list"))
	assert.Equal(t, []string{"plain_echo", "broken_echo"}, toolNames(ts))
	assert.Empty(t, ts.Prompts())
	assert.Len(t, ts.Resources(), 2)
	assert.Equal(t, []toolset.WarningKind{toolset.WarnPromptsFailed}, warningKinds(ts.Warnings()))
}

func TestToolsetPromptsRefresh(t *testing.T) {
	mcptest.Eras(t, func(t *testing.T, v string) {
		s := &mcptest.Server{Versions: []string{v}, SSE: true, Catalog: testCatalog()}
		s.Tools = []mcptest.Tool{{
			Def: json.RawMessage(`{"name":"mutate","inputSchema":{"type":"object"}}`),
			Call: func(_ context.Context, _ json.RawMessage, send func(string, any)) (any, error) {
				s.SetCatalog([]mcptest.Prompt{mcptest.TextPrompt("fresh")}, []mcptest.Resource{mcptest.TextResource("file:///new.txt", "new", "new")}, nil)
				send("notifications/prompts/list_changed", nil)
				send("notifications/resources/list_changed", nil)
				return map[string]any{"content": []any{}}, nil
			},
		}}
		ts := discover(t, []config.Server{{Name: "docs", URL: mcptest.Start(t, s)}}, nil)
		require.Len(t, ts.Prompts(), 3)
		if v == mcptest.Modern {
			var listen string
			for _, r := range s.Requests() {
				if r.Method == "subscriptions/listen" {
					listen = string(r.Body)
				}
			}
			assert.Contains(t, listen, `"promptsListChanged":true`)
			assert.Contains(t, listen, `"resourcesListChanged":true`)
		}
		_, err := ts.Call(context.Background(), "docs_mutate", nil)
		require.NoError(t, err)
		require.Eventually(t, func() bool { return len(ts.Prompts()) == 1 && len(ts.Resources()) == 1 }, 5*time.Second, 5*time.Millisecond)
		assert.Equal(t, []string{"docs_fresh"}, promptNames(ts))
		assert.Equal(t, []string{"docs file:///new.txt"}, resourceURIs(ts))
		assert.Empty(t, ts.ResourceTemplates())
		_, err = ts.ReadResource(context.Background(), "logs://monday")
		require.ErrorIs(t, err, toolset.ErrUnknownResource, "a template removed by a refresh no longer routes")
		_, err = ts.GetPrompt(context.Background(), "docs_summary", nil)
		require.ErrorIs(t, err, toolset.ErrUnknownPrompt)
	})
}

func TestToolsetCompletion(t *testing.T) {
	mcptest.Eras(t, func(t *testing.T, v string) {
		cat := testCatalog()
		var seen []string
		cat.Complete = func(ref, arg, value string) []string {
			seen = append(seen, ref+" "+arg+" "+value)
			var many []string
			for i := range 150 {
				many = append(many, fmt.Sprintf("%s%d", value, i))
			}
			return many
		}
		s := &mcptest.Server{Versions: []string{v}, Catalog: cat}
		plain := &mcptest.Server{Versions: []string{v}, Catalog: testCatalog()}
		ts := discover(t, []config.Server{{Name: "docs", URL: mcptest.Start(t, s)}, {Name: "plain", URL: mcptest.Start(t, plain)}}, nil)
		ctx := context.Background()

		c, err := ts.CompletePrompt(ctx, "docs_summary", mcp.CompletionArgument{Name: "topic", Value: "g", Context: map[string]string{"other": "x"}})
		require.NoError(t, err)
		assert.Len(t, c.Values, mcp.MaxCompletionValues)
		assert.Equal(t, "g0", c.Values[0])
		assert.True(t, c.HasMore, "values past the limit are dropped")
		c, err = ts.CompleteResource(ctx, "docs", "logs://{day}", mcp.CompletionArgument{Name: "day", Value: "mon"})
		require.NoError(t, err)
		assert.Equal(t, "mon0", c.Values[0])
		assert.Equal(t, []string{"summary topic g", "logs://{day} day mon"}, seen)

		c, err = ts.CompletePrompt(ctx, "plain_summary", mcp.CompletionArgument{Name: "topic", Value: "g"})
		require.NoError(t, err)
		assert.Empty(t, c.Values)
		assert.Zero(t, plain.Count("completion/complete"), "a server without completions is not asked")
		_, err = ts.CompleteResource(ctx, "plain", "logs://{other}", mcp.CompletionArgument{Name: "day", Value: ""})
		require.ErrorIs(t, err, toolset.ErrUnknownResource)
		_, err = ts.CompletePrompt(ctx, "docs_nope", mcp.CompletionArgument{Name: "topic", Value: ""})
		require.ErrorIs(t, err, toolset.ErrUnknownPrompt)
	})
}

func TestToolsetResourceSubscriptions(t *testing.T) {
	updates := make(chan string, 4)
	cat := testCatalog()
	s := &mcptest.Server{Versions: []string{mcptest.Legacy}, SSE: true, Catalog: cat}
	s.Tools = []mcptest.Tool{{
		Def: json.RawMessage(`{"name":"touch","inputSchema":{"type":"object"}}`),
		Call: func(_ context.Context, _ json.RawMessage, send func(string, any)) (any, error) {
			send("notifications/resources/updated", map[string]any{"uri": "file:///notes.txt"})
			return map[string]any{"content": []any{}}, nil
		},
	}}
	modern := &mcptest.Server{Versions: []string{mcptest.Modern}, Catalog: &mcptest.Catalog{
		Resources: []mcptest.Resource{mcptest.TextResource("file:///m.txt", "m", "m")}}}
	ts := discover(t, []config.Server{{Name: "docs", URL: mcptest.Start(t, s)}, {Name: "new", URL: mcptest.Start(t, modern)}},
		&toolset.Options{OnResourceUpdated: func(u mcp.ResourceUpdate) {
			select {
			case updates <- u.Server + " " + u.URI:
			default: // the test reads only the first ones
			}
		}})
	ctx := context.Background()

	require.NoError(t, ts.SubscribeResource(ctx, "file:///notes.txt"))
	_, err := ts.Call(ctx, "docs_touch", nil)
	require.NoError(t, err)
	select {
	case u := <-updates:
		assert.Equal(t, "docs file:///notes.txt", u)
	case <-time.After(5 * time.Second):
		t.Fatal("no update delivered")
	}
	require.NoError(t, ts.UnsubscribeResource(ctx, "file:///notes.txt"))
	require.ErrorIs(t, ts.SubscribeResource(ctx, "file:///unlisted.txt"), toolset.ErrUnknownResource)
	assert.Equal(t, []string{"+file:///notes.txt", "-file:///notes.txt"}, cat.Subscriptions(), "an unlisted URI is not sent")

	// The 2026-07-28 server: a listen stream of its own for the URI.
	require.NoError(t, ts.SubscribeResource(ctx, "file:///m.txt"))
	require.Eventually(t, func() bool { return modern.NotifyResourceUpdated("file:///m.txt") == 1 }, 5*time.Second, 5*time.Millisecond)
	select {
	case u := <-updates:
		assert.Equal(t, "new file:///m.txt", u)
	case <-time.After(5 * time.Second):
		t.Fatal("no update delivered on the modern stream")
	}
	assert.Equal(t, 1, modern.Count("tools/list"), "a subscription's stream asks for no re-fetch")
	require.NoError(t, ts.UnsubscribeResource(ctx, "file:///m.txt"))
	require.Eventually(t, func() bool { return modern.NotifyResourceUpdated("file:///m.txt") == 0 }, 5*time.Second, 5*time.Millisecond,
		"unsubscribing closes the stream")
	require.NoError(t, ts.SubscribeResource(ctx, "file:///m.txt"), "Close ends this one")
}

func TestToolsetPromptsRefreshWhenTTLExpires(t *testing.T) {
	cat := testCatalog()
	cat.TTL = 50 * time.Millisecond
	s := &mcptest.Server{Versions: []string{mcptest.Modern}, Catalog: cat}
	ts := discover(t, []config.Server{{Name: "ttl", URL: mcptest.Start(t, s)}}, nil)
	require.Equal(t, 3, s.Count("prompts/list"))
	require.Equal(t, 2, s.Count("resources/list"))
	time.Sleep(60 * time.Millisecond) // the lists' lifetime runs out
	ts.Prompts()                      // using them notices it
	ts.Resources()
	require.Eventually(t, func() bool {
		return s.Count("prompts/list") == 6 && s.Count("resources/list") == 4
	}, 5*time.Second, 5*time.Millisecond, "listed again, every page")
}

package host

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/modelenv"
	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/examples/internal/demo"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/permission"
)

func TestMain(m *testing.M) {
	if name := os.Getenv(mainEnv); name != "" {
		run, ok := runs[name]
		if !ok {
			fmt.Fprintf(os.Stderr, "%s: no run named %q\n", mainEnv, name)
			os.Exit(2)
		}
		Main("prog", run)
	}
	goleak.VerifyTestMain(m)
}

func discover(t *testing.T, s *demo.Server) *mcp.Toolset {
	url, stop, err := demo.Serve(s)
	require.NoError(t, err)
	t.Cleanup(stop)
	ctx := context.Background()
	tools, err := mcp.Discover(ctx, []config.Server{{Name: "text", URL: url}}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tools.Close(ctx) })
	return tools
}

func TestCallTool(t *testing.T) {
	tools := discover(t, demo.Text())
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		approver permission.Approver
		call     Call
		want     string
		err      error
	}{
		{"allowed", permission.AllowAll{}, Call{"text_count", map[string]any{"text": "a b"}},
			"→ text_count {\"text\":\"a b\"}\n← ok:\n  2 words, 3 characters, 1 line\n", nil},
		{"tool error", permission.AllowAll{}, Call{"text_transform", map[string]any{"text": "a", "to": "x"}},
			"← the tool reported an error:\n  unknown transformation \"x\"", nil},
		{"denied", permission.DenyAll{Reason: "not today"}, Call{"text_count", map[string]any{"text": "a"}},
			"← not run (deny: not today)\n", nil},
		{"unknown tool", permission.AllowAll{}, Call{"text_nope", nil}, "", mcp.ErrUnknownTool},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := callTool(ctx, &out, tools, permission.NewPolicy(tc.approver), tc.call)
			if tc.err != nil {
				assert.ErrorIs(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Contains(t, out.String(), tc.want)
		})
	}
}

func TestFallback(t *testing.T) {
	tools := discover(t, demo.Text())
	why := &modelenv.Unavailable{Reason: "nothing set"}
	help := "\n" + modelenv.Help(why) + "\n\n"
	count := Call{"text_count", map[string]any{"text": "a b"}}
	for _, tc := range []struct {
		name     string
		canceled bool
		calls    []Call
		want     string
		err      error
	}{
		{"calls in order", false, []Call{count, {"text_sort_lines", map[string]any{"text": "b\na"}}},
			help + "Intro.\n" +
				"→ text_count {\"text\":\"a b\"}\n← ok:\n  2 words, 3 characters, 1 line\n" +
				"→ text_sort_lines {\"text\":\"b\\na\"}\n← ok:\n  a\n  b\n", nil},
		{"a call that cannot be made ends them", false, []Call{{"text_nope", nil}, count},
			help + "Intro.\n", mcp.ErrUnknownTool},
		{"the program is stopping", true, []Call{count}, "", context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.canceled {
				cancel()
			}
			var out bytes.Buffer
			f := Fallback{Intro: "Intro.\n", Calls: tc.calls}
			err := f.Run(ctx, &out, why, tools, permission.NewPolicy(permission.AllowAll{}))
			if tc.err != nil {
				assert.ErrorIs(t, err, tc.err)
			} else {
				assert.NoError(t, err)
			}
			assert.Equal(t, tc.want, out.String())
		})
	}
}

func TestBanner(t *testing.T) {
	tools := discover(t, demo.Text())
	var out bytes.Buffer
	PrintBanner(&out, tools)
	assert.Equal(t, `servers:
  text  modern (2026-07-28)  demo-text 1.0.0, 3 tools
tools:
  text_count       text  read-only  Counts the words, characters (Unicode code points) and lines…
  text_transform   text  read-only  Rewrites a text: "upper" or "lower" case, "title" case, or "…
  text_sort_lines  text  read-only  Sorts the lines of a text alphabetically, optionally droppin…
warnings: none
`, out.String())

	ctx := context.Background()
	skipped, err := mcp.Discover(ctx, []config.Server{{Name: "gh", URL: "https://example.com/mcp",
		Auth: &config.Auth{Type: config.AuthBearer, TokenEnv: "MINIME_TEST_UNSET_TOKEN"}}}, nil)
	require.NoError(t, err)
	defer skipped.Close(ctx)
	out.Reset()
	PrintBanner(&out, skipped)
	assert.Contains(t, out.String(), "  gh  skipped  mcp: token environment variable is not set: MINIME_TEST_UNSET_TOKEN\n")
	assert.Contains(t, out.String(), "warnings:\n  gh: server-skipped:")
}

func TestPrintModel(t *testing.T) {
	var out bytes.Buffer
	PrintModel(&out, &agent.OpenAI{BaseURL: "http://localhost:11434/v1", Model: "qwen3:4b"})
	PrintModel(&out, &agent.OpenAI{BaseURL: "https://api.openai.com/v1", Model: "gpt-4o-mini"})
	PrintModel(&out, &agent.OpenAI{BaseURL: "https://llm.example/v1?api-key=s3cret", Model: "m"})
	assert.Equal(t, "model: qwen3:4b at http://localhost:11434/v1 (on this machine)\n"+
		"model: gpt-4o-mini at https://api.openai.com/v1 (HOSTED: tool results are sent to this provider)\n"+
		"model: m at https://llm.example/v1?… (HOSTED: tool results are sent to this provider)\n", out.String())
}

func TestRender(t *testing.T) {
	var out bytes.Buffer
	render := Render(&out)
	call := agent.ToolCall{ID: "1", Name: "text_count", Arguments: `{"text":"a"}`}
	for _, e := range []agent.Event{
		&agent.TextDelta{Turn: 1, Delta: agent.Delta{Reasoning: "hmm"}},
		&agent.TextDelta{Turn: 1, Delta: agent.Delta{Reasoning: "more"}},
		&agent.TextDelta{Turn: 1, Delta: agent.Delta{Text: "Let me count"}},
		&agent.TurnFinished{Turn: 1, ToolCalls: 1},
		&agent.ToolCallProposed{Turn: 1, Call: call},
		&agent.ToolResult{Turn: 1, Call: call, Status: agent.StatusOK, Output: "1 word\nfine", Duration: 1500 * time.Microsecond},
		&agent.ToolResult{Turn: 1, Call: call, Status: agent.StatusDenied, Output: "Permission denied"},
		&agent.Warning{Turn: 2, Message: "tools withheld"},
		&agent.TextDelta{Turn: 2, Delta: agent.Delta{Text: "One \x1b[31mword"}},
		&agent.TextDelta{Turn: 2, Delta: agent.Delta{Text: "."}},
		&agent.TurnFinished{Turn: 2},
	} {
		render(e)
	}
	assert.Equal(t, "(thinking…)\nLet me count\n"+
		"→ text_count {\"text\":\"a\"}\n"+
		"← ok text_count: 1 word⏎fine (1.5ms)\n"+
		"← denied text_count: Permission denied\n"+
		"warning: tools withheld\n"+
		"One �[31mword.\n", out.String())
}

func TestClean(t *testing.T) {
	for _, tc := range []struct{ in, one, text string }{
		{"plain", "plain", "plain"},
		{"two\nlines\ttab", "two⏎lines tab", "two\nlines\ttab"},
		{"esc\x1b[2Jclear", "esc�[2Jclear", "esc�[2Jclear"},
		{"bidi\u202eevil", "bidi�evil", "bidi�evil"},
		{"bad\xffutf8", "bad�utf8", "bad�utf8"},
		{"crlf\r\n", "crlf⏎", "crlf�\n"},
		{strings.Repeat("é", 25), strings.Repeat("é", 20) + "…", strings.Repeat("é", 20) + "…"},
	} {
		assert.Equal(t, tc.one, Clean(tc.in, 20), "%q", tc.in)
		assert.Equal(t, tc.text, CleanText(tc.in, 20), "%q", tc.in)
	}
	assert.Equal(t, "  a\n  b", Indent("a\nb", "  "))
}

func TestReadLines(t *testing.T) {
	var got []string
	for line := range ReadLines(strings.NewReader("one\r\ntwo\n\nlast")) {
		got = append(got, line)
	}
	assert.Equal(t, []string{"one", "two", "", "last"}, got)
}

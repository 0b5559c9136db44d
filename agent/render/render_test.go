package render_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/openai"
	"git.rickub.com/bots-garden/mini-me/agent/render"
	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
	"git.rickub.com/bots-garden/mini-me/permission"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func tool(def string) mcptest.Tool { return mcptest.Tool{Def: json.RawMessage(def)} }

func TestBanner(t *testing.T) {
	srv := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{
		tool(`{"name":"count","description":"Counts\nthe words \u001b[31mof a text.","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`),
		tool(`{"name":"save","description":"Saves a note.","inputSchema":{"type":"object"},"annotations":{"destructiveHint":false}}`),
		tool(`{"name":"delete","description":"Deletes a note.","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true}}`),
		tool(`{"name":"run","description":"Runs a command.","inputSchema":{"type":"object"}}`),
		tool(`{"name":"long","description":"` + strings.Repeat("A long description. ", 10) + `","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`),
	}}
	url := srv.Start()
	defer srv.Close()
	ctx := context.Background()
	tools, err := toolset.Discover(ctx, []config.Server{{Name: "notes", URL: url}}, nil)
	require.NoError(t, err)
	defer tools.Shutdown(ctx)
	var out bytes.Buffer
	render.Banner(&out, tools)
	s := out.String()
	assert.Regexp(t, `^servers:\n  notes  modern \(2026-07-28\)  \S+ \S+, 5 tools\n`, s)
	for _, line := range strings.Split(s, "\n") {
		assert.LessOrEqual(t, utf8.RuneCountInString(line), render.Width, "fits the terminal: %q", line)
	}
	assert.Contains(t, s, "tools:\n"+
		"  notes_count   notes  read-only     Counts⏎the words �[31mof a text.\n"+
		"  notes_save    notes  writes        Saves a note.\n"+
		"  notes_delete  notes  destructive   Deletes a note.\n"+
		"  notes_run     notes  destructive*  Runs a command.\n"+
		"  notes_long    notes  read-only     A long description. A long description. A …\n"+
		"warnings: none\n")

	skipped, err := toolset.Discover(ctx, []config.Server{{Name: "gh", URL: "https://example.com/mcp",
		Auth: &config.Auth{Type: config.AuthBearer, TokenEnv: "MINIME_TEST_UNSET_TOKEN"}}}, nil)
	require.NoError(t, err)
	defer skipped.Shutdown(ctx)
	out.Reset()
	render.Banner(&out, skipped)
	assert.Contains(t, out.String(), "  gh  skipped  mcp: token missing: environment variable MINIME_TEST_UNSET_TOKEN is not set\n")
	assert.Contains(t, out.String(), "warnings:\n  gh: server-skipped:")
}

func TestModel(t *testing.T) {
	var out bytes.Buffer
	render.Model(&out, &openai.Model{BaseURL: "http://localhost:11434/v1", Model: "qwen3:4b"})
	render.Model(&out, &openai.Model{BaseURL: "https://api.openai.com/v1", Model: "gpt-4o-mini"})
	render.Model(&out, &openai.Model{BaseURL: "https://llm.example/v1?api-key=s3cret", Model: "m"})
	assert.Equal(t, "model: qwen3:4b at http://localhost:11434/v1 (on this machine)\n"+
		"model: gpt-4o-mini at https://api.openai.com/v1 (HOSTED: tool results are sent to this provider)\n"+
		"model: m at https://llm.example/v1?… (HOSTED: tool results are sent to this provider)\n", out.String())
}

func TestEvents(t *testing.T) {
	var out bytes.Buffer
	events := render.Events(&out)
	call := agent.ToolCall{ID: "1", Name: "text_count", Arguments: `{"text":"a"}`}
	for _, e := range []agent.Event{
		&agent.TextDelta{Turn: 1, Delta: agent.Delta{Reasoning: "hmm"}},
		&agent.TextDelta{Turn: 1, Delta: agent.Delta{Reasoning: "more"}},
		&agent.TextDelta{Turn: 1, Delta: agent.Delta{Text: "Let me count"}},
		&agent.TurnFinished{Turn: 1, ToolCalls: 1},
		&agent.ToolCallProposed{Turn: 1, Call: call},
		&agent.ToolStatus{Turn: 1, Call: call, Task: mcp.TaskStatus{TaskID: "7f3a", Status: mcp.TaskWorking, Message: "Counting\x1b[2J..."}},
		&agent.ElicitationRequested{Turn: 1, Call: call, Elicitation: permission.Elicitation{Server: "crm", Mode: "form", Message: "Name?\x1b[2J"}},
		&agent.ElicitationAnswered{Turn: 1, Call: call, Server: "crm", Action: "accept"},
		&agent.ElicitationRequested{Turn: 1, Call: call, Elicitation: permission.Elicitation{Server: "crm", Mode: "url", Message: "Sign in", URL: "https://auth.example/x"}, Site: "auth.example"},
		&agent.ElicitationAnswered{Turn: 1, Call: call, Server: "crm", Err: errors.New("withdrawn")},
		&agent.ToolFinished{Turn: 1, Call: call, Status: agent.StatusOK, Output: "1 word\nfine", Duration: 1500 * time.Microsecond},
		&agent.ToolFinished{Turn: 1, Call: call, Status: agent.StatusDenied, Output: "Permission denied"},
		&agent.SkillLoaded{Turn: 1, Skill: "haiku", File: "SKILL.md", Bytes: 107, Verified: true},
		&agent.SkillLoaded{Turn: 1, Skill: "notes_forms", File: "FORMS.md", Err: errors.New("digest\nmismatch")},
		&agent.Warning{Turn: 2, Message: "tools withheld"},
		&agent.TextDelta{Turn: 2, Delta: agent.Delta{Text: "One \x1b[31mword"}},
		&agent.TextDelta{Turn: 2, Delta: agent.Delta{Text: "."}},
		&agent.TurnFinished{Turn: 2},
	} {
		events(e)
	}
	assert.Equal(t, "(thinking…)\nLet me count\n"+
		"→ text_count {\"text\":\"a\"}\n"+
		"… text_count task 7f3a: working Counting�[2J...\n"+
		"? crm asks for a form: Name?�[2J\n"+
		"? crm was answered accept\n"+
		"? crm asks to open a page on AUTH.EXAMPLE: https://auth.example/x (Sign in)\n"+
		"? crm was sent no answer: withdrawn\n"+
		"← ok text_count: 1 word⏎fine (1.5ms)\n"+
		"← denied text_count: Permission denied\n"+
		"skill haiku: SKILL.md, 107 bytes, verified\n"+
		"skill notes_forms: FORMS.md not loaded: digest⏎mismatch\n"+
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
		assert.Equal(t, tc.one, render.Clean(tc.in, 20), "%q", tc.in)
		assert.Equal(t, tc.text, render.CleanText(tc.in, 20), "%q", tc.in)
	}
}

func TestSkills(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "haiku"), 0o755))
	md := "---\nname: haiku\ndescription: Write a haiku\u202e on a subject\n---\nThree lines.\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "haiku", "SKILL.md"), []byte(md), 0o600))
	ctx := context.Background()
	tools, err := toolset.Discover(ctx, nil, &toolset.Options{SkillFolders: []string{dir}})
	require.NoError(t, err)
	defer tools.Shutdown(ctx)
	var out bytes.Buffer
	render.Banner(&out, tools)
	assert.Contains(t, out.String(), "skills:\n  haiku  (local)  Write a haiku� on a subject\nwarnings: none\n")

	empty, err := toolset.Discover(ctx, nil, nil)
	require.NoError(t, err)
	defer empty.Shutdown(ctx)
	out.Reset()
	render.Skills(&out, empty)
	assert.Empty(t, out.String(), "no skills, no heading")
	render.Banner(&out, empty)
	assert.Equal(t, "servers: none\ntools: none\nwarnings: none\n", out.String())
}

func TestTranscript(t *testing.T) {
	var out bytes.Buffer
	render.Transcript(&out, []agent.Message{
		agent.SystemMessage("Be brief."),
		{Role: agent.RoleUser, Parts: []agent.Part{agent.TextPart("What is\x1b[2J this?"), agent.ImagePart("image/png", []byte("1234"))}},
		{Role: agent.RoleAssistant, Parts: []agent.Part{
			agent.ReasoningPart("p", "A picture;\nlook closer.", "sig"),
			{Kind: agent.PartReasoning, Provider: "q", Signature: "opaque"},
			agent.TextPart("Let me see."),
			agent.CallPart(agent.ToolCall{ID: "1", Name: "zoom", Arguments: `{"x":2}`}),
		}},
		{Role: agent.RoleTool, ToolCallID: "1", Name: "zoom", Parts: []agent.Part{agent.ToolResultPart("a cat, very long")}},
		{Role: agent.RoleAssistant, Parts: agent.Parts("A cat.")},
	}, 12)
	assert.Equal(t, "system: Be brief.\n"+
		"user: What is�[2J … [image image/png, 4 bytes]\n"+
		"model:\n  (thought: A picture;⏎l…)\n  (thought, hidden) Let me see.\n  → zoom {\"x\":2}\n"+
		"← zoom: a cat, very …\n"+
		"model: A cat.\n", out.String())
}

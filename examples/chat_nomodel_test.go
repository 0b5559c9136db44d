package examples_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/examples/demo"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
)

// Without a model the chat still starts, in a real terminal, with its
// servers connected: it says the model is missing, lists the tools,
// servers, prompts and resources, calls a tool directly through the
// approval prompt, and refuses a question politely.
func TestChatWithoutModelInTerminal(t *testing.T) {
	text, stop, err := demo.Serve(demo.Text())
	require.NoError(t, err)
	t.Cleanup(stop)
	catalog := &mcptest.Server{Versions: []string{mcptest.Modern}, Catalog: &mcptest.Catalog{
		Prompts: []mcptest.Prompt{{
			Def:      json.RawMessage(`{"name":"monthly_review","description":"Review a month.","arguments":[{"name":"month","required":true}]}`),
			Messages: json.RawMessage(`[{"role":"user","content":{"type":"text","text":"Review {month}."}}]`),
		}},
		Resources: []mcptest.Resource{todoResource},
	}}
	t.Cleanup(catalog.Close)
	cfg := filepath.Join(t.TempDir(), "mini-me.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(
		"mcp:\n  permissions: ask\n  servers:\n    - name: text\n      url: %s\n    - name: finance\n      url: %s\n", text, catalog.Start())), 0o600))

	tm := newTmux(t, append(environ(t, "XDG_CONFIG_HOME="+t.TempDir()), "TERM=xterm"))
	tm.must("new-session", "-d", "-s", "chat", "-x", "200", "-y", "50", filepath.Join(bin, "chat"), "-config", cfg,
		";", "set-option", "-t", "chat", "remain-on-exit", "on")
	s := tm.waitFor("you> ", 1)
	assert.Contains(t, s, "No model is configured")
	assert.Contains(t, s, "No model: a question cannot be answered")

	tm.say("/tools", "text_count       text  read-only", 2)
	tm.waitFor("you> ", 2)
	tm.say("/servers", "finance  modern (2026-07-28)", 2)
	tm.waitFor("you> ", 3)
	tm.say("/prompts", "/finance_monthly_review month  Review a month.", 1)
	tm.waitFor("you> ", 4)
	tm.say("/resources", "@file:///todo.txt  (finance, todo)", 1)
	tm.waitFor("you> ", 5)

	tm.say(`/call text_count {"text":"hello tmux world"}`, "Allow? y: once", 1)
	tm.say("y", "← ok text_count:", 1)
	tm.waitFor("3 words, 16 characters, 1 line", 1)
	tm.waitFor("you> ", 6)
	tm.say(`/call text_count {"text":"not this one"}`, "Allow? y: once", 2)
	tm.say("n not now", "← not run (deny: not now)", 1)
	tm.waitFor("you> ", 7)
	tm.say("/call nowhere {}", "(no tool nowhere: /tools lists them)", 1)
	tm.waitFor("you> ", 8)
	tm.say("/call text_count [1]", "are not a JSON object", 1)
	tm.waitFor("you> ", 9)

	tm.say("How many words in: hello?", "(no model: not sent", 1)
	tm.waitFor("you> ", 10)
	tm.say("/help", "/call NAME {json}", 2)
	tm.waitFor("you> ", 11)
	tm.typeLine("/quit")
	s = tm.waitFor("bye", 1)
	assert.NotContains(t, s, "goroutine ", "no stack trace")
	assert.Equal(t, 2, strings.Count(s, "Allow? y: once"), "one approval asked per /call")
}

// chat -help lists every flag and every command.
func TestChatHelp(t *testing.T) {
	out, code := run(t, environ(t), "", "chat", "-help")
	assert.Equal(t, 0, code, out)
	for _, want := range []string{"-config", "MINIME_MODEL_URL", "/tools", "/servers", "/prompts", "/<prompt> [args]", "/resources", "/roots", "@<uri>",
		"/call NAME {json}", "/status", "/history", "!N", "/transcript", "/clear", "/help", "/quit", "Ctrl-C"} {
		assert.Contains(t, out, want)
	}
}

// Without a model, a question attaching a resource of a local-only server
// is refused (no model is known to be local), and nothing panics.
func TestChatWithoutModelLocalResource(t *testing.T) {
	catalog := &mcptest.Server{Versions: []string{mcptest.Modern}, Catalog: &mcptest.Catalog{
		Resources: []mcptest.Resource{todoResource},
	}}
	t.Cleanup(catalog.Close)
	cfg := filepath.Join(t.TempDir(), "mini-me.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(
		"mcp:\n  servers:\n    - name: finance\n      url: %s\n      egress: local\n", catalog.Start())), 0o600))
	out, code := run(t, environ(t, "XDG_CONFIG_HOME="+t.TempDir()), "What is in @file:///todo.txt ?\n/quit\n", "chat", "-config", cfg)
	assert.Equal(t, 0, code, out)
	assert.NotContains(t, out, "panic")
	assert.Contains(t, out, "local")
	assert.Contains(t, out, "bye")
}

// todoResource is a server's resource, file:///todo.txt.
var todoResource = mcptest.Resource{
	Def:      json.RawMessage(`{"uri":"file:///todo.txt","name":"todo"}`),
	Contents: json.RawMessage(`[{"uri":"file:///todo.txt","text":"buy milk"}]`),
}

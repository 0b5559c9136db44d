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

	"git.rickub.com/bots-garden/mini-me/agent/openai/openaitest"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
)

// askClient is a call of the finance server's ask_client tool: the server
// sends method(params) to the chat, and returns its answer.
func askClient(id, method string, params any) openaitest.Turn {
	args, _ := json.Marshal(map[string]any{"method": method, "params": params})
	return call(id, "fin_ask_client", string(args))
}

// The servers' requests in the chat, in a real terminal: a sampling
// request approved and its answer reviewed, a form filled in, a URL
// consented to, and a folder shared with /roots, each reaching the
// (2025-11-25, stdio) server that asked.
func TestChatRequestsFromServers(t *testing.T) {
	finance := mcptest.BuildFinance(t)
	llm, url := model(t,
		askClient("c1", "sampling/createMessage", map[string]any{"maxTokens": 20, "systemPrompt": "Be brief.",
			"messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "Say hello in French"}}}}),
		openaitest.Turn{Text: "Bonjour !"}, // the sampling request
		openaitest.Turn{Text: "The server got its greeting."},
		askClient("c2", "elicitation/create", map[string]any{"message": "Who are you?",
			"requestedSchema": map[string]any{"type": "object", "required": []string{"name"}, "properties": map[string]any{
				"name": map[string]any{"type": "string", "title": "Name"},
				"plan": map[string]any{"type": "string", "enum": []string{"free", "pro"}, "default": "free"}}}}),
		openaitest.Turn{Text: "Form sent."},
		askClient("c3", "elicitation/create", map[string]any{"mode": "url", "url": "https://login.example.com/start", "message": "Sign in", "elicitationId": "e1"}),
		openaitest.Turn{Text: "Signed in."},
		askClient("c4", "roots/list", nil),
		openaitest.Turn{Text: "I see your folder."})
	dir := t.TempDir()
	shared := filepath.Join(dir, "project")
	require.NoError(t, os.Mkdir(shared, 0o700))
	yaml := fmt.Sprintf("mcp:\n  permissions: ask\n  servers:\n    - name: fin\n      command: %s\n      args: [\"-era\", \"legacy\"]\n", finance)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "mini-me.yaml"), []byte(yaml), 0o600))
	tm := newTmux(t, append(environ(t, "MINIME_MODEL_URL="+url, "XDG_CONFIG_HOME="+t.TempDir()), "TERM=xterm"))
	tm.must("new-session", "-d", "-s", "chat", "-x", "200", "-y", "50", "-c", dir, filepath.Join(bin, "chat"),
		";", "set-option", "-t", "chat", "remain-on-exit", "on")
	tm.waitFor("you> ", 1)

	// Sampling: the tool call, then the server's request, then its answer.
	tm.say("Greet the server", "Allow? y: once", 1)
	s := tm.say("y", "A server asks to use your model (sampling)", 1)
	assert.Contains(t, s, "system prompt: Be brief.")
	assert.Contains(t, s, "Say hello in French")
	assert.Contains(t, s, "max tokens:    20")
	s = tm.say("y", "Send it? y: send", 1)
	assert.Contains(t, s, "Bonjour !")
	s = tm.say("y", "The server got its greeting.", 1)
	assert.Contains(t, s, `"model":"demo-model"`, "the server's result, shown as the tool's output")
	tm.waitFor("you> ", 2)

	// A form, field by field.
	tm.say("Tell it who I am", "Allow? y: once", 2)
	tm.say("y", "Fill in the form? y: yes", 1)
	tm.say("y", "Name (name) [string, required]", 1)
	tm.say("Ada", "plan [string]", 1)
	s = tm.say("", "Send? y: send", 1) // the default plan
	assert.Contains(t, s, `"plan": "free"`)
	s = tm.say("y", "Form sent.", 1)
	assert.Contains(t, s, `"name":"Ada"`)
	tm.waitFor("you> ", 3)

	// A URL: shown, never opened.
	tm.say("Sign me in", "Allow? y: once", 3)
	s = tm.say("y", "o: I open it | n: decline | c: cancel", 1)
	assert.Contains(t, s, "site:    LOGIN.EXAMPLE.COM")
	tm.say("o", "Signed in.", 1)
	tm.waitFor("you> ", 4)

	// Roots: none until one is shared.
	tm.say("/roots", "(no roots: servers see no folder of yours", 1)
	tm.say("/roots add "+shared, "  1  file://"+shared, 1)
	tm.say("What do you see?", "Allow? y: once", 4)
	s = tm.say("y", "I see your folder.", 1)
	assert.Contains(t, s, "file://"+shared)

	reqs := llm.Requests()
	require.Len(t, reqs, 9)
	sampling := reqs[1]
	assert.Equal(t, "Be brief.", sampling.Messages[0].Content, "the sampling request went to the model alone")
	assert.Equal(t, "Say hello in French", sampling.Messages[1].Content)
	assert.Empty(t, sampling.Tools, "no tools in that request")
	results := toolResults(t, llm, 9)
	assert.True(t, strings.Contains(results[len(results)-1], "file://"+shared))
	tm.typeLine("/quit")
	tm.waitFor("bye", 1)
}

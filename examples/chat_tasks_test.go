package examples_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent/openai/openaitest"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
)

// A task-backed tool in the chat, in a real terminal: called by the
// model, then with /call, each of its steps is printed while it runs
// (tasks are on by default), then its result. The roots of the
// configuration are the chat's first roots.
func TestChatTaskProgressAndRoots(t *testing.T) {
	steps := make(chan chan struct{})
	srv := &mcptest.Server{Versions: []string{mcptest.Modern}, Tasks: &mcptest.Tasks{PollInterval: 5 * time.Millisecond},
		Tools: []mcptest.Tool{{
			Def: json.RawMessage(`{"name":"research","description":"Research a topic","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}`),
			Task: func(ctx context.Context, _ json.RawMessage, run *mcptest.TaskRun) (any, error) {
				for _, step := range []string{"reading sources", "writing the report"} {
					run.Working(step)
					next := make(chan struct{})
					select {
					case steps <- next:
					case <-ctx.Done():
						return nil, ctx.Err()
					}
					select {
					case <-next:
					case <-ctx.Done():
						return nil, ctx.Err()
					}
				}
				return map[string]any{"content": []any{map[string]any{"type": "text", "text": "the report"}}}, nil
			},
		}}}
	mcpURL := srv.Start()
	t.Cleanup(srv.Close)
	_, url := model(t,
		call("c1", "lab_research", `{}`),
		openaitest.Turn{Text: "The research is done."})
	dir := t.TempDir()
	yaml := fmt.Sprintf("mcp:\n  permissions: auto\n  roots: [%q]\n  servers:\n    - name: lab\n      url: %s\n", dir, mcpURL)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "mini-me.yaml"), []byte(yaml), 0o600))
	tm := newTmux(t, append(environ(t, "MINIME_MODEL_URL="+url, "XDG_CONFIG_HOME="+t.TempDir()), "TERM=xterm"))
	tm.must("new-session", "-d", "-s", "chat", "-x", "200", "-y", "50", "-c", dir, filepath.Join(bin, "chat"),
		";", "set-option", "-t", "chat", "remain-on-exit", "on")
	s := tm.waitFor("you> ", 1)
	assert.Contains(t, s, "lab_research", "a tool that runs only as a task is offered by default")

	// Each step is on the screen while the task waits at it.
	follow := func(n int) {
		for _, step := range []string{"reading sources", "writing the report"} {
			next := <-steps
			tm.waitFor(": working "+step, n)
			close(next)
		}
	}
	tm.typeLine("Research it")
	follow(1)
	s = tm.waitFor("The research is done.", 1)
	assert.Contains(t, s, "← ok lab_research: the report")
	tm.waitFor("you> ", 2)

	tm.typeLine("/call lab_research {}")
	follow(2)
	s = tm.waitFor("← ok lab_research:", 1)
	assert.Regexp(t, `… lab_research task \S+: working reading sources`, s)
	tm.waitFor("you> ", 3)
	tm.say("/roots", "  1  file://"+dir, 1)
	tm.typeLine("/quit")
	tm.waitFor("bye", 1)
}

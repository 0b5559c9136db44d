package examples_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/examples/demo"
)

// startChat starts the chat without a model in a real terminal, on the
// configuration yaml, with args, and waits for its first prompt.
func startChat(t *testing.T, yaml string, args ...string) *tmux {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "mini-me.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(yaml), 0o600))
	tm := newTmux(t, append(environ(t, "XDG_CONFIG_HOME="+t.TempDir()), "TERM=xterm"))
	cmd := append([]string{"new-session", "-d", "-s", "chat", "-x", "200", "-y", "50", filepath.Join(bin, "chat"), "-config", cfg}, args...)
	tm.must(append(cmd, ";", "set-option", "-t", "chat", "remain-on-exit", "on")...)
	tm.waitFor("you> ", 1)
	return tm
}

// /call checks the arguments against the tool's input schema before it
// asks for approval: arguments the tool refuses are told at once, with
// every problem, and nobody is asked to approve them.
func TestChatCallChecksArguments(t *testing.T) {
	text, stop, err := demo.Serve(demo.Text())
	require.NoError(t, err)
	t.Cleanup(stop)
	tm := startChat(t, fmt.Sprintf("mcp:\n  permissions: ask\n  servers:\n    - name: text\n      url: %s\n", text))

	s := tm.say(`/call text_count {"text":3}`, "do not match the tool's input schema", 1)
	tm.waitFor("you> ", 2)
	assert.Contains(t, s, "invalid tool arguments: text_count")
	tm.say(`/call text_count {}`, `missing required property "text"`, 1)
	tm.waitFor("you> ", 3)
	assert.NotContains(t, tm.screen(), "Allow?", "no approval asked for arguments the schema refuses")

	tm.say(`/call text_count {"text":"still asked"}`, "Allow? y: once", 1)
	tm.say("y", "2 words", 1)
	tm.waitFor("you> ", 4)
	tm.typeLine("/quit")
	tm.waitFor("bye", 1)
}

// A stdio server that writes to its stderr while an approval question is
// open: the line goes to the file -log names, and the terminal shows the
// question alone.
func TestChatServerStderrNotInTerminal(t *testing.T) {
	dir := t.TempDir()
	trigger, logFile := filepath.Join(dir, "speak"), filepath.Join(dir, "servers.log")
	// The server (the stdio example's ledger) writes a line to its stderr
	// once the trigger file exists; the writer gives up after 30 s.
	script := `i=0; (while [ ! -e "$1" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; echo "ledger noise on stderr" >&2) & exec "$2" --serve-mcp`
	yaml := fmt.Sprintf("mcp:\n  permissions: ask\n  servers:\n    - name: finance\n      command: sh\n      args: [%q, %q, sh, %q, %q]\n",
		"-c", script, trigger, filepath.Join(bin, "stdio"))
	tm := startChat(t, yaml, "-log", logFile)

	tm.say(`/call finance_select_profile {"profile":"perso"}`, "Allow? y: once", 1)
	require.NoError(t, os.WriteFile(trigger, nil, 0o600))
	deadline := time.Now().Add(15 * time.Second)
	for {
		b, _ := os.ReadFile(logFile)
		if strings.Contains(string(b), "ledger noise on stderr") {
			assert.Contains(t, string(b), "server=finance")
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server's stderr never reached the log; it holds:\n%s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	assert.NotContains(t, tm.screen(), "ledger noise", "the server's stderr is not in the terminal")
	s := tm.say("y", "← ok finance_select_profile", 1)
	assert.NotContains(t, s, "ledger noise")
	tm.waitFor("you> ", 2)
	tm.typeLine("/quit")
	tm.waitFor("bye", 1)
}

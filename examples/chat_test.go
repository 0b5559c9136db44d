package examples_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent/openai/openaitest"
)

// tmux drives a program in a real pseudo-terminal, through a tmux server
// of the test's own (a private socket in the test's temporary directory),
// which it kills when done.
type tmux struct {
	t      *testing.T
	path   string
	socket string
	env    []string
}

func newTmux(t *testing.T, env []string) *tmux {
	path, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tmux is required to test the chat in a terminal, and CI is set: install it (.ci/run does)")
		}
		t.Skip("tmux is not installed, so the chat cannot be tested in a terminal (apt-get install tmux)")
	}
	tm := &tmux{t: t, path: path, socket: filepath.Join(t.TempDir(), fmt.Sprintf("minime-test-%d", os.Getpid())), env: env}
	t.Cleanup(func() { _, _ = tm.run("kill-server") }) // the socket goes with the directory
	return tm
}

func (tm *tmux) run(args ...string) (string, error) {
	cmd := exec.Command(tm.path, append([]string{"-S", tm.socket, "-f", "/dev/null"}, args...)...)
	cmd.Env = tm.env // the server, and so the program it runs, get this environment
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (tm *tmux) must(args ...string) string {
	tm.t.Helper()
	out, err := tm.run(args...)
	require.NoError(tm.t, err, "tmux %s: %s", strings.Join(args, " "), out)
	return out
}

// screen returns everything the pane has shown, scrollback included, with
// wrapped lines joined.
func (tm *tmux) screen() string {
	return tm.must("capture-pane", "-p", "-J", "-S", "-", "-t", "chat")
}

// waitFor waits until the pane has shown want n times.
func (tm *tmux) waitFor(want string, n int) string {
	tm.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		s := tm.screen()
		if strings.Count(s, want) >= n {
			return s
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("the terminal never showed %q (%d times); it shows:\n%s", want, n, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// interrupt presses Ctrl-C, then waits until the pane has shown
// "(stopped)" stopped times and the prompt prompts times.
func (tm *tmux) interrupt(stopped, prompts int) {
	tm.t.Helper()
	tm.must("send-keys", "-t", "chat", "C-c")
	tm.waitFor("(stopped)", stopped)
	tm.waitFor("you> ", prompts)
}

// say types line, then waits until the pane has shown want n times.
func (tm *tmux) say(line, want string, n int) string {
	tm.t.Helper()
	tm.typeLine(line)
	return tm.waitFor(want, n)
}

// typeLine types text and Enter.
func (tm *tmux) typeLine(text string) {
	tm.must("send-keys", "-t", "chat", "-l", text)
	tm.must("send-keys", "-t", "chat", "Enter")
}

// The chat as a person uses it, in a real terminal: a question, a tool
// call approved at the prompt, the streamed answer, a command, a second
// question stopped with Ctrl-C, a third one that still knows the
// conversation, the other commands, and /quit.
func TestChatInTerminal(t *testing.T) {
	llm, url := model(t,
		call("c1", "text_count", `{"text":"hello tmux world"}`),
		openaitest.Turn{Text: "That text has 3 words."},
		openaitest.Turn{Text: "Let me think about it", Hang: true},
		openaitest.Turn{Text: "Back again."},
		openaitest.Turn{Text: "Hello, stranger."},
		openaitest.Turn{Text: "Back once more."},
		call("c2", "text_count", `{"text":"never run"}`),
		openaitest.Turn{Text: "Still here."})
	dir := t.TempDir()
	demoConfig(t, dir)
	tm := newTmux(t, append(environ(t, "MINIME_MODEL_URL="+url, "XDG_CONFIG_HOME="+t.TempDir()), "TERM=xterm"))
	// A shell records the chat's exit status, which tmux does not always
	// collect before the pane closes; its trap keeps Ctrl-C from ending it
	// (the chat gets the default handling back).
	status := filepath.Join(t.TempDir(), "status")
	tm.must("new-session", "-d", "-s", "chat", "-x", "200", "-y", "50", "-c", dir,
		"sh", "-c", `trap : INT; "$1"; echo "exit $?" > "$2"`, "sh", filepath.Join(bin, "chat"), status,
		";", "set-option", "-t", "chat", "remain-on-exit", "on")

	tm.waitFor("you> ", 1)
	s := tm.screen()
	assert.Contains(t, s, "text_count         text   read-only")
	assert.Contains(t, s, "model: demo-model at "+url)

	tm.say("How many words in: hello tmux world?", "Allow? y: once", 1)
	s = tm.say("a", "That text has 3 words.", 1) // always: until /clear
	assert.Contains(t, s, "← ok text_count: 3 words, 16 characters, 1 line")
	s = tm.waitFor("[demo-model · text, notes (7 tools) · last answer: 2 turns, ", 1)
	assert.Contains(t, s, "mini-me chat (mini-me.yaml)")
	tm.waitFor("you> ", 2)

	tm.say("/tools", "notes_delete_note  notes  destructive", 2)
	tm.waitFor("you> ", 3)

	tm.say("Think about it", "Let me think about it", 1)
	tm.interrupt(1, 4)

	tm.say("Are you there?", "Back again.", 1)
	tm.waitFor("you> ", 5)
	tm.say("/servers", "notes  legacy (2025-11-25)  demo-notes 1.0.0, 4 tools", 2)
	tm.say("/clear", "(conversation cleared, and the approvals given for the session)", 1)
	tm.say("Hello?", "Hello, stranger.", 1)
	tm.say("/what", "(no command /what)", 1)
	tm.waitFor("/call NAME {json}", 1)
	tm.waitFor("you> ", 9)
	tm.say("/history", "  4  Hello?", 1)
	tm.say("!3", "Back once more.", 1)
	tm.waitFor("you> ", 12) // the prompt, !3 echoed as a question, the prompt after it

	// The "always" of the first call went with /clear: the call is asked.
	// Ctrl-C at the approval withdraws the question and stops the turn;
	// the next line typed is the next question, not a lost answer.
	tm.say("Count again", "Allow? y: once", 2)
	tm.interrupt(2, 13)
	tm.say("Still there?", "Still here.", 1)
	tm.waitFor("you> ", 14)
	tm.typeLine("/quit")
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(status)
		if strings.HasSuffix(string(b), "\n") {
			assert.Equal(t, "exit 0\n", string(b), "the chat's exit status after /quit")
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the chat did not exit after /quit:\n%s", tm.screen())
		}
		time.Sleep(50 * time.Millisecond)
	}
	s = tm.screen()
	assert.Contains(t, s, "you> /quit\nbye\n")
	assert.NotContains(t, s, "goroutine ", "no stack trace")

	reqs := llm.Requests()
	require.Len(t, reqs, 8)
	users := func(req openaitest.Request) []string {
		var out []string
		for _, m := range req.Messages {
			if m.Role == "user" {
				out = append(out, m.Content)
			}
		}
		return out
	}
	assert.Equal(t, []string{"How many words in: hello tmux world?", "Think about it", "Are you there?"}, users(reqs[3]),
		"the conversation survives the stopped turn")
	assert.Equal(t, []string{"Hello?"}, users(reqs[4]), "/clear forgets the conversation")
	assert.Equal(t, []string{"Hello?", "Are you there?"}, users(reqs[5]), "!3 asks the third question again")
	assert.Equal(t, []string{"Hello?", "Are you there?", "Count again", "Still there?"}, users(reqs[7]),
		"the line typed after Ctrl-C at an approval is the next question")
}

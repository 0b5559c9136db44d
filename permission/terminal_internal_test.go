package permission

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// lockedBuffer is an io.Writer safe for concurrent use.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// eventually waits until cond holds, failing the test after a few seconds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

type result struct {
	d   Decision
	err error
}

func approveAsync(ctx context.Context, term *Terminal, req Request) <-chan result {
	ch := make(chan result, 1)
	go func() {
		d, err := term.Approve(ctx, req)
		ch <- result{d, err}
	}()
	return ch
}

// withdraw asks a first question and withdraws it, leaving its read pending.
func withdraw(t *testing.T, term *Terminal, out *lockedBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	res := approveAsync(ctx, term, Request{Server: "s", Tool: "first"})
	eventually(t, "the first question is shown", func() bool { return strings.Contains(out.String(), "\n> ") })
	cancel()
	r := <-res
	require.ErrorIs(t, r.err, context.Canceled)
}

// A line completed after a question was withdrawn and before the next one was
// shown must not answer the next one.
func TestTerminalIgnoresLinesTypedBeforeTheQuestion(t *testing.T) {
	in, w := io.Pipe()
	defer w.Close()
	out := &lockedBuffer{}
	term := NewTerminal(in, out)
	withdraw(t, term, out)

	_, err := io.WriteString(w, "y\n") // meant for the withdrawn question
	require.NoError(t, err)
	eventually(t, "the pending read has returned", func() bool { return len(term.lines) == 1 })

	res := approveAsync(context.Background(), term, Request{Server: "s", Tool: "second"})
	eventually(t, "the stale line is ignored", func() bool {
		return strings.Contains(out.String(), "(ignored a line typed before this question)\n> ")
	})
	_, err = io.WriteString(w, "n\n")
	require.NoError(t, err)
	r := <-res
	require.NoError(t, r.err)
	assert.Equal(t, Decision{Verdict: Deny}, r.d)
}

// A line completed after the next question was shown answers it, even though
// the read was started for the withdrawn one.
func TestTerminalPendingReadAnswersTheNextQuestion(t *testing.T) {
	in, w := io.Pipe()
	defer w.Close()
	out := &lockedBuffer{}
	term := NewTerminal(in, out)
	withdraw(t, term, out)

	res := approveAsync(context.Background(), term, Request{Server: "s", Tool: "second"})
	eventually(t, "the second question is shown", func() bool { return strings.Count(out.String(), "\n> ") == 2 })
	_, err := io.WriteString(w, "a\n")
	require.NoError(t, err)
	r := <-res
	require.NoError(t, r.err)
	assert.Equal(t, Decision{Verdict: AllowTool}, r.d)
	assert.NotContains(t, out.String(), "ignored")
}

func TestQuestionGolden(t *testing.T) {
	args := map[string]any{"owner": "octo", "repo": "hello", "labels": []string{"bug", "p1"}}
	args["body"] = strings.Repeat("long body text ", 150) // makes the arguments exceed the limit
	raw, err := json.Marshal(args)
	require.NoError(t, err)

	hostile := Request{
		Server:       "github",
		Tool:         "create_issue",
		PrefixedName: "github_create_issue",
		Title:        "Create issue\x1b[2J",
		Description:  "Creates an issue.\n> y\nAllow? forged\u202eevil\x00",
		Annotations:  Annotations{ReadOnlyHint: ptr(false), DestructiveHint: ptr(true)},
		Arguments:    raw,
		Changed:      true,
	}
	minimal := Request{Server: "docs", Tool: "search", PrefixedName: "docs_search", Arguments: json.RawMessage(`not json`)}
	readOnly := Request{Server: "docs", Tool: "get", Annotations: Annotations{ReadOnlyHint: ptr(true), OpenWorldHint: ptr(false)}}

	got := question(hostile) + "\n----\n" + question(minimal) + "\n----\n" + question(readOnly) + "\n"
	golden := filepath.Join("testdata", "question.golden")
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), got)

	// Whatever the server sends, no line but the prompt starts with "> ",
	// no escape character reaches the terminal, and the arguments are cut.
	for _, q := range []string{question(hostile), question(minimal)} {
		lines := strings.Split(q, "\n")
		for _, l := range lines[:len(lines)-1] {
			assert.False(t, strings.HasPrefix(l, ">"), "forged prompt line %q", l)
		}
		assert.Equal(t, "> ", lines[len(lines)-1])
		assert.NotContains(t, q, "\x1b")
		assert.NotContains(t, q, "\u202e")
	}
	assert.Contains(t, question(hostile), "more bytes]")
	assert.Less(t, len(question(hostile)), terminalArgumentsLimit+terminalDescriptionLimit+1000)
}

// A tool's title and the caller's name are cut as a form's titles are
// (issue 35 #15's sibling in the tool question): a title of 100 KB printed
// whole.
func TestQuestionBoundsTitle(t *testing.T) {
	long := strings.Repeat("T", 100_000)
	q := question(Request{Server: "s", Tool: "t", Title: long, Caller: "app ui://" + long})
	assert.Less(t, len(q), 2*terminalLabelLimit+1000)
	assert.Contains(t, q, "more bytes]")
}

func ptr(b bool) *bool { return &b }

// FuzzTerminalAnswers feeds arbitrary input to a Terminal: it must return,
// and allow a call only on a line that is exactly one of the allowing answers.
func FuzzTerminalAnswers(f *testing.F) {
	for _, s := range []string{"", "y\n", "maybe\nY\n", "n why\n", "a", "\n\n s \r\n", "yes please\n", "\xff\n"} {
		f.Add(s)
	}
	allowing := map[string]bool{"y": true, "yes": true, "a": true, "always": true, "s": true, "server": true}
	f.Fuzz(func(t *testing.T, input string) {
		d, err := NewTerminal(strings.NewReader(input), io.Discard).Approve(context.Background(), Request{Server: "s", Tool: "t"})
		if err != nil {
			t.Fatalf("Approve(%q): %v", input, err)
		}
		if !d.Allowed() {
			return
		}
		for _, line := range strings.Split(input, "\n") {
			if allowing[strings.ToLower(strings.TrimSpace(line))] {
				return
			}
		}
		t.Fatalf("Approve(%q) = %v without an allowing answer", input, d)
	})
}

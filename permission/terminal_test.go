package permission_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/permission"
)

const prompt = "\n> "

type approval struct {
	d   permission.Decision
	err error
}

// approveAsync runs term.Approve on a goroutine.
func approveAsync(ctx context.Context, a permission.Approver, req permission.Request) <-chan approval {
	ch := make(chan approval, 1)
	go func() {
		d, err := a.Approve(ctx, req)
		ch <- approval{d, err}
	}()
	return ch
}

func await(t *testing.T, ch <-chan approval) approval {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(waitTimeout):
		t.Fatal("Approve did not return")
		return approval{}
	}
}

// pipeTerminal returns a Terminal reading from a pipe, the pipe's write end
// (closed at the end of the test, which ends any pending read) and its screen.
func pipeTerminal(t *testing.T) (*permission.Terminal, *io.PipeWriter, *screen) {
	t.Helper()
	r, w := io.Pipe()
	t.Cleanup(func() { w.Close() })
	scr := newScreen()
	return permission.NewTerminal(r, scr), w, scr
}

func TestTerminalAnswers(t *testing.T) {
	closed := permission.Decision{Verdict: permission.Deny, Reason: "no answer: the input was closed"}
	tests := []struct {
		name   string
		inputs []string // each written once the previous one was read
		eof    bool     // close the input after the inputs
		want   permission.Decision
		output string // the output must contain this
	}{
		{name: "y", inputs: []string{"y\n"}, want: permission.Decision{Verdict: permission.AllowOnce}},
		{name: "YES with spaces", inputs: []string{"  YES \n"}, want: permission.Decision{Verdict: permission.AllowOnce}},
		{name: "CRLF", inputs: []string{"y\r\n"}, want: permission.Decision{Verdict: permission.AllowOnce}},
		{name: "n", inputs: []string{"n\n"}, want: permission.Decision{Verdict: permission.Deny}},
		{name: "no with a reason", inputs: []string{"no  use the staging repo \n"},
			want: permission.Decision{Verdict: permission.Deny, Reason: "use the staging repo"}},
		{name: "a", inputs: []string{"a\n"}, want: permission.Decision{Verdict: permission.AllowTool}},
		{name: "always", inputs: []string{"Always\n"}, want: permission.Decision{Verdict: permission.AllowTool}},
		{name: "s", inputs: []string{"s\n"}, want: permission.Decision{Verdict: permission.AllowServer}},
		{name: "server", inputs: []string{"server\n"}, want: permission.Decision{Verdict: permission.AllowServer}},
		{name: "garbage then y", inputs: []string{"maybe\n", "y\n"},
			want: permission.Decision{Verdict: permission.AllowOnce}, output: "Please answer y, n, a or s."},
		{name: "empty line then n", inputs: []string{"\n", "n\n"},
			want: permission.Decision{Verdict: permission.Deny}, output: "Please answer"},
		{name: "y with more words then a", inputs: []string{"y please\n", "a\n"},
			want: permission.Decision{Verdict: permission.AllowTool}, output: "Please answer"},
		{name: "line too long then y", inputs: []string{strings.Repeat("y", 5000) + "\n", "y\n"},
			want: permission.Decision{Verdict: permission.AllowOnce}, output: "Please answer"},
		{name: "EOF", eof: true, want: closed, output: "input closed"},
		{name: "garbage then EOF", inputs: []string{"what\n"}, eof: true, want: closed, output: "input closed"},
		{name: "answer without newline then EOF", inputs: []string{"s"}, eof: true,
			want: permission.Decision{Verdict: permission.AllowServer}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			term, in, scr := pipeTerminal(t)
			res := approveAsync(context.Background(), term, tool("github", "create_issue"))
			for i, line := range tc.inputs {
				scr.waitFor(t, i+1, prompt)
				_, err := io.WriteString(in, line)
				require.NoError(t, err)
			}
			if tc.eof {
				require.NoError(t, in.Close())
			}
			r := await(t, res)
			require.NoError(t, r.err)
			assert.Equal(t, tc.want, r.d)
			out := scr.String()
			assert.Contains(t, out, tc.output)
			assert.Equal(t, 1, strings.Count(out, "Tool call awaiting your approval"), out)
			if !strings.Contains(tc.name, "then") && !tc.eof {
				assert.Equal(t, 1, strings.Count(out, prompt), "asked again after a valid answer:\n%s", out)
			}
		})
	}
}

func TestTerminalAfterEOFDeniesAtOnce(t *testing.T) {
	term := permission.NewTerminal(strings.NewReader("y\n"), io.Discard)
	d, err := term.Approve(context.Background(), tool("github", "create_issue"))
	require.NoError(t, err)
	assert.Equal(t, permission.AllowOnce, d.Verdict)
	for range 2 {
		d, err = term.Approve(context.Background(), tool("github", "create_issue"))
		require.NoError(t, err)
		assert.Equal(t, permission.Decision{Verdict: permission.Deny, Reason: "no answer: the input was closed"}, d)
	}
}

func TestTerminalNilReaderAndWriter(t *testing.T) {
	d, err := permission.NewTerminal(nil, io.Discard).Approve(context.Background(), tool("github", "create_issue"))
	require.NoError(t, err)
	assert.Equal(t, permission.Deny, d.Verdict)

	d, err = permission.NewTerminal(strings.NewReader("a\n"), nil).Approve(context.Background(), tool("github", "create_issue"))
	require.NoError(t, err)
	assert.Equal(t, permission.AllowTool, d.Verdict)
}

func TestTerminalErrors(t *testing.T) {
	boom := errors.New("boom")
	t.Run("read error, then again", func(t *testing.T) {
		term := permission.NewTerminal(iotest.ErrReader(boom), io.Discard)
		for range 2 {
			_, err := term.Approve(context.Background(), tool("github", "create_issue"))
			assert.ErrorIs(t, err, boom)
			assert.ErrorContains(t, err, "permission: terminal: reading answer")
		}
	})
	t.Run("write error", func(t *testing.T) {
		term := permission.NewTerminal(strings.NewReader("y\n"), failingWriter{boom})
		_, err := term.Approve(context.Background(), tool("github", "create_issue"))
		assert.ErrorIs(t, err, boom)
	})
	t.Run("zero Terminal", func(t *testing.T) {
		var term permission.Terminal
		_, err := term.Approve(context.Background(), tool("github", "create_issue"))
		assert.ErrorContains(t, err, "NewTerminal")
	})
	t.Run("through a Policy an error denies", func(t *testing.T) {
		p := permission.NewPolicy(permission.NewTerminal(iotest.ErrReader(boom), io.Discard))
		d, err := p.Check(context.Background(), tool("github", "create_issue"))
		assert.ErrorIs(t, err, boom)
		assert.False(t, d.Allowed())
	})
}

type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

func TestTerminalCancelledWhileReading(t *testing.T) {
	term, _, scr := pipeTerminal(t)
	ctx, cancel := context.WithCancel(context.Background())
	res := approveAsync(ctx, term, tool("github", "create_issue"))
	scr.waitFor(t, 1, prompt)
	cancel()
	r := await(t, res)
	assert.ErrorIs(t, r.err, context.Canceled)
	assert.False(t, r.d.Allowed())
	assert.Contains(t, scr.String(), "question was withdrawn")
}

func TestTerminalCancelledWhileWaitingItsTurn(t *testing.T) {
	term, in, scr := pipeTerminal(t)
	first := approveAsync(context.Background(), term, tool("github", "create_issue"))
	scr.waitFor(t, 1, prompt)

	ctx, cancel := context.WithCancel(context.Background())
	second := approveAsync(ctx, term, tool("github", "delete_repo"))
	select {
	case r := <-second:
		t.Fatalf("second question did not wait for the first: %+v", r)
	case <-time.After(20 * time.Millisecond):
	}
	cancel()
	r := await(t, second)
	assert.ErrorIs(t, r.err, context.Canceled)
	assert.NotContains(t, scr.String(), "delete_repo", "a question that never had its turn was shown")

	_, err := io.WriteString(in, "y\n")
	require.NoError(t, err)
	r = await(t, first)
	require.NoError(t, r.err)
	assert.Equal(t, permission.AllowOnce, r.d.Verdict)
}

func TestTerminalContextAlreadyDone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	scr := newScreen()
	_, err := permission.NewTerminal(strings.NewReader("y\n"), scr).Approve(ctx, tool("github", "create_issue"))
	assert.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, scr.String())
}

var toolLine = regexp.MustCompile(`(?m)^  tool: +(\S+)`)

// TestTerminalConcurrentQuestions has several calls ask through one Policy and
// one Terminal at once; the questions come one at a time, each is answered
// according to the tool it shows, and every caller must get the answer given
// to its own question.
func TestTerminalConcurrentQuestions(t *testing.T) {
	const n = 6
	term, in, scr := pipeTerminal(t)
	p := permission.NewPolicy(term)

	wait := checkConcurrently(p, n)
	seen := map[string]bool{}
	for k := range n {
		out := scr.waitFor(t, k+1, prompt)
		assert.Equal(t, k+1, strings.Count(out, "Tool call awaiting your approval"), "questions must come one at a time")
		tools := toolLine.FindAllStringSubmatch(out, -1)
		require.Len(t, tools, k+1)
		name := tools[k][1]
		assert.False(t, seen[name], "%s asked twice", name)
		seen[name] = true
		i, err := strconv.Atoi(strings.TrimPrefix(name, "tool"))
		require.NoError(t, err)
		answer := "y\n"
		if i%2 == 1 {
			answer = "n " + name + "\n"
		}
		_, err = io.WriteString(in, answer)
		require.NoError(t, err)
	}
	results, errs := wait()
	for i := range n {
		require.NoError(t, errs[i])
		if i%2 == 0 {
			assert.Equal(t, permission.Decision{Verdict: permission.AllowOnce}, results[i], "call %d", i)
		} else {
			assert.Equal(t, permission.Decision{Verdict: permission.Deny, Reason: fmt.Sprintf("tool%d", i)}, results[i], "call %d", i)
		}
	}
}

func TestTerminalWithPolicyRemembers(t *testing.T) {
	scr := newScreen()
	p := permission.NewPolicy(permission.NewTerminal(strings.NewReader("a\ns\n"), scr))
	ctx := context.Background()
	for _, c := range []struct {
		req  permission.Request
		want permission.Verdict
	}{
		{tool("github", "create_issue"), permission.AllowTool},  // answered a
		{tool("github", "create_issue"), permission.AllowTool},  // remembered
		{tool("github", "list_issues"), permission.AllowServer}, // answered s
		{tool("github", "search_code"), permission.AllowServer}, // remembered
		{tool("docs", "search"), permission.Deny},               // input closed
	} {
		d, err := p.Check(ctx, c.req)
		require.NoError(t, err)
		assert.Equal(t, c.want, d.Verdict, c.req.PrefixedName)
	}
	assert.Equal(t, 3, strings.Count(scr.String(), "Tool call awaiting your approval"))
}

// A call an MCP App's view asks for says so, escaped like every field.
func TestTerminalShowsCaller(t *testing.T) {
	var out bytes.Buffer
	term := permission.NewTerminal(strings.NewReader("n\n"), &out)
	d, err := term.Approve(context.Background(), permission.Request{Server: "clock", Tool: "get-time", Caller: "app ui://get-time/x.html\x1b[2J"})
	require.NoError(t, err)
	assert.Equal(t, permission.Deny, d.Verdict)
	assert.Contains(t, out.String(), "asked by:    app ui://get-time/x.html")
	assert.NotContains(t, out.String(), "\x1b")
	out.Reset()
	_, err = permission.NewTerminal(strings.NewReader("n\n"), &out).Approve(context.Background(), permission.Request{Server: "clock", Tool: "get-time"})
	require.NoError(t, err)
	assert.NotContains(t, out.String(), "asked by", "the model's calls")
}

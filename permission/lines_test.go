package permission_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/permission"
)

func TestLinesInTurn(t *testing.T) {
	l := permission.NewLines(strings.NewReader("one\r\ntwo\nthree"))
	for _, want := range []string{"one", "two", "three"} {
		got, err := l.Next(context.Background())
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	_, err := l.Next(context.Background())
	assert.ErrorIs(t, err, io.EOF)
	_, err = l.Next(context.Background())
	assert.ErrorIs(t, err, io.EOF, "and again")
}

func TestLinesCutsLongLines(t *testing.T) {
	long := strings.Repeat("x", permission.MaxLineLength+10)
	l := permission.NewLines(strings.NewReader(long + "\nnext\n"))
	defer l.Close()
	got, err := l.Next(context.Background())
	require.NoError(t, err)
	assert.Len(t, got, permission.MaxLineLength)
	got, err = l.Next(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "next", got)
}

// The host and a Terminal share one input: a question withdrawn while it
// waits (the user pressed Ctrl-C) takes no line, so the user's next line
// reaches the host.
func TestSharedTerminalLosesNoLine(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	lines := permission.NewLines(r)
	defer lines.Close()
	scr := newScreen()
	term := permission.NewSharedTerminal(lines, scr)

	ctx, cancel := context.WithCancel(context.Background())
	ch := approveAsync(ctx, term, permission.Request{Server: "s", Tool: "t"})
	scr.waitFor(t, 1, prompt)
	cancel() // Ctrl-C at the question
	res := await(t, ch)
	require.ErrorIs(t, res.err, context.Canceled)

	go fmt.Fprintln(w, "the user's next message")
	got, err := lines.Next(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "the user's next message", got)

	// The next question is answered from the same input.
	ch = approveAsync(context.Background(), term, permission.Request{Server: "s", Tool: "t"})
	scr.waitFor(t, 2, prompt)
	go fmt.Fprintln(w, "y")
	res = await(t, ch)
	require.NoError(t, res.err)
	assert.Equal(t, permission.AllowOnce, res.d.Verdict)
}

// The end of a shared input denies the question, as with a Terminal of its
// own.
func TestSharedTerminalInputEnded(t *testing.T) {
	lines := permission.NewLines(strings.NewReader(""))
	term := permission.NewSharedTerminal(lines, nil)
	d, err := term.Approve(context.Background(), permission.Request{Server: "s", Tool: "t"})
	require.NoError(t, err)
	assert.Equal(t, permission.Deny, d.Verdict)
}

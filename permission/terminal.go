package permission

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Limits of what a Terminal shows and reads.
const (
	terminalArgumentsLimit   = 2000 // bytes of arguments shown, after indentation
	terminalDescriptionLimit = 500  // bytes of description shown
	terminalLineLimit        = 4096 // bytes of an answer line; longer lines are asked again
	terminalLabelLimit       = 200  // bytes of a tool's title, a form field's name, title, type or choice shown
	terminalChoicesShown     = 20   // choices of a form field shown, the first ones
)

// Terminal is an [Approver] that asks a person at a text terminal: it writes
// each question to out and reads the answer, one line, from in. It is meant
// for os.Stdin and os.Stdout, and works with any reader and writer.
//
// A question shows the server, the tool (its name, the prefixed name the
// model uses, its title and the start of its description), the tool's hints,
// whether its definition changed since it was last allowed, and the
// arguments, indented as JSON. Arguments are shortened to about 2000 bytes,
// as [Request.ArgumentsText] does, descriptions are cut at 500 bytes and
// titles at 200, saying so. Everything that comes from the server or the model is printed
// with control characters, bidirectional controls and invalid UTF-8
// escaped, and multi-line text is indented, so it can neither rewrite the
// screen nor forge the prompt.
//
// The answers are, case aside: "y" or "yes" ([AllowOnce]); "n" or "no"
// ([Deny]), optionally followed by a reason for the model ("n use the test
// repository"); "a" or "always" ([AllowTool]); "s" or "server"
// ([AllowServer]). Anything else, an empty line or a line longer than 4096
// bytes included, is asked again. The end of the input denies the call and
// every later one; another read error is returned as an error, which the
// [Policy] turns into a denial.
//
// A Terminal is safe for concurrent use. Questions are asked one at a time:
// concurrent calls of Approve wait their turn, or until their ctx is done.
//
// While a question waits for its answer, one goroutine reads one line from
// in; it ends as soon as that Read returns. When ctx is done, Approve returns
// at once with ctx.Err() (unless it is blocked writing to out, which cannot
// be interrupted). A Read blocked on os.Stdin cannot be interrupted either,
// so it stays pending, and its goroutine with it, until the next line or the
// end of the input; closing in (the write end of a pipe, say) ends it. The
// line it reads answers the next question only if it was completed after
// that question was shown: an answer meant for a withdrawn question never
// approves another one. (Lines typed while no read is pending wait in the
// terminal's own buffer and answer the next question, as in any program that
// reads lines.) So a Terminal has at most one goroutine, and none while no
// read is pending; it needs no Close method.
type Terminal struct {
	out    io.Writer
	in     *bufio.Reader
	shared *Lines        // the input, when shared with the host
	turn   chan struct{} // holds a token while a question is asked

	// The fields below belong to the goroutine holding the turn.
	lines   chan inputLine // receives the pending read's result; capacity 1
	reading bool           // a read is pending
	inErr   error          // the input ended or failed: every question is denied
}

// inputLine is the result of reading one line.
type inputLine struct {
	text    string
	tooLong bool
	at      time.Time // when the read returned
	err     error
}

// NewTerminal returns a Terminal that reads answers from in and writes
// questions to out. A nil in behaves as an input already at its end (every
// call is denied); a nil out discards the questions.
// A host that also reads its user's lines from in uses NewSharedTerminal.
func NewTerminal(in io.Reader, out io.Writer) *Terminal {
	if in == nil {
		in = strings.NewReader("")
	}
	t := newTerminal(out)
	t.in = bufio.NewReaderSize(in, terminalLineLimit)
	return t
}

// NewSharedTerminal returns a Terminal that takes its answers from lines,
// which the host also reads its user's lines from, in turn, and writes
// questions to out (nil discards them). It has no goroutine of its own: a
// question withdrawn (ctx done) takes no line, and the host's next Next
// gets it.
func NewSharedTerminal(lines *Lines, out io.Writer) *Terminal {
	t := newTerminal(out)
	t.shared = lines
	return t
}

func newTerminal(out io.Writer) *Terminal {
	if out == nil {
		out = io.Discard
	}
	return &Terminal{out: out, turn: make(chan struct{}, 1), lines: make(chan inputLine, 1)}
}

// Approve asks the person at the terminal about req and waits for the
// answer, or until ctx is done, in which case it returns ctx.Err().
func (t *Terminal) Approve(ctx context.Context, req Request) (Decision, error) {
	release, err := t.hold(ctx)
	if err != nil {
		return Decision{}, err
	}
	defer release()
	if req.Sampling != nil {
		return t.approveSampling(ctx, req)
	}

	shown := time.Now() // before writing: a line completed from here on may answer
	if _, err := io.WriteString(t.out, question(req)); err != nil {
		return Decision{}, fmt.Errorf("permission: terminal: writing question: %w", err)
	}
	if t.inErr != nil {
		return t.inputEnded()
	}
	for {
		line, err := t.next(ctx)
		if err != nil {
			t.note("\n(no answer: the question was withdrawn; call denied)\n")
			return Decision{}, err
		}
		fresh := !line.at.Before(shown)
		if fresh && !line.tooLong {
			if d, ok := parseAnswer(line.text); ok {
				t.inErr = line.err
				return d, nil
			}
		}
		if line.err != nil {
			t.inErr = line.err
			return t.inputEnded()
		}
		if fresh {
			t.note("Please answer y, n, a or s.\n> ")
		} else {
			t.note("(ignored a line typed before this question)\n> ")
		}
	}
}

// hold waits for the terminal's turn, or until ctx is done; release
// gives the turn back.
func (t *Terminal) hold(ctx context.Context) (release func(), err error) {
	if t.turn == nil {
		return nil, errors.New("permission: Terminal not created by NewTerminal")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case t.turn <- struct{}{}:
		return func() { <-t.turn }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// next waits for the next answer line, or until ctx is done. A read of its
// own input goes on after ctx is done, and answers the next question.
func (t *Terminal) next(ctx context.Context) (inputLine, error) {
	if t.shared != nil {
		line, err := t.shared.take(ctx)
		if err != nil && ctx.Err() == nil {
			return inputLine{at: time.Now(), err: err}, nil // the input ended
		}
		line.tooLong = line.tooLong || len(line.text) > terminalLineLimit
		return line, err
	}
	if !t.reading {
		t.reading = true
		go t.readLine()
	}
	select {
	case line := <-t.lines:
		t.reading = false
		return line, nil
	case <-ctx.Done():
		return inputLine{}, ctx.Err()
	}
}

// readLine reads one line from t.in and sends it to t.lines, whose buffer
// is free: it runs only while t.reading, which a receive clears.
func (t *Terminal) readLine() {
	b, err := t.in.ReadSlice('\n')
	line := inputLine{text: string(b)}
	for errors.Is(err, bufio.ErrBufferFull) {
		line.tooLong = true
		_, err = t.in.ReadSlice('\n')
	}
	line.at, line.err = time.Now(), err
	t.lines <- line
}

// inputEnded answers once the input has ended (a denial) or failed (an error).
func (t *Terminal) inputEnded() (Decision, error) {
	if errors.Is(t.inErr, io.EOF) {
		t.note("\n(no answer: input closed; call denied)\n")
		return Decision{Verdict: Deny, Reason: "no answer: the input was closed"}, nil
	}
	return Decision{}, fmt.Errorf("permission: terminal: reading answer: %w", t.inErr)
}

// note writes a message of the dialogue; a failure to write it will show on
// the next question, whose write is checked.
func (t *Terminal) note(s string) {
	_, _ = io.WriteString(t.out, s)
}

// parseAnswer reads an answer line; ok is false if it is not one.
func parseAnswer(line string) (d Decision, ok bool) {
	word, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
	rest = strings.TrimSpace(rest)
	switch strings.ToLower(word) {
	case "y", "yes":
		return Decision{Verdict: AllowOnce}, rest == ""
	case "n", "no":
		return Decision{Verdict: Deny, Reason: rest}, true
	case "a", "always":
		return Decision{Verdict: AllowTool}, rest == ""
	case "s", "server":
		return Decision{Verdict: AllowServer}, rest == ""
	}
	return Decision{}, false
}

// question renders the question about req, ending with the prompt "> ".
func question(req Request) string {
	var b strings.Builder
	field := func(name, value string) {
		fmt.Fprintf(&b, "  %-12s %s\n", name+":", value)
	}
	b.WriteString("\nTool call awaiting your approval\n")
	field("server", printable(req.Server, false))
	if req.Caller != "" {
		field("asked by", label(req.Caller))
	}
	tool := printable(req.Tool, false)
	if req.PrefixedName != "" && req.PrefixedName != req.Tool {
		tool += " (" + printable(req.PrefixedName, false) + ")"
	}
	field("tool", tool)
	if req.Title != "" {
		field("title", label(req.Title))
	}
	if req.Description != "" {
		desc := truncate(strings.TrimSpace(req.Description), terminalDescriptionLimit)
		field("description", indentLines(printable(desc, true), "    "))
	}
	hints := req.Annotations.String()
	if strings.Contains(hints, "*") {
		hints += "  (* not declared by the server: MCP default)"
	}
	field("hints", hints)
	if req.Changed {
		field("CHANGED", "the tool's definition changed since you last allowed it")
	}
	b.WriteString("  arguments:\n    ")
	b.WriteString(indentLines(printable(req.ArgumentsText(terminalArgumentsLimit), true), "    "))
	fmt.Fprintf(&b, "\nAllow? y: once | n: no (n <reason>: tell the model why) | a: always this tool | s: always every tool of %s\n> ",
		printable(req.Server, false))
	return b.String()
}

package permission

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Limits of a sampling question on a Terminal.
const (
	terminalMessageLimit  = 1000 // bytes of one message shown
	terminalMessagesShown = 20   // messages shown, the last ones
)

// ask writes prompt, then returns the first line completed after it was
// written, trimmed; lines typed before are skipped, too long ones asked
// again. At the end of the input it returns io.EOF (or the read error),
// and ctx.Err() when ctx is done. The caller holds the turn.
func (t *Terminal) ask(ctx context.Context, prompt string) (string, error) {
	shown := time.Now()
	if _, err := io.WriteString(t.out, prompt); err != nil {
		return "", fmt.Errorf("permission: terminal: writing question: %w", err)
	}
	for {
		if t.inErr != nil {
			return "", t.inErr
		}
		line, err := t.next(ctx)
		if err != nil {
			return "", err
		}
		fresh := !line.at.Before(shown)
		switch {
		case fresh && !line.tooLong && (line.err == nil || strings.TrimSpace(line.text) != ""):
			t.inErr = line.err
			return strings.TrimSpace(line.text), nil
		case line.err != nil:
			t.inErr = line.err
			return "", line.err
		case !fresh:
			t.note("(ignored a line typed before this question)\n> ")
		default:
			t.note("(line too long)\n> ")
		}
	}
}

// approveSampling asks about a sampling request, or reviews its
// completion when req.Sampling.Completion is set. The caller holds the
// turn.
func (t *Terminal) approveSampling(ctx context.Context, req Request) (Decision, error) {
	s := req.Sampling
	review := s.Completion != ""
	prompt := samplingQuestion(req)
	for {
		line, err := t.ask(ctx, prompt)
		if err != nil {
			return t.failed(err)
		}
		word, rest, _ := strings.Cut(line, " ")
		switch strings.ToLower(word) {
		case "y", "yes":
			return Decision{Verdict: AllowOnce, Review: !review}, nil
		case "a", "always":
			if !review {
				return Decision{Verdict: AllowTool}, nil
			}
		case "n", "no":
			return Decision{Verdict: Deny, Reason: strings.TrimSpace(rest)}, nil
		case "e", "edit":
			return t.editSampling(ctx, s)
		}
		prompt = "Please answer y, n, e or a.\n> "
		if review {
			prompt = "Please answer y, n or e.\n> "
		}
	}
}

// failed turns a failed read into the Approver's answer: the end of the
// input denies, anything else is an error.
func (t *Terminal) failed(err error) (Decision, error) {
	if errors.Is(err, io.EOF) {
		t.note("\n(no answer: input closed; denied)\n")
		return Decision{Verdict: Deny, Reason: "no answer: the input was closed"}, nil
	}
	t.note("\n(no answer; denied)\n")
	return Decision{}, err
}

// editSampling lets the user change the system prompt and the token
// limit of a request, or replace a completion; the edited request is
// allowed once, with its completion reviewed.
func (t *Terminal) editSampling(ctx context.Context, s *Sampling) (Decision, error) {
	edited := *s
	if s.Completion != "" {
		line, err := t.ask(ctx, "New completion, one line (empty keeps it):\n> ")
		if err != nil {
			return t.failed(err)
		}
		if line != "" {
			edited.Completion = line
		}
		return Decision{Verdict: AllowOnce, Edited: &edited}, nil
	}
	line, err := t.ask(ctx, "System prompt, one line (empty keeps it, - removes it):\n> ")
	if err != nil {
		return t.failed(err)
	}
	switch line {
	case "":
	case "-":
		edited.SystemPrompt = ""
	default:
		edited.SystemPrompt = line
	}
	for {
		line, err := t.ask(ctx, fmt.Sprintf("Max tokens, at most %d (empty keeps it):\n> ", s.MaxTokens))
		if err != nil {
			return t.failed(err)
		}
		if line == "" {
			break
		}
		if n, err := strconv.Atoi(line); err == nil && n > 0 && n <= s.MaxTokens {
			edited.MaxTokens = n
			break
		}
		t.note("Please give a whole number from 1 to " + strconv.Itoa(s.MaxTokens) + ".\n")
	}
	return Decision{Verdict: AllowOnce, Edited: &edited, Review: true}, nil
}

// samplingQuestion renders a sampling question, ending with the prompt.
func samplingQuestion(req Request) string {
	s := req.Sampling
	var b strings.Builder
	field := func(name, value string) {
		fmt.Fprintf(&b, "  %-14s %s\n", name+":", value)
	}
	if s.Completion != "" {
		b.WriteString("\nThe model's answer to a server's sampling request, before it goes back\n")
		field("server", printable(req.Server, false))
		field("model", printable(s.Model, false))
		b.WriteString("  completion:\n    ")
		b.WriteString(indentLines(printable(truncate(s.Completion, terminalArgumentsLimit), true), "    "))
		b.WriteString("\nSend it? y: send | n: withhold (the server gets a refusal) | e: edit\n> ")
		return b.String()
	}
	b.WriteString("\nA server asks to use your model (sampling)\n")
	field("server", printable(req.Server, false))
	field("model", printable(s.Model, false))
	if s.InputBytes > 0 {
		field("input", fmt.Sprintf("%s, about %d tokens, sent to the model", byteSize(s.InputBytes), s.InputTokens))
	}
	field("max tokens", strconv.Itoa(s.MaxTokens)+" in the answer")
	if len(s.Tools) > 0 {
		field("its tools", printable(truncate(strings.Join(s.Tools, ", "), terminalMessageLimit), false))
	}
	if s.SystemPrompt != "" {
		field("system prompt", indentLines(printable(truncate(s.SystemPrompt, terminalMessageLimit), true), "    "))
	}
	msgs := s.Messages
	if len(msgs) > terminalMessagesShown {
		fmt.Fprintf(&b, "  (%d earlier messages not shown)\n", len(msgs)-terminalMessagesShown)
		msgs = msgs[len(msgs)-terminalMessagesShown:]
	}
	for _, m := range msgs {
		fmt.Fprintf(&b, "  [%s]\n    %s\n", printable(m.Role, false), indentLines(printable(truncate(m.Text, terminalMessageLimit), true), "    "))
	}
	fmt.Fprintf(&b, "Allow? y: once, and show me the answer | n: no | e: edit | a: always for %s, without review\n> ", printable(req.Server, false))
	return b.String()
}

// byteSize renders n bytes for a person: "512 bytes", "12.5 KiB", "1.0 MiB".
func byteSize(n int) string {
	switch {
	case n < 1<<10:
		return strconv.Itoa(n) + " bytes"
	case n < 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 1, 64) + " KiB"
	}
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
}

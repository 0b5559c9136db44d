package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"git.rickub.com/bots-garden/mini-me/sse"

	"git.rickub.com/bots-garden/mini-me/agent"
)

// errIncompleteStream ends a stream that stops before saying the turn is
// over.
var errIncompleteStream = errors.New("stream ended before the turn was finished")

// readStream reads a streamed turn: chat.completion.chunk events up to
// "[DONE]".
func (m *Model) readStream(ctx context.Context, body io.Reader, status, max int, onDelta func(agent.Delta)) (*agent.Reply, error) {
	idle := m.IdleTimeout
	switch {
	case idle == 0:
		idle = DefaultIdleTimeout
	case idle < 0:
		idle = 0
	}
	dec := sse.NewDecoder(body, &sse.Options{MaxEventSize: max, IdleTimeout: idle})
	a := assembler{max: max, onDelta: onDelta}
	for ev, err := range dec.Events(ctx) {
		if errors.Is(err, io.ErrUnexpectedEOF) && a.finish != "" {
			// Cut inside its last event (a "data: [DONE]" with no blank
			// line after it, as some servers end), after a finished turn.
			return a.reply()
		}
		if err != nil {
			return nil, fmt.Errorf("stream: %w", err)
		}
		data := strings.TrimSpace(ev.Data)
		if data == "[DONE]" {
			return a.reply()
		}
		if data == "" {
			continue
		}
		var chunk wireResponse
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			return nil, fmt.Errorf("stream: malformed chunk: %w", err)
		}
		if hasError(chunk.Error) || ev.Type == "error" {
			e := &APIError{StatusCode: status}
			fillAPIError(e, []byte(data))
			return nil, e
		}
		if err := a.add(&chunk, false); err != nil {
			return nil, err
		}
	}
	if a.finish == "" {
		return nil, errIncompleteStream
	}
	return a.reply() // a finished turn without "[DONE]" is still whole
}

// readWhole reads a chat.completion: a turn sent in one piece.
func readWhole(body io.Reader, max int, onDelta func(agent.Delta)) (*agent.Reply, error) {
	raw, err := io.ReadAll(io.LimitReader(body, int64(max)+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > max {
		return nil, tooLarge(max)
	}
	var resp wireResponse
	if err := json.Unmarshal(raw, &resp); err != nil {
		return nil, fmt.Errorf("malformed body: %w", err)
	}
	if hasError(resp.Error) {
		e := &APIError{StatusCode: http.StatusOK}
		fillAPIError(e, raw)
		return nil, e
	}
	if len(resp.Choices) == 0 {
		return nil, errors.New("no choices in the response")
	}
	a := assembler{max: max, onDelta: onDelta}
	if err := a.add(&resp, true); err != nil {
		return nil, err
	}
	return a.reply()
}

// assembler puts a turn together from its pieces. Tool calls arrive in
// fragments: the first names the call (index, id, name), the next ones
// carry pieces of its arguments, matched by index.
type assembler struct {
	max     int
	size    int
	onDelta func(agent.Delta)
	text    strings.Builder
	// reasoning is the reasoning, and field the member it came in.
	reasoning strings.Builder
	field     string
	calls     []*partialCall
	byIndex   map[int]*partialCall
	finish    agent.FinishReason
	usage     agent.Usage
}

type partialCall struct {
	id, name string
	args     strings.Builder
}

// add takes one chunk, or a whole response when whole is set. Only the
// first choice is used: the client never asks for more.
func (a *assembler) add(r *wireResponse, whole bool) error {
	if r.Usage != nil {
		a.usage = r.Usage.usage()
	}
	for i := range r.Choices {
		c := &r.Choices[i]
		if c.Index != 0 {
			continue
		}
		d := &c.Delta
		if whole {
			d = &c.Message
		}
		reasoning := d.ReasoningContent + d.Reasoning
		if err := a.grow(len(d.Content) + len(reasoning)); err != nil {
			return err
		}
		a.text.WriteString(d.Content)
		a.reasoning.WriteString(reasoning)
		if a.field == "" && d.Reasoning != "" {
			a.field = fieldReasoning
		} else if a.field == "" && d.ReasoningContent != "" {
			a.field = fieldReasoningContent
		}
		if (d.Content != "" || reasoning != "") && a.onDelta != nil {
			a.onDelta(agent.Delta{Text: d.Content, Reasoning: reasoning})
		}
		for j := range d.ToolCalls {
			if err := a.addCall(&d.ToolCalls[j]); err != nil {
				return err
			}
		}
		if c.FinishReason != nil && *c.FinishReason != "" {
			a.finish = agent.FinishReason(*c.FinishReason)
		}
	}
	return nil
}

// addCall takes one tool-call fragment. A fragment continues the call of
// its index (the last call when it has none) unless it names another id or
// another function; a fragment without an index that names a function
// starts a call too. Some servers send every call whole, all with index 0,
// or with no index at all. llama-server may send a name before it is
// whole, then the same index and id with the whole name: that name
// replaces the first.
func (a *assembler) addCall(f *wireToolCall) error {
	args, err := argumentsText(f.Function.Arguments)
	if err != nil {
		return err
	}
	if err := a.grow(len(args) + len(f.Function.Name) + len(f.ID)); err != nil {
		return err
	}
	var p *partialCall
	if f.Index != nil {
		p = a.byIndex[*f.Index]
	} else if n := len(a.calls); n > 0 {
		p = a.calls[n-1]
	}
	name := f.Function.Name
	switch {
	case p != nil && f.Index != nil && f.ID != "" && f.ID == p.id && strings.HasPrefix(name, p.name):
		p.name = name // a grown name, or the same one again
	case p == nil,
		f.ID != "" && p.id != "" && f.ID != p.id,
		name != "" && p.name != "" && (name != p.name || f.Index == nil):
		p = &partialCall{}
		a.calls = append(a.calls, p)
		if f.Index != nil {
			if a.byIndex == nil {
				a.byIndex = map[int]*partialCall{}
			}
			a.byIndex[*f.Index] = p
		}
	}
	if p.id == "" {
		p.id = f.ID
	}
	if p.name == "" {
		p.name = name
	}
	p.args.WriteString(args)
	return nil
}

func (a *assembler) grow(n int) error {
	a.size += n
	if a.size > a.max {
		return tooLarge(a.max)
	}
	return nil
}

// reply returns the assembled turn. Calls without an id get one, unique in
// the turn; a call without a name is an error, since nothing could answer
// it.
func (a *assembler) reply() (*agent.Reply, error) {
	r := &agent.Reply{Message: agent.Message{Role: agent.RoleAssistant}, Finish: a.finish, Usage: a.usage}
	if n := len(a.calls) + min(a.reasoning.Len(), 1) + min(a.text.Len(), 1); n > 0 {
		r.Message.Parts = make([]agent.Part, 0, n)
	}
	if a.reasoning.Len() > 0 {
		p := agent.ReasoningPart(openAIProvider, a.reasoning.String(), "")
		meta, _ := json.Marshal(reasoningMeta{Field: a.field}) // plain data: cannot fail
		p.Metadata = map[string]json.RawMessage{openAIProvider: meta}
		r.Message.Parts = append(r.Message.Parts, p)
	}
	if a.text.Len() > 0 {
		r.Message.Parts = append(r.Message.Parts, agent.TextPart(a.text.String()))
	}
	seen := map[string]bool{}
	for i, p := range a.calls {
		if p.name == "" {
			return nil, fmt.Errorf("tool call %d has no name", i)
		}
		id := p.id
		if id == "" || seen[id] {
			id = "call_" + strconv.Itoa(i+1)
			for seen[id] {
				id += "x"
			}
		}
		seen[id] = true
		r.Message.Parts = append(r.Message.Parts, agent.CallPart(agent.ToolCall{ID: id, Name: p.name, Arguments: p.args.String()}))
	}
	return r, nil
}

// hasError reports whether a response's "error" member is set.
func hasError(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

// tooLarge is a response over Model.MaxResponseSize.
func tooLarge(max int) error {
	return fmt.Errorf("response larger than %d bytes (Model.MaxResponseSize)", max)
}

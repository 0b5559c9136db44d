package agent

import "errors"

// contextWindow is what a run keeps of the model's context window: the
// budget the request sent to the model is kept under, the size of the
// last request, and the tool outputs of the conversation, kept so that
// the budget can shorten them exactly.
type contextWindow struct {
	// budget is the context budget, in estimated tokens: the Agent's,
	// until the model server says a request was longer than its context;
	// estimate is the size of the last request, estimated the same way.
	budget, estimate int
	// kept are the tool outputs of the run, by message index.
	kept map[int]*keptOutput
}

// keptOutput is a tool output in the conversation, kept as head and tail
// so that the context budget can shorten it again exactly.
type keptOutput struct {
	open, close string
	text        cutText
}

func (k *keptOutput) content() string { return k.open + k.text.String() + k.close }

// newWindow returns the window of a run of an Agent whose ContextBudget is
// budget, saved the lower one, when a State had one.
func newWindow(budget, saved int) contextWindow {
	if budget <= 0 {
		budget = DefaultContextBudget
	}
	if saved > 0 {
		budget = min(budget, saved)
	}
	return contextWindow{budget: budget, kept: map[int]*keptOutput{}}
}

// keep records k as the tool output of message i.
func (w *contextWindow) keep(i int, k *keptOutput) {
	if k != nil {
		w.kept[i] = k
	}
}

// fit shortens the oldest tool outputs of msgs, from message from on,
// until the request's estimated size fits the budget; fixed is the size
// of what is sent beside the messages. It reports whether it shortened
// any, and whether the request is still over the budget.
func (w *contextWindow) fit(msgs []Message, from, fixed int) (shortened, over bool) {
	total := fixed
	for i := from; i < len(msgs); i++ {
		total += messageSize(&msgs[i])
	}
	for i := from; i < len(msgs) && estimateTokens(total) > w.budget; i++ {
		m := &msgs[i]
		if m.Role != RoleTool || len(m.Text()) <= ShortenedToolOutput {
			continue
		}
		k := w.kept[i]
		if k == nil { // from the conversation the run was given
			k = &keptOutput{text: wholeText(m.Text())}
			w.kept[i] = k
		}
		k.text = k.text.shorten(ShortenedToolOutput)
		before := messageSize(m)
		m.setText(k.content()) // its structured content goes too
		after := messageSize(m)
		total -= before - after
		shortened = shortened || after < before
	}
	w.estimate = estimateTokens(total)
	return shortened, w.estimate > w.budget
}

// lower lowers the budget to what the figures of a model server that
// found the last request longer than the model's context (cause) suggest.
func (w *contextWindow) lower(cause error) {
	budget := w.estimate / 2
	var me *ModelError
	if errors.As(cause, &me) && me.PromptTokens > 0 && me.ContextSize > 0 {
		// Scale the estimate to the server's count, keeping a quarter of
		// the context for the answer.
		budget = int(float64(w.estimate) * float64(me.ContextSize) / float64(me.PromptTokens) * 0.75)
	}
	w.budget = max(min(w.budget, budget), 1)
}

// messageSize estimates the bytes a message takes in a request.
func messageSize(m *Message) int {
	n := len(m.ToolCallID) + 16
	for i := range m.Parts {
		p := &m.Parts[i]
		n += len(p.Text) + len(p.Signature) + len(p.URL) + len(p.Data)*4/3
		if p.Kind == PartToolCall {
			n += len(p.ID) + len(p.Name) + len(p.Arguments) + 32
		}
	}
	return n
}

package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/mcp"
)

// run is the state of one Agent.Run.
type run struct {
	a      *Agent
	ev     emitter
	msgs   []Message
	kept   map[int]*keptOutput // tool outputs of this run, by message index
	result Result
	turn   int
	local  bool // the model is on this machine
	egress map[string]config.Egress
	warned map[string]bool
	// prevCalls holds the calls of the previous turn, toldRepeat the
	// calls the model was told not to repeat; both by callKey.
	prevCalls, toldRepeat map[string]bool

	// skillsOffered are the skills of this turn's catalogue; loaded the
	// skills loaded in this run, whose files may be read; skillBytes
	// counts the bytes of skill files loaded.
	skillsOffered []mcp.ServerSkill
	loadedMu      sync.Mutex
	loaded        map[string]bool
	skillBytes    atomic.Int64
}

// keptOutput is a tool output in the conversation, kept as head and tail
// so that the context budget can shorten it again exactly.
type keptOutput struct {
	open, close string
	text        cutText
}

func (k *keptOutput) content() string { return k.open + k.text.String() + k.close }

func newRun(a *Agent, msgs []Message, onEvent func(Event)) *run {
	r := &run{
		a:          a,
		ev:         emitter{fn: onEvent},
		msgs:       append([]Message(nil), msgs...),
		kept:       map[int]*keptOutput{},
		egress:     map[string]config.Egress{},
		warned:     map[string]bool{},
		prevCalls:  map[string]bool{},
		toldRepeat: map[string]bool{},
		loaded:     map[string]bool{},
	}
	if a.Tools != nil {
		for _, st := range a.Tools.Tools() {
			r.egress[st.Server] = st.Egress
		}
	}
	if lm, ok := a.Model.(LocalModel); ok {
		r.local = lm.Local()
	}
	return r
}

func (r *run) run(ctx context.Context) error {
	defer func() { r.result.Messages = r.msgs }()
	if err := r.check(); err != nil {
		r.result.Stop = StopError
		return err
	}
	if err := r.preloadSkills(ctx); err != nil {
		r.result.Stop = StopError
		return err
	}
	maxTurns := r.a.MaxTurns
	if maxTurns <= 0 {
		maxTurns = DefaultMaxTurns
	}
	for {
		if ctx.Err() != nil {
			return r.canceled(ctx)
		}
		if r.turn >= maxTurns {
			return r.limit(ctx, StopMaxTurns, fmt.Errorf("%w (%d)", ErrMaxTurns, maxTurns))
		}
		cat := r.catalog()
		reply, err := r.chat(ctx, cat)
		if err != nil {
			if ctx.Err() != nil {
				return r.canceled(ctx)
			}
			r.result.Stop = StopError
			return err
		}
		calls := r.appendReply(reply)
		if len(calls) == 0 {
			r.result.Answer = reply.Message.Content
			r.result.Stop = StopAnswer
			return nil
		}
		repeated := r.runCalls(ctx, cat, calls)
		if ctx.Err() != nil {
			return r.canceled(ctx)
		}
		if repeated {
			return r.limit(ctx, StopRepeatedCall, ErrRepeatedCall)
		}
	}
}

// check rejects what the run cannot start with.
func (r *run) check() error {
	if r.a.Model == nil {
		return errors.New("agent: Agent.Model is nil")
	}
	names := map[string]bool{}
	for i, f := range r.a.Funcs {
		if f == nil {
			return fmt.Errorf("agent: Agent.Funcs[%d] is nil", i)
		}
		if names[f.name] || r.a.Skills != nil && f.name == SkillTool {
			return fmt.Errorf("agent: two Funcs are named %q", f.name)
		}
		names[f.name] = true
	}
	return checkConversation(r.msgs)
}

func (r *run) canceled(ctx context.Context) error {
	r.result.Stop = StopCanceled
	return fmt.Errorf("agent: run stopped: %w", ctx.Err())
}

// limit ends a run stopped by a limit, asking for a final answer if the
// Agent wants one.
func (r *run) limit(ctx context.Context, stop StopReason, err error) error {
	r.result.Stop = stop
	if !r.a.FinalAnswer {
		return err
	}
	r.msgs = append(r.msgs, Message{Role: RoleUser, Content: fmt.Sprintf(
		"The run has reached a limit (%s) and tools are no longer available. Answer now, as well as you can, from what you already have.", stop)})
	reply, cerr := r.chat(ctx, &catalog{})
	if cerr != nil {
		if ctx.Err() != nil {
			return errors.Join(err, r.canceled(ctx))
		}
		r.warn(WarnEmptyAnswer, "the final answer could not be obtained: "+cerr.Error())
		return err
	}
	r.msgs = append(r.msgs, Message{Role: RoleAssistant, Content: reply.Message.Content})
	r.result.Answer = reply.Message.Content
	return err
}

// chat calls the model once with the tools of cat.
func (r *run) chat(ctx context.Context, cat *catalog) (*Reply, error) {
	r.turn++
	r.result.Turns++
	turn := r.turn
	req := &ChatRequest{Messages: r.request(cat.size), Tools: cat.defs}
	reply, err := r.a.Model.Chat(ctx, req, func(d Delta) { r.ev.emit(&TextDelta{Turn: turn, Delta: d}) })
	if err != nil {
		return nil, err
	}
	if reply == nil {
		return nil, errors.New("agent: the model returned neither a reply nor an error")
	}
	r.result.Usage.add(reply.Usage)
	r.ev.emit(&TurnFinished{Turn: turn, Finish: reply.Finish, Usage: reply.Usage, ToolCalls: len(reply.Message.ToolCalls)})
	switch {
	case reply.Finish == FinishLength:
		r.warn(WarnTruncatedAnswer, "the model stopped at its output limit (finish reason length); its answer or tool calls may be cut short")
	case reply.Message.Content == "" && len(reply.Message.ToolCalls) == 0:
		r.warn(WarnEmptyAnswer, "the model gave neither text nor tool calls")
	}
	return reply, nil
}

// request builds the messages sent to the model: one system message, then
// the conversation, shortened to the budget, with the output of local-only
// servers withheld from a model that is not local.
func (r *run) request(toolsSize int) []Message {
	system := r.a.SystemPrompt
	if system == "" {
		system = DefaultSystemPrompt
	}
	from := 0
	for ; from < len(r.msgs) && r.msgs[from].Role == RoleSystem; from++ {
		system += "\n\n" + r.msgs[from].Content
	}
	r.fitBudget(from, len(system)+toolsSize)
	out := make([]Message, 0, len(r.msgs)-from+1)
	out = append(out, Message{Role: RoleSystem, Content: system})
	withheld := r.withheldCalls(r.msgs[from:])
	for _, m := range r.msgs[from:] {
		switch {
		case m.Role == RoleTool && withheld[m.ToolCallID]:
			m.Content = fmt.Sprintf("[The output of this call is withheld: server %q is local-only and you do not run on this machine.]", m.Server)
			r.warnOnce("output:"+m.Server, WarnToolsWithheld, fmt.Sprintf(
				"earlier calls of local-only server %q and their output are not sent to the model, which is not on this machine", m.Server))
		case m.Role == RoleAssistant && len(withheld) > 0:
			calls := make([]ToolCall, len(m.ToolCalls))
			for i, c := range m.ToolCalls {
				if withheld[c.ID] {
					c.Arguments = "{}"
				}
				calls[i] = c
			}
			m.ToolCalls = calls
		}
		out = append(out, m)
	}
	return out
}

// withheldCalls returns the IDs of the calls, in msgs, of local-only
// servers, whose arguments and output must not reach a model that is not
// local.
func (r *run) withheldCalls(msgs []Message) map[string]bool {
	if r.local {
		return nil
	}
	var ids map[string]bool
	for _, m := range msgs {
		if m.Role == RoleTool && m.Server != "" && r.egress[m.Server] == config.EgressLocal {
			if ids == nil {
				ids = map[string]bool{}
			}
			ids[m.ToolCallID] = true
		}
	}
	return ids
}

// fitBudget shortens the oldest tool outputs, from message from on, until
// the request's estimated size fits the context budget; fixed is the size
// of what is sent beside the messages.
func (r *run) fitBudget(from, fixed int) {
	budget := r.a.ContextBudget
	if budget <= 0 {
		budget = DefaultContextBudget
	}
	total := fixed
	for i := from; i < len(r.msgs); i++ {
		total += messageSize(&r.msgs[i])
	}
	for i := from; i < len(r.msgs) && estimateTokens(total) > budget; i++ {
		m := &r.msgs[i]
		if m.Role != RoleTool || len(m.Content) <= ShortenedToolOutput {
			continue
		}
		k := r.kept[i]
		if k == nil { // from the conversation the run was given
			k = &keptOutput{text: wholeText(m.Content)}
			r.kept[i] = k
		}
		k.text = k.text.shorten(ShortenedToolOutput)
		before := len(m.Content)
		m.Content = k.content()
		total -= before - len(m.Content)
	}
	if estimateTokens(total) > budget {
		r.warn(WarnContextBudget, fmt.Sprintf(
			"the request is estimated at %d tokens, over the budget of %d, even with every tool output shortened", estimateTokens(total), budget))
	}
}

// messageSize estimates the bytes a message takes in a request.
func messageSize(m *Message) int {
	n := len(m.Content) + len(m.ToolCallID) + 16
	for _, c := range m.ToolCalls {
		n += len(c.ID) + len(c.Name) + len(c.Arguments) + 32
	}
	return n
}

// appendReply adds the assistant's message to the conversation and
// returns its calls as the model sent them. Arguments that are not a JSON
// object are stored as "{}", since servers reject a conversation that
// holds them; the tool message explains.
func (r *run) appendReply(reply *Reply) []ToolCall {
	msg := Message{Role: RoleAssistant, Content: reply.Message.Content}
	calls := reply.Message.ToolCalls
	for _, c := range calls {
		stored := c
		if !isObject(c.Arguments) {
			stored.Arguments = "{}"
		}
		msg.ToolCalls = append(msg.ToolCalls, stored)
	}
	r.msgs = append(r.msgs, msg)
	return calls
}

func isObject(s string) bool {
	b := bytes.TrimSpace([]byte(s))
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}

func (r *run) warn(kind WarningKind, msg string) {
	w := Warning{Turn: r.turn, Kind: kind, Message: msg}
	r.result.Warnings = append(r.result.Warnings, w)
	if r.a.Logger != nil {
		r.a.Logger.LogAttrs(context.Background(), slog.LevelWarn, "agent: "+msg, slog.String("kind", string(kind)))
	}
	r.ev.emit(&w)
}

// warnOnce warns once per run for a given key.
func (r *run) warnOnce(key string, kind WarningKind, msg string) {
	if r.warned[key] {
		return
	}
	r.warned[key] = true
	r.warn(kind, msg)
}

package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"git.rickub.com/bots-garden/mini-me/config"
)

// run is the state of one Agent.Run.
type run struct {
	a      *Agent
	ev     emitter
	msgs   []Message
	result Result
	turn   int
	local  bool // the model is on this machine
	egress map[string]config.Egress
	// holdsLocal says the conversation holds content of a local-only
	// server: what a local model adds from then on is labelled local too
	// (see add).
	holdsLocal bool
	// instructions are the servers' framed instructions, fixed for the
	// run (see Agent.NoServerInstructions).
	instructions string
	warned       map[string]bool
	// repeats detects repeated calls and cycles, window keeps the request
	// within the context budget, loaded is what the run loaded.
	repeats repeats
	window  contextWindow
	loaded  *loadout
	// narrowed is the catalogue last offered when searching, made when
	// narrowedAt tools were loaded (see catalog).
	narrowed   *catalog
	narrowedAt int
	// note follows the system prompt, and schema goes with the model
	// call, in the requests of a typed run (see RunTyped).
	note   string
	schema *ResponseSchema
	// held are the calls of this turn whose approval was deferred.
	held []PendingCall
	// trace is the Trace of the run's context, nil when none.
	trace *Trace
	// system is the part of the system message of the requests.
	system [1]Part
}

// newRun starts a run of a on msgs, resumed from st (nil for a new run).
func newRun(a *Agent, msgs []Message, st *State, onEvent func(Event)) *run {
	r := &run{
		a:      a,
		ev:     emitter{fn: onEvent},
		msgs:   append([]Message(nil), msgs...),
		egress: map[string]config.Egress{},
		warned: map[string]bool{},
		window: newWindow(a.ContextBudget, 0),
		loaded: newLoadout(st),
	}
	if st != nil {
		r.turn, r.result.Turns, r.result.Usage = st.Turn, st.ModelCalls, st.Usage
		r.window = newWindow(a.ContextBudget, st.ContextBudget)
		r.repeats = newRepeats(st.Repeats)
	} else {
		r.repeats = newRepeats(Repeats{})
	}
	if a.Tools != nil {
		ts := a.Tools.Tools()
		for i := range ts { // by index: a Tool is large to copy
			r.egress[ts[i].Server] = ts[i].Egress
		}
	}
	r.local = CapabilitiesOf(a.Model).Local
	for _, m := range r.msgs {
		r.holdsLocal = r.holdsLocal || r.localOnly(m)
	}
	r.instructions = a.serverInstructions(r.local)
	return r
}

// localOnly reports whether m holds local-only content: its own label, or
// (a conversation from before the labels) a tool message of a server this
// run's Toolset lists as local-only.
func (r *run) localOnly(m Message) bool {
	return m.Egress == config.EgressLocal || m.Role == RoleTool && m.Server != "" && r.egress[m.Server] == config.EgressLocal
}

// add appends m to the conversation, labelled with its egress: once the
// conversation holds local-only content, everything a local model's run
// adds (its replies, the tool messages of its calls, the agent's notes)
// may quote it, and is labelled config.EgressLocal, so that a hosted
// model never sees it when the conversation is carried on.
func (r *run) add(m Message) {
	r.msgs = append(r.msgs, r.label(m))
}

// label returns m labelled as add labels it, and notes whether the
// conversation now holds local-only content.
func (r *run) label(m Message) Message {
	if r.local && r.holdsLocal {
		m.Egress = config.EgressLocal
	}
	r.holdsLocal = r.holdsLocal || r.localOnly(m)
	return m
}

func (r *run) run(ctx context.Context) error {
	defer func() { r.result.Messages = r.msgs }()
	if err := r.check(); err != nil {
		r.result.Stop = StopError
		return err
	}
	if err := r.preloadSkills(ctx); err != nil {
		if ctx.Err() != nil {
			return r.canceled(ctx)
		}
		r.result.Stop = StopError
		return err
	}
	return r.loop(ctx)
}

// loop calls the model and runs the calls it makes, turn after turn,
// until the run ends.
func (r *run) loop(ctx context.Context) error {
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
		if in := inboxOf(ctx); in != nil {
			for _, m := range in.Take() {
				r.add(m)
			}
		}
		cat := r.catalog()
		var choice ToolChoice
		if r.turn == 0 {
			r.checkPinned(cat)
			choice = r.a.ToolChoice
			if err := cat.checkChoice(choice); err != nil {
				r.result.Stop = StopError
				return err
			}
		}
		reply, err := r.chat(ctx, cat, choice)
		if err != nil {
			if ctx.Err() != nil {
				return r.canceled(ctx)
			}
			r.result.Stop = StopError
			return err
		}
		cut := cutCall(reply, len(cat.defs) > 0)
		if reply.Message.callCount() == 0 {
			r.add(storedMessage(&reply.Message, nil))
			if cut {
				r.add(UserMessage(cutCallNote))
				continue
			}
			r.result.Answer = reply.Message.Text()
			r.result.Stop = StopAnswer
			return nil
		}
		repeated := r.runCalls(ctx, cat, reply, cut)
		if ctx.Err() != nil {
			return r.canceled(ctx)
		}
		if repeated {
			return r.limit(ctx, StopRepeatedCall, ErrRepeatedCall)
		}
		if len(r.held) > 0 {
			return r.pause()
		}
	}
}

// checkPinned warns about the names of PinnedTools that match no tool of
// the whole catalogue.
func (r *run) checkPinned(cat *catalog) {
	all := cat
	if cat.all != nil {
		all = cat.all
	}
	for _, name := range r.a.PinnedTools {
		if _, ok := all.byName[name]; !ok {
			r.warnOnce("pinned "+name, WarnPinnedTool, fmt.Sprintf("Agent.PinnedTools names %q, which matches no tool", name))
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
		if names[f.name] || r.a.Skills != nil && f.name == SkillTool || r.a.ToolSearch != ToolSearchOff && f.name == ToolSearchTool {
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
	r.add(UserMessage(fmt.Sprintf(
		"The run has reached a limit (%s) and tools are no longer available. Answer now, as well as you can, from what you already have.", stop)))
	reply, cerr := r.chat(ctx, &catalog{}, "")
	if cerr == nil && reply.Message.callCount() > 0 {
		// Calls made without tools are dropped: ask once more, firmly.
		r.msgs[len(r.msgs)-1].appendText(" " + noToolsNote)
		reply, cerr = r.chat(ctx, &catalog{}, "")
		if cerr == nil && reply.Message.callCount() > 0 { // reply is nil on an error
			r.warn(WarnDroppedCalls, fmt.Sprintf(
				"asked twice for a final answer without tools, the model made %d tool calls, which were not run; its text is the answer", reply.Message.callCount()))
		}
	}
	if cerr != nil {
		if ctx.Err() != nil {
			return errors.Join(err, r.canceled(ctx))
		}
		r.warn(WarnEmptyAnswer, "the final answer could not be obtained: "+cerr.Error())
		return err
	}
	r.add(withoutCalls(&reply.Message))
	r.result.Answer = reply.Message.Text()
	return err
}

// chat calls the model once with the tools of cat. A request the server
// finds longer than the model's context is shortened and sent once more
// (see refit).
func (r *run) chat(ctx context.Context, cat *catalog, choice ToolChoice) (*Reply, error) {
	r.turn++
	r.result.Turns++
	turn := r.turn
	onDelta := func(d Delta) { r.ev.emit(&TextDelta{Turn: turn, Delta: d}) }
	msgs, _ := r.request(cat.size)
	req := &ChatRequest{Messages: msgs, Tools: cat.defs, ToolChoice: choice, Schema: r.schema}
	reply, err := r.chatModel(ctx, req, onDelta)
	if errors.Is(err, ErrContextExceeded) && ctx.Err() == nil {
		reply, err = r.refit(ctx, cat, req, err, onDelta)
	}
	if err != nil {
		return nil, err
	}
	if reply == nil {
		return nil, errors.New("agent: the model returned neither a reply nor an error")
	}
	r.result.Usage.add(reply.Usage)
	r.ev.emit(&TurnFinished{Turn: turn, Finish: reply.Finish, Usage: reply.Usage, ToolCalls: reply.Message.callCount(), Model: r.answeredBy(reply)})
	switch {
	case cutCall(reply, len(cat.defs) > 0):
		r.warn(WarnTruncatedAnswer, "the model's reply was cut at its output limit (finish reason length) in the middle of a tool call, "+
			"which was not run; the model is told to call again with shorter arguments. If this recurs, raise the output limit "+
			"(openai.Model.MaxTokens, or the server's own, such as llama-server's -n)")
	case reply.Finish == FinishLength:
		r.warn(WarnTruncatedAnswer, "the model stopped at its output limit (finish reason length); its answer or tool calls may be cut short")
	case reply.Message.Text() == "" && reply.Message.callCount() == 0:
		r.warn(WarnEmptyAnswer, "the model gave neither text nor tool calls")
	}
	return reply, nil
}

// refit answers a model server that found req longer than the model's
// context (cause): it lowers the run's budget to what the server's figures
// suggest, which shortens the oldest tool outputs, and sends req once more.
// When nothing is left to shorten, or the second request is too long too,
// the error wraps cause, so it still matches ErrContextExceeded.
func (r *run) refit(ctx context.Context, cat *catalog, req *ChatRequest, cause error, onDelta func(Delta)) (*Reply, error) {
	r.window.lower(cause)
	msgs, shortened := r.request(cat.size)
	if !shortened {
		return nil, fmt.Errorf("agent: the conversation is longer than the model's context, with no tool output left to shorten: %w", cause)
	}
	r.warn(WarnContextBudget, fmt.Sprintf(
		"the model server found the request longer than the model's context; tool outputs were shortened to an estimated %d tokens "+
			"and the request sent again (set Agent.ContextBudget to fit the model's context)", r.window.budget))
	req.Messages = msgs
	r.result.Turns++ // a second model call, in the same turn
	reply, err := r.chatModel(ctx, req, onDelta)
	if errors.Is(err, ErrContextExceeded) {
		return nil, fmt.Errorf("agent: the conversation is longer than the model's context, even with tool outputs shortened: %w", err)
	}
	return reply, err
}

// noToolsNote insists, to a model that called tools when none were
// offered, on an answer in text.
const noToolsNote = "Do not call any tool: none is available, and a tool call will not be run. Reply with your answer as plain text only."

// cutCallNote tells the model that its reply was cut before a tool call
// in it was whole, leaving no call.
const cutCallNote = "Your last reply was cut off at the output limit (finish reason length) before the tool call in it was complete, " +
	"so no tool was called. Call the tool again with shorter arguments, or answer without it."

// rawCallMarkers start a tool call in the text of the chat templates in
// common use (Hermes and Qwen, Mistral, Llama 3, Functionary): a server
// leaves them in the text when it cannot parse a call that was cut.
var rawCallMarkers = []string{"<tool_call>", "[TOOL_CALLS]", "<|python_tag|>", "<function="}

// cutCall reports whether reply ended at the output limit in the middle of
// a tool call: its last call's arguments are not a whole JSON object, or,
// when tools were offered and no call came, its text is empty or holds the
// start of a call. llama-server gives each: a call cut after its name has
// partial arguments; one cut before is withheld from a stream, and left as
// text in a whole answer.
func cutCall(reply *Reply, offered bool) bool {
	if reply.Finish != FinishLength {
		return false
	}
	for i := len(reply.Message.Parts) - 1; i >= 0; i-- {
		if p := &reply.Message.Parts[i]; p.Kind == PartToolCall {
			return !isObject(p.Arguments)
		}
	}
	if !offered {
		return false
	}
	text := reply.Message.Text()
	if strings.TrimSpace(text) == "" {
		return true
	}
	for _, m := range rawCallMarkers {
		if strings.Contains(text, m) {
			return true
		}
	}
	return false
}

// request builds the messages sent to the model: one system message, then
// the conversation, shortened to the budget, with the output of local-only
// servers withheld from a model that is not local.
//
// shortened reports whether a tool output was shortened to fit.
func (r *run) request(toolsSize int) (msgs []Message, shortened bool) {
	system := r.a.SystemPrompt
	if system == "" {
		system = DefaultSystemPrompt
	}
	from := 0
	for ; from < len(r.msgs) && r.msgs[from].Role == RoleSystem; from++ {
		if r.msgs[from].Egress == config.EgressLocal && !r.local {
			r.warnOnce("system:", WarnToolsWithheld,
				"system messages labelled local-only (egress: local) are not sent to the model, which is not on this machine")
			continue
		}
		system += "\n\n" + r.msgs[from].Text()
	}
	if r.instructions != "" {
		system += "\n\n" + r.instructions
	}
	if r.note != "" {
		system += "\n\n" + r.note
	}
	shortened, over := r.window.fit(r.msgs, from, len(system)+toolsSize)
	if over {
		r.warn(WarnContextBudget, fmt.Sprintf(
			"the request is estimated at %d tokens, over the budget of %d, even with every tool output shortened", r.window.estimate, r.window.budget))
	}
	out := make([]Message, 0, len(r.msgs)-from+1)
	r.system[0] = TextPart(system) // the Model keeps no request (see Model)
	out = append(out, Message{Role: RoleSystem, Parts: r.system[:]})
	withheld := r.withheldCalls(r.msgs[from:])
	for _, m := range r.msgs[from:] {
		switch {
		case m.Role != RoleTool && m.Egress == config.EgressLocal && !r.local && m.Server == "":
			m.Parts = blankArguments(m.Parts, "[This message is withheld: it was written after content of local-only servers was read on this machine, and you do not run on this machine.]", nil)
			r.warnOnce("content:", WarnToolsWithheld,
				"messages written after content of local-only servers was read by a local model are not sent to the model, which is not on this machine")
		case m.Role != RoleTool && m.Egress == config.EgressLocal && !r.local:
			m.setText(fmt.Sprintf("[This message is withheld: it holds content of server %q, which is local-only, and you do not run on this machine.]", m.Server))
			r.warnOnce("content:"+m.Server, WarnToolsWithheld, fmt.Sprintf(
				"messages holding prompts or resources of local-only server %q are not sent to the model, which is not on this machine", m.Server))
		case m.Role == RoleTool && withheld[m.ToolCallID] && m.Server == "":
			m.setText("[The output of this call is withheld: it was made after content of local-only servers was read on this machine, and you do not run on this machine.]")
			r.warnOnce("content:", WarnToolsWithheld,
				"messages written after content of local-only servers was read by a local model are not sent to the model, which is not on this machine")
		case m.Role == RoleTool && withheld[m.ToolCallID]:
			m.setText(fmt.Sprintf("[The output of this call is withheld: server %q is local-only and you do not run on this machine.]", m.Server))
			r.warnOnce("output:"+m.Server, WarnToolsWithheld, fmt.Sprintf(
				"earlier calls of local-only server %q and their output are not sent to the model, which is not on this machine", m.Server))
		case m.Role == RoleAssistant && len(withheld) > 0:
			m.Parts = blankArguments(m.Parts, "", withheld)
		}
		out = append(out, m)
	}
	return out, shortened
}

// blankArguments returns a copy of parts with the arguments of the calls
// in ids (of all, for nil ids) replaced by "{}", and their provider
// metadata dropped (a hosted model of the same provider would read it).
// With a note, the copy holds the note as its text and the calls only: no
// other text, no reasoning.
func blankArguments(parts []Part, note string, ids map[string]bool) []Part {
	out := make([]Part, 0, len(parts)+1)
	if note != "" {
		out = append(out, TextPart(note))
	}
	for _, p := range parts {
		switch {
		case p.Kind == PartToolCall && (ids == nil || ids[p.ID]):
			p.Arguments, p.Metadata = "{}", nil
		case note != "" && p.Kind != PartToolCall:
			continue
		}
		out = append(out, p)
	}
	return out
}

// withheldCalls returns the IDs of the calls, in msgs, whose tool
// message holds local-only content (see localOnly), whose arguments and
// output must not reach a model that is not local.
func (r *run) withheldCalls(msgs []Message) map[string]bool {
	if r.local {
		return nil
	}
	var ids map[string]bool
	for _, m := range msgs {
		if m.Role == RoleTool && r.localOnly(m) {
			if ids == nil {
				ids = map[string]bool{}
			}
			ids[m.ToolCallID] = true
		}
	}
	return ids
}

// storedMessage returns the assistant's message m as the conversation
// holds it: its i-th call as stored(i, call) makes it (storedCall for nil
// stored). It shares m's parts unless a call changes: the agent never
// changes a part in place, and the Reply is the agent's once Chat returns.
func storedMessage(m *Message, stored func(i int, c ToolCall) ToolCall) Message {
	if stored == nil {
		stored = func(_ int, c ToolCall) ToolCall { return storedCall(c) }
	}
	msg := Message{Role: RoleAssistant, Parts: m.Parts}
	copied, n := false, 0
	for k := range m.Parts {
		if m.Parts[k].Kind != PartToolCall {
			continue
		}
		c := m.Parts[k].Call()
		if s := stored(n, c); s != c {
			if !copied {
				msg.Parts, copied = slices.Clone(m.Parts), true
			}
			msg.Parts[k].ID, msg.Parts[k].Name, msg.Parts[k].Arguments = s.ID, s.Name, s.Arguments
		}
		n++
	}
	return msg
}

// withoutCalls returns the assistant's message m as the conversation holds
// it when its calls are dropped: its reasoning and text.
func withoutCalls(m *Message) Message {
	msg := Message{Role: RoleAssistant}
	for _, p := range m.Parts {
		if p.Kind != PartToolCall {
			msg.Parts = append(msg.Parts, p)
		}
	}
	return msg
}

// storedCall is c as the conversation holds it before its arguments are
// checked: arguments that are not a JSON object are stored as "{}", since
// servers reject a conversation that holds them; the tool message
// explains.
func storedCall(c ToolCall) ToolCall {
	if !isObject(c.Arguments) {
		c.Arguments = "{}"
	}
	return c
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

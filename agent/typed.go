package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// AnswerTool is the name of the tool a typed answer is given through (see
// [RunTyped]) when the model cannot be held to a schema.
const AnswerTool = "answer"

// ResponseSchema asks a [Model] for a reply whose text is one JSON value
// that a JSON Schema accepts: OpenAI's response_format of type json_schema.
type ResponseSchema struct {
	// Name names the schema; 1 to 64 letters, digits, '_' or '-'.
	Name string
	// Schema is the JSON Schema, an object schema.
	Schema json.RawMessage
	// Strict asks the server to enforce the schema exactly. It is set only
	// for a schema that meets OpenAI's rules for strict mode (every
	// property required, no other property allowed, at every level),
	// which OpenAI otherwise rejects with an error.
	Strict bool
}

// AnswerError is the error of a typed run ([RunTyped]) whose model, asked
// twice, did not give an answer that the type's schema accepts and that
// decodes into the type.
type AnswerError struct {
	// Raw is the model's last answer as it sent it: its text, or the
	// arguments of its AnswerTool call.
	Raw string
	// Problem says what is wrong with it.
	Problem string
}

// Error returns the problem, as in "agent: the model's answer does not
// match the schema: missing required property "city"".
func (e *AnswerError) Error() string {
	return "agent: the model's answer does not match the schema: " + e.Problem
}

// RunTyped runs the conversation msgs with a, like [Agent.RunStream], and
// returns the model's answer as a T: it infers T's JSON Schema with
// github.com/google/jsonschema-go (as [NewFunc] does for arguments), asks
// the model for an answer the schema accepts, validates it and decodes it.
// T must be a struct or a map with string keys, since OpenAI, and an
// answer given as a tool's arguments, need an object.
//
// How the answer is asked for depends on the model and on the tools:
//
//   - A model that holds its reply to a schema (Capabilities.Schema; the
//     openai driver unless NoResponseFormat is set) is sent the schema as a response
//     format; any other gets one tool, AnswerTool, whose arguments are the
//     answer, and must call it (ToolChoiceRequired). A reply whose text is
//     the answer is taken too, from servers that ignore the choice.
//   - An Agent with no tools to offer asks for the answer at once. An
//     Agent with tools runs as Run does, tools offered and the schema in
//     the system prompt, until the model answers in text; then it asks for
//     the answer in one more turn, without the other tools. The schema is
//     never sent with tools: llama-server and Ollama turn it into a grammar
//     for the whole reply, which leaves the model no way to call a tool,
//     and a model asked for an answer tool beside the others tends to
//     answer before it has used them.
//
// An answer is validated as tool arguments are, after the same repairs (a
// code fence, trailing commas, null for an optional field). If it does not
// match, the model is told why and asked once more; if the second answer
// does not match either, RunTyped returns an *AnswerError with it. A
// server that refuses the response format (a status 400 or 422 error,
// other than a request too long for the context) is asked once more
// through AnswerTool, with a WarnTypedAnswer warning.
//
// The typed turns count in Result.Turns but not against Agent.MaxTurns:
// a run may call the model two times more than MaxTurns, three when the
// response format is refused. On success,
// Result.Answer is the answer's JSON and Result.Stop StopAnswer, and the
// conversation in Result.Messages ends with it. A run stopped by a limit,
// a cancellation or a model error returns the zero T and Run's error; a
// run that ends with an AnswerError has Result.Stop StopError. AnswerTool
// is not a tool of the run: it goes to no Policy and makes no tool events.
func RunTyped[T any](ctx context.Context, a *Agent, msgs []Message, onEvent func(Event)) (T, Result, error) {
	var zero T
	ta, err := typedFor(reflect.TypeFor[T]())
	if err != nil {
		return zero, Result{Stop: StopError, Messages: append([]Message(nil), msgs...)}, err
	}
	r := newRun(a, msgs, nil, onEvent)
	ctx, traced := r.traceRun(ctx, len(msgs))
	raw, err := r.runTyped(ctx, ta)
	traced(err)
	if err != nil {
		return zero, r.result, err
	}
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		r.result.Stop = StopError
		return zero, r.result, &AnswerError{Raw: string(raw), Problem: "it does not decode into " + reflect.TypeFor[T]().String() + ": " + err.Error()}
	}
	return v, r.result, nil
}

// typedAnswer is the schema of a typed run's answer.
type typedAnswer struct {
	name   string
	schema json.RawMessage // as inferred, sent as a response format
	strict bool
	ts     *toolSchema // validates answers; its projection is AnswerTool's parameters
}

func typedFor(t reflect.Type) (*typedAnswer, error) {
	s, raw, ts, err := objectSchema(t, "a typed answer")
	if err != nil {
		return nil, err
	}
	name := t.Name()
	if !funcName.MatchString(name) {
		name = "answer"
	}
	return &typedAnswer{name: name, schema: raw, strict: strictSchema(s), ts: ts}, nil
}

// strictSchema reports whether s meets OpenAI's rules for strict mode:
// each object schema lists every property as required and allows no
// other, at every level.
func strictSchema(s *jsonschema.Schema) bool {
	if s == nil {
		return true
	}
	if len(s.Properties) > 0 || s.Type == "object" || slices.Contains(s.Types, "object") {
		if s.AdditionalProperties == nil || s.AdditionalProperties.Not == nil || len(s.Required) != len(s.Properties) {
			return false
		}
	}
	for _, p := range s.Properties {
		if !strictSchema(p) {
			return false
		}
	}
	for _, sub := range slices.Concat([]*jsonschema.Schema{s.Items}, s.PrefixItems, s.AnyOf, s.OneOf, s.AllOf) {
		if !strictSchema(sub) {
			return false
		}
	}
	for _, d := range s.Defs {
		if !strictSchema(d) {
			return false
		}
	}
	for _, d := range s.Definitions {
		if !strictSchema(d) {
			return false
		}
	}
	return true
}

// runTyped runs the conversation and the typed turns, and returns the
// valid answer.
func (r *run) runTyped(ctx context.Context, ta *typedAnswer) (json.RawMessage, error) {
	defer func() { r.result.Messages = r.msgs }()
	byTool := !CapabilitiesOf(r.a.Model).Schema
	if err := r.check(); err != nil {
		r.result.Stop = StopError
		return nil, err
	}
	r.note = "The final answer must be a JSON object that matches this JSON Schema:\n" + string(ta.schema)
	if r.a.ToolChoice == "" && len(r.a.PreloadSkills) == 0 && len(r.catalog().defs) == 0 {
		// Nothing to offer: the answer is asked for at once.
		r.note += "\n" + askAnswer(byTool)
		return r.typedTurns(ctx, ta, byTool)
	}
	r.note += "\nUse the tools as you need to first; you will then be asked for the JSON object."
	if err := r.run(ctx); err != nil {
		return nil, err
	}
	r.add(UserMessage(askAnswer(byTool)))
	return r.typedTurns(ctx, ta, byTool)
}

// askAnswer is what the model is told to do for its typed answer.
func askAnswer(byTool bool) string {
	if byTool {
		return fmt.Sprintf("Give your final answer now by calling the tool %q, with the JSON object as its arguments.", AnswerTool)
	}
	return "Give your final answer now: the JSON object alone, with no other text."
}

// typedTurns asks for the answer, and once more if it does not match.
func (r *run) typedTurns(ctx context.Context, ta *typedAnswer, byTool bool) (json.RawMessage, error) {
	var raw, problem string
	for attempt := 0; attempt < 2; attempt++ {
		reply, err := r.typedTurn(ctx, ta, byTool)
		if !byTool && errors.Is(err, ErrBadRequest) {
			r.warn(WarnTypedAnswer, "the model server refused the response format ("+err.Error()+
				"); the answer is asked for through the tool "+AnswerTool+" (set openai.Model.NoResponseFormat for this server)")
			byTool = true
			reply, err = r.typedTurn(ctx, ta, byTool)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, r.canceled(ctx)
			}
			r.result.Stop = StopError
			return nil, err
		}
		raw = answerText(reply, byTool)
		clean, _, repairs, p := ta.ts.checkArgs(raw)
		problem = answerProblem(p)
		if problem == "" && strings.TrimSpace(raw) == "" {
			problem = "it is empty"
		}
		fix := ""
		if problem != "" {
			fix = "Your answer does not match the schema: " + problem + ". Give the whole answer again, corrected. " + askAnswer(byTool)
		}
		r.answerCalls(byTool, fix)
		if problem == "" {
			if len(repairs) > 0 {
				r.warn(WarnTypedAnswer, "the model's answer was repaired: "+strings.Join(repairs, ", "))
			}
			r.result.Answer = string(clean)
			r.result.Stop = StopAnswer
			return clean, nil
		}
	}
	r.result.Stop = StopError
	return nil, &AnswerError{Raw: raw, Problem: problem}
}

// typedTurn calls the model for the answer and adds its reply to the
// conversation.
func (r *run) typedTurn(ctx context.Context, ta *typedAnswer, byTool bool) (*Reply, error) {
	cat := &catalog{}
	var choice ToolChoice
	if byTool {
		cat = &catalog{byName: map[string]*tool{}}
		cat.add(&tool{name: AnswerTool, description: "Gives the final answer: its arguments are the answer.", schema: ta.ts})
		choice = ToolChoiceRequired
	} else {
		r.schema = &ResponseSchema{Name: ta.name, Schema: ta.schema, Strict: ta.strict}
		defer func() { r.schema = nil }()
	}
	reply, err := r.chat(ctx, cat, choice)
	if err != nil {
		return nil, err
	}
	r.add(storedMessage(&reply.Message, nil))
	return reply, nil
}

// answerCalls answers the tool calls of a typed turn's reply, so that the
// conversation stays whole: a call of AnswerTool that holds the answer
// gets a receipt, or fix, what to correct, when fix is not ""; any other
// call is not run. Without a call of AnswerTool, fix goes to the model in
// a user message.
func (r *run) answerCalls(byTool bool, fix string) {
	answered := false
	for i, c := range r.msgs[len(r.msgs)-1].ToolCalls() {
		content := fmt.Sprintf("Error: this call was not run: no tool but %q is available now, and only for the answer.", AnswerTool)
		if byTool && i == 0 && c.Name == AnswerTool {
			content, answered = "Answer received.", true
			if fix != "" {
				content = "Error: " + fix
			}
		}
		r.add(Message{Role: RoleTool, ToolCallID: c.ID, Parts: []Part{ToolResultPart(content)}})
	}
	if !answered && fix != "" {
		r.add(UserMessage(fix))
	}
}

// answerText returns the answer in reply: the arguments of its first call
// when it calls AnswerTool, else its text.
func answerText(reply *Reply, byTool bool) string {
	if byTool {
		for i := range reply.Message.Parts {
			if p := &reply.Message.Parts[i]; p.Kind == PartToolCall {
				if p.Name == AnswerTool {
					return p.Arguments
				}
				break
			}
		}
	}
	return reply.Message.Text()
}

// answerProblem words a problem of tool arguments as one of an answer.
var answerProblem = strings.NewReplacer(
	"the arguments do not match the tool's input schema", "it does not match",
	"the arguments must be", "it must be",
	"the arguments are not", "it is not",
).Replace

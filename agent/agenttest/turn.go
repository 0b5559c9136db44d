package agenttest

import (
	"context"
	"time"

	"git.rickub.com/bots-garden/mini-me/agent"
)

// Turn is what a [Model] does for one call of Chat: it waits Delay,
// checks the request with Expect, streams Reasoning then Text, and returns
// Err, or hangs, or returns the reply the other fields make.
type Turn struct {
	// Reasoning and Text are streamed to onDelta (reasoning first) in
	// pieces of Model.ChunkSize bytes, and make the reply's reasoning and
	// text parts.
	Reasoning, Text string
	// ToolCalls are the calls of the reply, in order. A call with an
	// empty ID is given one, "call_<turn>_<index>" (from 1), so that the
	// reply keeps the Model contract; IDs given are kept as they are, even
	// repeated, so that a test can script a model that breaks it.
	ToolCalls []agent.ToolCall
	// Finish is the reply's finish reason; "" means agent.FinishToolCalls
	// when there are calls, else agent.FinishStop.
	Finish agent.FinishReason
	// Usage is the reply's token count; nil means one derived from the
	// sizes of the request and of the answer, four bytes a token.
	Usage *agent.Usage

	// Err, if not nil, is returned instead of a reply, after Reasoning
	// and Text were streamed (a turn that failed half-way). Make it an
	// *agent.ModelError for the agent, Fallback and Retry to act on its
	// Kind; any other error is final.
	Err error
	// Delay, if > 0, is waited before anything else; the end of Chat's
	// context ends the wait, and Chat returns the context's error.
	Delay time.Duration
	// Hang, after the text was streamed, holds Chat until its context
	// ends, then returns the context's error: a model that stalls.
	Hang bool
	// Expect, if not nil, is given the request before the turn is played
	// (it must not keep or modify it). An error it returns fails the
	// call with that error, which is final for the agent, and is kept
	// for Model.Verify.
	Expect func(*agent.ChatRequest) error
}

// Answer returns a Turn that answers text.
func Answer(text string) Turn { return Turn{Text: text} }

// CallTool returns a Turn that calls the tool name with arguments, a
// JSON object as text; the call's ID is given by the Model.
func CallTool(name, arguments string) Turn {
	return Turn{ToolCalls: []agent.ToolCall{{Name: name, Arguments: arguments}}}
}

// Fail returns a Turn that fails with err.
func Fail(err error) Turn { return Turn{Err: err} }

// wait waits d, or until ctx ends, whichever comes first, and returns
// ctx's error.
func wait(ctx context.Context, d time.Duration) error {
	if d > 0 {
		timed, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		<-timed.Done()
	}
	return ctx.Err()
}

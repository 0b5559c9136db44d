package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/modelenv"
	"git.rickub.com/bots-garden/mini-me/agent/render"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// Call is one tool call made without a model: the tool's name, as the
// model would call it, and its arguments.
type Call struct {
	// Tool is the tool's name, as the model would call it.
	Tool string
	// Args are the call's arguments; nil sends none.
	Args map[string]any
}

// Fallback is what an example does when there is no model: it says so,
// then makes calls itself, through the same policy as the agent would.
// It is plain data, safe for concurrent use once built.
type Fallback struct {
	// Intro is printed after the paragraph that says why there is no model
	// and how to start one; it says what the calls show.
	Intro string
	// Calls are made in order.
	Calls []Call
}

// Run is f, when modelenv.Find found no model (why is its error): it
// prints modelenv.Help(why) and f.Intro, then makes f.Calls through
// policy, printing each call, the decision and the result to w. A denial
// is printed, not returned: it is an answer. The error is for a call that
// could not be made, which ends the calls. When ctx is done, Run prints
// nothing and returns ctx's error: no model was found because the program
// is stopping.
func (f Fallback) Run(ctx context.Context, w io.Writer, why error, tools *toolset.Toolset, policy *permission.Policy) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%s\n\n%s", modelenv.Help(why), f.Intro)
	for _, c := range f.Calls {
		if err := makeCall(ctx, w, tools, policy, c); err != nil {
			return err
		}
	}
	return nil
}

// makeCall makes c through policy, as the agent would, and prints the
// call, the decision and the result to w.
func makeCall(ctx context.Context, w io.Writer, tools *toolset.Toolset, policy *permission.Policy, c Call) error {
	t, ok := tools.Tool(c.Tool)
	if !ok {
		return fmt.Errorf("demo: no tool %q: %w", c.Tool, toolset.ErrUnknownTool)
	}
	raw, err := json.Marshal(c.Args)
	if err != nil {
		return fmt.Errorf("demo: arguments of %s: %w", c.Tool, err)
	}
	req := agent.PermissionRequest(t, raw)
	fmt.Fprintf(w, "→ %s %s\n", c.Tool, req.Arguments)
	d, _ := policy.Check(ctx, req) // an error denies, with a reason that says why
	if !d.Allowed() {
		fmt.Fprintf(w, "← not run (%s)\n", render.Clean(d.String(), 300))
		return nil
	}
	res, err := tools.Call(ctx, c.Tool, c.Args)
	if err != nil {
		return err
	}
	status := "ok"
	if res.IsError() {
		status = "the tool reported an error"
	}
	fmt.Fprintf(w, "← %s:\n%s\n", status, "  "+strings.ReplaceAll(render.CleanText(res.Text(), 2000), "\n", "\n  "))
	return nil
}

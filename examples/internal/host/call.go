// Package host holds what the example programs do around the SDK, the
// parts every host program writes once in its own way: calling a tool
// without a model, and printing the start-up banner and a run's events.
package host

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// CallTool calls the tool named name directly, without a model, but
// through policy as the agent would, and prints the call, the decision and
// the result to w. A denial is printed, not returned: it is an answer. The
// error is for a call that could not be made.
func CallTool(ctx context.Context, w io.Writer, tools *mcp.Toolset, policy *permission.Policy, name string, args any) error {
	t, ok := tools.Tool(name)
	if !ok {
		return fmt.Errorf("host: no tool %q: %w", name, mcp.ErrUnknownTool)
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return fmt.Errorf("host: arguments of %s: %w", name, err)
	}
	req := agent.PermissionRequest(t, raw)
	fmt.Fprintf(w, "→ %s %s\n", name, req.Arguments)
	d, _ := policy.Check(ctx, req) // an error denies, with a reason that says why
	if !d.Allowed() {
		fmt.Fprintf(w, "← not run (%s)\n", Clean(d.String(), 300))
		return nil
	}
	res, err := tools.Call(ctx, name, args)
	if err != nil {
		return err
	}
	status := "ok"
	if res.IsError() {
		status = "the tool reported an error"
	}
	fmt.Fprintf(w, "← %s:\n%s\n", status, Indent(CleanText(res.Text(), 2000), "  "))
	return nil
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/modelenv"
	"git.rickub.com/bots-garden/mini-me/agent/render"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// laterApprover is the Approver of a host that cannot ask while the run
// goes on, such as a web back end answering an HTTP request: it approves
// read-only tools by itself (as uiApprover does) and defers every other
// call, for the user to answer later.
var laterApprover = permission.ApproverFunc(func(_ context.Context, req permission.Request) (permission.Decision, error) {
	if req.Annotations.ReadOnly() && !req.Changed {
		return permission.Decision{Verdict: permission.AllowOnce}, nil
	}
	return permission.Decision{}, permission.ErrDeferred
})

// runWaiting is the program with -wait: the run stops at the first call
// that needs the user, its state goes to a file, the user decides, and a
// fresh Agent resumes the run from the file, as a later request, or
// another process, would.
func runWaiting(ctx context.Context, prompt string, stdin io.Reader, stdout io.Writer) error {
	servers, err := start(ctx, stdout, "mini-me approver -wait: approvals that wait for the user")
	if err != nil {
		return err
	}
	defer servers.Close()
	cfg, tools := servers.Config, servers.Tools

	var model agent.Model
	if found, err := modelenv.Find(ctx, os.Getenv); err == nil {
		render.Model(stdout, found)
		model = found
	} else {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		fmt.Fprintf(stdout, "\n%s\n\nWithout a model, a script plays its part: it asks for the calls of the\ndefault prompt, then answers.\n\n", modelenv.Help(err))
		model = script{}
	}
	// Each step makes its own Agent and Policy, as separate requests to
	// a web back end would; only the servers are shared.
	newAgent := func() *agent.Agent {
		return &agent.Agent{Model: model, Tools: tools, Policy: agent.PolicyFromConfig(cfg, laterApprover)}
	}

	// 1. The run goes as far as it can without the user.
	res, err := newAgent().RunStream(ctx, []agent.Message{agent.UserMessage(prompt)}, render.Events(stdout))
	if res.Stop != agent.StopPendingApproval {
		return err // the model answered without a call to approve, or the run failed
	}
	data, err := json.MarshalIndent(res.Pending, "", "  ")
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "mini-me-approver-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "state.json")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "[host] the run stopped for approval; its state (%d bytes of JSON) is saved in %s\n", len(data), file)

	// 2. Later, the user decides, on a page that lists the pending calls.
	data, err = os.ReadFile(file)
	if err != nil {
		return err
	}
	var st agent.State
	if err := json.Unmarshal(data, &st); err != nil {
		return err
	}
	lines := permission.NewLines(stdin)
	decisions := map[string]permission.Decision{}
	for _, p := range st.Pending {
		d, ok := ask(ctx, p.Request, p.Call.Arguments, lines, stdout)
		if !ok {
			return ctx.Err()
		}
		decisions[p.ID] = d
	}

	// 3. A fresh Agent resumes the run with the decisions: each approved
	// call runs once, and the model goes on. It may stop again; this
	// example stops there.
	fmt.Fprintln(stdout, "[host] resuming the run from", file)
	res, err = newAgent().ResumeStream(ctx, &st, decisions, render.Events(stdout))
	if res.Stop == agent.StopPendingApproval {
		fmt.Fprintln(stdout, "[host] the run stopped for approval again")
		return nil
	}
	return err
}

// script is the model's stand-in when there is none: it asks for the
// calls of the default prompt, then answers from the tool messages.
type script struct{}

func (script) Chat(_ context.Context, req *agent.ChatRequest, onDelta func(agent.Delta)) (*agent.Reply, error) {
	var results []string
	for _, m := range req.Messages {
		if m.Role == agent.RoleTool {
			results = append(results, m.Name)
		}
	}
	switch len(results) {
	case 0:
		return &agent.Reply{Finish: agent.FinishToolCalls, Message: agent.Message{Role: agent.RoleAssistant,
			Parts: agent.Parts("", []agent.ToolCall{{ID: "call_1", Name: "text_count", Arguments: `{"text":"to be or not to be"}`}}...)}}, nil
	case 1:
		return &agent.Reply{Finish: agent.FinishToolCalls, Message: agent.Message{Role: agent.RoleAssistant,
			Parts: agent.Parts("", []agent.ToolCall{{ID: "call_2", Name: "notes_save_note", Arguments: `{"title":"hamlet","text":"6 words"}`}}...)}}, nil
	}
	text := "(scripted) Both calls are settled: the count, and the note as the user decided.\n"
	if onDelta != nil {
		onDelta(agent.Delta{Text: text})
	}
	return &agent.Reply{Finish: agent.FinishStop, Message: agent.Message{Role: agent.RoleAssistant, Parts: agent.Parts(text)}}, nil
}

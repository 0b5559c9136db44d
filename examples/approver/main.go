// Approver shows how a host with its own approval UI, a desktop dialog or
// a web page, plugs into mini-me: it implements permission.Approver,
// approves read-only tools by itself, and puts every other call to the user
// through a channel that its UI serves, waiting for the answer or for the
// question to be withdrawn. Every decision also goes to an audit log.
//
//	go run ./examples/approver
//	go run ./examples/approver 'Save a note "ideas": try mini-me.'
//
// Here the "UI" is a goroutine that shows each question on the terminal
// and reads y or n; a desktop application would open a dialog instead,
// and a web application would show the question on a page and send the
// answer back from an HTTP handler. The agent and the policy do not change.
//
// It runs on the demo's MCP servers (text tools, all read-only, and a
// notepad with a write and a destructive tool), started in-process on
// 127.0.0.1. The model comes from the environment, as for the quickstart
// (agent/modelenv). Without one, the program says how to start
// one, then makes three calls itself through the same policy: one
// read-only, approved without asking, and two that the UI asks about. It
// exits with status 0 in both cases.
//
// With -wait, it is a host that cannot ask while the run goes on, such as
// a web back end answering one HTTP request (wait.go): its Approver defers
// every call that is not read-only (permission.ErrDeferred), so the run
// stops with the call pending. The program saves the run's state, plain
// JSON, to a file, reads it back, asks the user, and resumes the run in a
// fresh Agent with the decision (agent.Agent.Resume), as a later request,
// or another process, would:
//
//	go run ./examples/approver -wait
//
// Without a model, a script plays the model's part, so that this too runs
// on a fresh machine.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"strings"
	"sync"
	"time"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/modelenv"
	"git.rickub.com/bots-garden/mini-me/agent/render"
	"git.rickub.com/bots-garden/mini-me/examples/demo"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// question is a tool call waiting for the user's decision.
type question struct {
	req    permission.Request
	answer chan<- permission.Decision // buffered: the UI never waits on it
}

// uiApprover is the host's Approver. It approves a read-only tool by
// itself, unless its definition changed since it was last allowed, and
// sends every other call to the UI.
//
// Read-only is a hint from the server, which could lie: a host trusts it
// only for servers it trusts. A Policy never uses hints to ask less; this
// host chooses to.
type uiApprover struct {
	questions chan<- question
}

func (a uiApprover) Approve(ctx context.Context, req permission.Request) (permission.Decision, error) {
	if req.Annotations.ReadOnly() && !req.Changed {
		return permission.Decision{Verdict: permission.AllowOnce}, nil
	}
	answer := make(chan permission.Decision, 1)
	select {
	case a.questions <- question{req: req, answer: answer}:
	case <-ctx.Done():
		return permission.Decision{}, ctx.Err()
	}
	select {
	case d := <-answer:
		return d, nil
	case <-ctx.Done(): // the run was stopped, or the policy's timeout expired
		return permission.Decision{}, ctx.Err()
	}
}

// serveUI answers the questions, one at a time, until ctx is done: it
// shows each one and reads the user's answer from lines. When lines end,
// every call is denied.
func serveUI(ctx context.Context, questions <-chan question, lines *permission.Lines, out io.Writer) {
	for {
		var q question
		select {
		case q = <-questions:
		case <-ctx.Done():
			return
		}
		d, ok := ask(ctx, q.req, string(q.req.Arguments), lines, out)
		if !ok {
			return
		}
		q.answer <- d
	}
}

// ask shows the call req describes, with its arguments args, and reads the
// user's answer from lines; when lines end, the call is denied. It reports
// false when ctx is done.
func ask(ctx context.Context, req permission.Request, args string, lines *permission.Lines, out io.Writer) (permission.Decision, bool) {
	fmt.Fprintf(out, "[ui] Run %s with %s? It %s. [y/N] ",
		render.Clean(req.PrefixedName, 64), render.Clean(args, 300), req.Annotations)
	d := permission.Decision{Verdict: permission.Deny, Reason: "the user said no"}
	line, err := lines.Next(ctx)
	switch {
	case ctx.Err() != nil:
		return d, false
	case err != nil:
		fmt.Fprintln(out)
		d.Reason = "no one is there to approve it"
	case strings.EqualFold(strings.TrimSpace(line), "y"), strings.EqualFold(strings.TrimSpace(line), "yes"):
		d = permission.Decision{Verdict: permission.AllowOnce}
	}
	return d, true
}

// withoutModel is what the program does when there is no model.
var withoutModel = demo.Fallback{
	Intro: "Without a model, here are three calls made directly, through the same\npolicy: the read-only one is approved by the host, the others asked.\n\n",
	Calls: []demo.Call{
		{Tool: "text_count", Args: map[string]any{"text": "to be or not to be"}},
		{Tool: "notes_save_note", Args: map[string]any{"title": "hamlet", "text": "6 words"}},
		{Tool: "notes_delete_note", Args: map[string]any{"title": "shopping"}},
	},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	prompt := `Count the words of "to be or not to be", then save the count in a note titled "hamlet".`
	args, do := os.Args[1:], run
	if len(args) > 0 && args[0] == "-wait" {
		args, do = args[1:], runWaiting
	}
	if len(args) > 0 {
		prompt = strings.Join(args, " ")
	}
	if err := do(ctx, prompt, os.Stdin, os.Stdout); err != nil {
		log.SetFlags(0)
		log.Fatal("approver: ", err)
	}
}

// start starts the demo's servers and shows title and their banner; the
// caller closes them.
func start(ctx context.Context, stdout io.Writer, title string) (*demo.Servers, error) {
	servers, err := demo.Discover(ctx)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(stdout, "%s\n\n", title)
	render.Banner(stdout, servers.Tools)
	return servers, nil
}

func run(ctx context.Context, prompt string, stdin io.Reader, stdout io.Writer) error {
	servers, err := start(ctx, stdout, "mini-me approver: a host with its own approval UI")
	if err != nil {
		return err
	}
	defer servers.Close()
	cfg, tools := servers.Config, servers.Tools

	// The UI runs beside the agent, for as long as run does.
	uiCtx, stopUI := context.WithCancel(ctx)
	questions := make(chan question)
	var ui sync.WaitGroup
	ui.Add(1)
	go func() {
		defer ui.Done()
		serveUI(uiCtx, questions, permission.NewLines(stdin), stdout)
	}()
	defer func() {
		stopUI()
		ui.Wait()
	}()

	policy := agent.PolicyFromConfig(cfg, uiApprover{questions: questions},
		permission.WithTimeout(2*time.Minute), // a question nobody answers is denied
		permission.WithAudit(func(e permission.Event) {
			fmt.Fprintf(stdout, "[audit] %s: %s (%s)\n", render.Clean(e.PrefixedName, 64), render.Clean(e.Verdict.String(), 20), e.Source)
		}))

	model, err := modelenv.Find(ctx, os.Getenv)
	if err != nil {
		return withoutModel.Run(ctx, stdout, err, tools, policy)
	}
	render.Model(stdout, model)
	a := &agent.Agent{Model: model, Tools: tools, Policy: policy}
	_, err = a.RunStream(ctx, []agent.Message{agent.UserMessage(prompt)}, render.Events(stdout))
	return err
}

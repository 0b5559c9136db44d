// Command durable runs an agent durably on Temporal (agent/temporal): a
// worker that does the model and tool calls, a starter, and an approval
// given from the command line, possibly days later, possibly after the
// worker was restarted.
//
//	durable worker                 # serve runs until interrupted
//	durable start ID QUESTION      # start run ID
//	durable pending ID             # the calls waiting for approval
//	durable approve ID [yes|no]    # wait for them, decide, wait for the answer
//
// It needs a Temporal server: TEMPORAL_ADDRESS (default 127.0.0.1:7233)
// in namespace TEMPORAL_NAMESPACE (default "default"), such as the
// Temporal CLI's "temporal server start-dev"; when none answers, the
// error says how to start one. The worker's model is the one the
// MINIME_* variables name, as for every example (see agent/modelenv),
// and the agent's one tool a local Func, pay, which asks for approval
// before every call.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/modelenv"
	"git.rickub.com/bots-garden/mini-me/agent/temporal"
	"git.rickub.com/bots-garden/mini-me/permission"
)

const queue = "minime-example"

const usage = "usage: durable worker | start ID QUESTION | pending ID | approve ID [yes|no]"

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "durable:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	var cmd func(client.Client) error
	switch {
	case len(args) == 1 && args[0] == "worker":
		cmd = func(c client.Client) error { return serve(ctx, c, out) }
	case len(args) == 3 && args[0] == "start":
		cmd = func(c client.Client) error { return start(ctx, c, args[1], args[2], out) }
	case len(args) == 2 && args[0] == "pending":
		cmd = func(c client.Client) error {
			p, err := progress(ctx, c, args[1])
			if err == nil {
				printPending(out, p)
			}
			return err
		}
	case (len(args) == 2 || len(args) == 3) && args[0] == "approve":
		cmd = func(c client.Client) error { return approve(ctx, c, args[1], len(args) == 2 || args[2] == "yes", out) }
	default:
		return errors.New(usage)
	}
	c, err := dial()
	if err != nil {
		return err
	}
	defer c.Close()
	return cmd(c)
}

// dial connects to the Temporal server, or says how to start one.
func dial() (client.Client, error) {
	// The SDK's logs go to stderr, warnings and errors only: stdout is
	// the commands' output.
	logger := tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	addr := env("TEMPORAL_ADDRESS", "127.0.0.1:7233")
	c, err := client.Dial(client.Options{HostPort: addr, Namespace: env("TEMPORAL_NAMESPACE", "default"), Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("no Temporal server answers at %s (%w)\n\n%s", addr, err, noServer)
	}
	return c, nil
}

// noServer says how to get a Temporal server.
const noServer = `This example needs a Temporal server. Start one on this machine, in
another terminal, and run the command again:

  temporal server start-dev

(the Temporal CLI: "brew install temporal", or
"curl -sSf https://temporal.download/cli.sh | sh"; see
https://docs.temporal.io/cli). Or set TEMPORAL_ADDRESS, and
TEMPORAL_NAMESPACE, to a server of yours. Without the CLI, this
repository's test server serves too (from the repository's root; its
first build takes many minutes):

  cd agent/temporal/internal/devserver && GOTOOLCHAIN=go1.26.10 go run .

It prints its address and its namespace: set TEMPORAL_ADDRESS and
TEMPORAL_NAMESPACE to them.`

// serve runs a worker until interrupted.
func serve(ctx context.Context, c client.Client, out io.Writer) error {
	model, err := modelenv.Find(ctx, os.Getenv)
	if err != nil {
		return fmt.Errorf("%w\n\n%s", err, modelenv.Help(err))
	}
	pay, err := agent.NewFunc("pay", "Pays an amount, in euros, to someone.", func(_ context.Context, in struct {
		To     string  `json:"to"`
		Amount float64 `json:"amount"`
	}) (string, error) {
		return fmt.Sprintf("paid %.2f EUR to %s", in.Amount, in.To), nil
	})
	if err != nil {
		return err
	}
	acts := &temporal.Activities{Model: model, Funcs: []*agent.Func{pay}}
	w := worker.New(c, queue, worker.Options{})
	acts.Register(w)
	if err := w.Start(); err != nil {
		return err
	}
	defer w.Stop()
	fmt.Fprintln(out, "worker ready")
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	<-ctx.Done()
	return nil
}

// start starts the run id.
func start(ctx context.Context, c client.Client, id, question string, out io.Writer) error {
	in := temporal.Input{
		Messages: []agent.Message{agent.UserMessage(question)},
		Config:   temporal.Config{ServerModes: map[string]permission.Mode{agent.FuncServer: permission.ModeAsk}},
	}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, temporal.WorkflowName, in)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "started %s\n", run.GetID())
	return nil
}

// progress queries run id's progress.
func progress(ctx context.Context, c client.Client, id string) (temporal.Progress, error) {
	var p temporal.Progress
	v, err := c.QueryWorkflow(ctx, id, "", temporal.ProgressQuery)
	if err == nil {
		err = v.Get(&p)
	}
	return p, err
}

// printPending prints the calls of p that wait for approval.
func printPending(out io.Writer, p temporal.Progress) {
	for _, pc := range p.Pending {
		fmt.Fprintf(out, "pending %s: %s %s\n", pc.ID, pc.Call.Name, pc.Request.ArgumentsText(200))
	}
	if len(p.Pending) == 0 {
		fmt.Fprintln(out, "no call waits for approval")
	}
}

// approve decides every pending call of run id, waiting for one if none
// is pending yet (see awaitPending), then prints the run's answer.
func approve(ctx context.Context, c client.Client, id string, yes bool, out io.Writer) error {
	p, err := awaitPending(ctx, c, id, approveWait, out)
	if err != nil {
		return err
	}
	printPending(out, p)
	if len(p.Pending) > 0 {
		d := permission.Decision{Verdict: permission.AllowOnce}
		if !yes {
			d = permission.Decision{Verdict: permission.Deny, Reason: "the user said no"}
		}
		decisions := map[string]permission.Decision{}
		for _, pc := range p.Pending {
			decisions[pc.ID] = d
		}
		h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: id, UpdateName: temporal.DecideUpdate,
			Args: []any{decisions}, WaitForStage: client.WorkflowUpdateStageCompleted})
		if err == nil {
			err = h.Get(ctx, nil)
		}
		if err != nil {
			return err
		}
	}
	var res temporal.Output
	if err := c.GetWorkflow(ctx, id, "").Get(ctx, &res); err != nil {
		return err
	}
	fmt.Fprintf(out, "stop: %s\nanswer: %s\n", res.Result.Stop, res.Result.Answer)
	return nil
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

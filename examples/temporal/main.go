// Command temporal runs an agent durably on Temporal (agent/temporal): a
// worker that does the model and tool calls, a starter, and an approval
// given from the command line, possibly days later, possibly after the
// worker was restarted.
//
//	temporal worker                 # serve runs until interrupted
//	temporal start ID QUESTION      # start run ID
//	temporal pending ID             # the calls waiting for approval
//	temporal approve ID [yes|no]    # decide them, wait for the answer
//
// The Temporal server is TEMPORAL_ADDRESS (default 127.0.0.1:7233) in
// namespace TEMPORAL_NAMESPACE (default "default"), such as
// "temporal server start-dev". The model is the OpenAI-compatible
// endpoint MODEL_URL (default http://127.0.0.1:8080/v1, llama-server's)
// with MODEL_NAME, and the agent's one tool a local Func, pay, which asks
// for approval before every call.
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
	"git.rickub.com/bots-garden/mini-me/agent/openai"
	"git.rickub.com/bots-garden/mini-me/agent/temporal"
	"git.rickub.com/bots-garden/mini-me/permission"
)

const queue = "minime-example"

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "temporal:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: temporal worker | start ID QUESTION | pending ID | approve ID [yes|no]")
	}
	// The SDK's logs go to stderr, warnings and errors only: stdout is
	// the commands' output.
	logger := tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	c, err := client.Dial(client.Options{HostPort: env("TEMPORAL_ADDRESS", "127.0.0.1:7233"),
		Namespace: env("TEMPORAL_NAMESPACE", "default"), Logger: logger})
	if err != nil {
		return err
	}
	defer c.Close()
	switch {
	case args[0] == "worker":
		return serve(ctx, c, out)
	case args[0] == "start" && len(args) == 3:
		return start(ctx, c, args[1], args[2], out)
	case args[0] == "pending" && len(args) == 2:
		_, err := pending(ctx, c, args[1], out)
		return err
	case args[0] == "approve" && (len(args) == 2 || len(args) == 3):
		return approve(ctx, c, args[1], len(args) == 2 || args[2] == "yes", out)
	}
	return fmt.Errorf("unknown command %q", args)
}

// serve runs a worker until interrupted.
func serve(ctx context.Context, c client.Client, out io.Writer) error {
	pay, err := agent.NewFunc("pay", "Pays an amount, in euros, to someone.", func(_ context.Context, in struct {
		To     string  `json:"to"`
		Amount float64 `json:"amount"`
	}) (string, error) {
		return fmt.Sprintf("paid %.2f EUR to %s", in.Amount, in.To), nil
	})
	if err != nil {
		return err
	}
	acts := &temporal.Activities{
		Model: &openai.Model{BaseURL: env("MODEL_URL", "http://127.0.0.1:8080/v1"), Model: os.Getenv("MODEL_NAME")},
		Funcs: []*agent.Func{pay},
	}
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
		Messages: []agent.Message{{Role: agent.RoleUser, Content: question}},
		Config:   temporal.Config{ServerModes: map[string]permission.Mode{agent.FuncServer: permission.ModeAsk}},
	}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, temporal.WorkflowName, in)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "started %s\n", run.GetID())
	return nil
}

// pending prints the calls of run id that wait for approval.
func pending(ctx context.Context, c client.Client, id string, out io.Writer) ([]agent.PendingCall, error) {
	v, err := c.QueryWorkflow(ctx, id, "", temporal.ProgressQuery)
	if err != nil {
		return nil, err
	}
	var p temporal.Progress
	if err := v.Get(&p); err != nil {
		return nil, err
	}
	for _, pc := range p.Pending {
		fmt.Fprintf(out, "pending %s: %s %s\n", pc.ID, pc.Call.Name, pc.Request.ArgumentsText(200))
	}
	if len(p.Pending) == 0 {
		fmt.Fprintln(out, "no call waits for approval")
	}
	return p.Pending, nil
}

// approve decides every pending call of run id, then prints its answer.
func approve(ctx context.Context, c client.Client, id string, yes bool, out io.Writer) error {
	calls, err := pending(ctx, c, id, out)
	if err != nil {
		return err
	}
	d := permission.Decision{Verdict: permission.AllowOnce}
	if !yes {
		d = permission.Decision{Verdict: permission.Deny, Reason: "the user said no"}
	}
	decisions := map[string]permission.Decision{}
	for _, pc := range calls {
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

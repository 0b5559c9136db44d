package temporal_test

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/openai"
	"git.rickub.com/bots-garden/mini-me/agent/temporal"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// A worker serves the runs of a task queue with the host's model and
// tools; any process starts a run, and answers its approvals later.
func Example() {
	ctx := context.Background()
	c, err := client.Dial(client.Options{HostPort: "127.0.0.1:7233"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	// The worker: one per process. Tools would be an *toolset.Toolset.
	acts := &temporal.Activities{Model: &openai.Model{BaseURL: "http://127.0.0.1:8080/v1"}}
	w := worker.New(c, "agents", worker.Options{})
	acts.Register(w)
	if err := w.Start(); err != nil {
		fmt.Println(err)
		return
	}
	defer w.Stop()

	// A run: every call of an "ask" server waits for the decide update.
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: "agents"}, temporal.WorkflowName, temporal.Input{
		Messages: []agent.Message{agent.UserMessage("Summarise my open issues.")},
		Config:   temporal.Config{Mode: permission.ModeAsk},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	v, err := c.QueryWorkflow(ctx, run.GetID(), run.GetRunID(), temporal.ProgressQuery)
	if err != nil {
		fmt.Println(err)
		return
	}
	var p temporal.Progress
	_ = v.Get(&p)
	decisions := map[string]permission.Decision{}
	for _, pc := range p.Pending {
		decisions[pc.ID] = permission.Decision{Verdict: permission.AllowOnce}
	}
	if len(decisions) > 0 {
		_, err = c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: run.GetID(), RunID: run.GetRunID(),
			UpdateName: temporal.DecideUpdate, Args: []any{decisions}, WaitForStage: client.WorkflowUpdateStageCompleted})
	}
	var out temporal.Output
	if err == nil {
		err = run.Get(ctx, &out)
	}
	fmt.Println(out.Result.Answer, err)
}

package temporal_test

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/temporal"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// BenchmarkRun measures a run of two turns (a Func call, then the
// answer) in one process and on Temporal (a worker in this process, the
// devserver in another), with the same model and Func: the difference,
// per turn, is what durability costs.
func BenchmarkRun(b *testing.B) {
	s := script{Turns: [][]scriptCall{{call("echo", `{"text":"x"}`)}}}
	ctx := context.Background()
	b.Run("in-process", func(b *testing.B) {
		a := &agent.Agent{Model: scriptModel{}, Funcs: []*agent.Func{echoFunc()}, Policy: permission.NewPolicy(permission.AllowAll{})}
		for b.Loop() {
			res, err := a.Run(ctx, userScript(s))
			if err != nil || res.Stop != agent.StopAnswer {
				b.Fatal(res.Stop, err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/2, "ns/turn")
	})
	b.Run("temporal", func(b *testing.B) {
		c := dial(b)
		q := "bench-" + b.Name()
		w := worker.New(c, q, worker.Options{DeadlockDetectionTimeout: 20 * time.Second})
		(&temporal.Activities{Model: scriptModel{}, Funcs: []*agent.Func{echoFunc()}}).Register(w)
		if err := w.Start(); err != nil {
			b.Fatal(err)
		}
		defer w.Stop()
		in := temporal.Input{Messages: userScript(s), Config: temporal.Config{Mode: permission.ModeAuto}}
		for b.Loop() {
			run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: q}, temporal.WorkflowName, in)
			if err != nil {
				b.Fatal(err)
			}
			var out temporal.Output
			if err := run.Get(ctx, &out); err != nil || out.Result.Stop != agent.StopAnswer {
				b.Fatal(out.Result.Stop, out.Error, err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/2, "ns/turn")
	})
}

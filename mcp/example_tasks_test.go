package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

// With tasks on, a tool that can only run as a task is offered, and a
// call of it polls the task until it ends; the observer of the call's
// context sees each step, the first with the task's id.
func ExampleWithTaskObserver() {
	srv := &mcptest.Server{Versions: []string{mcptest.Legacy}, Tasks: &mcptest.Tasks{PollInterval: 1}, Tools: []mcptest.Tool{{
		Def: json.RawMessage(`{"name":"export","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}`),
		Task: func(context.Context, json.RawMessage, *mcptest.TaskRun) (any, error) {
			return map[string]any{"content": []any{map[string]any{"type": "text", "text": "exported 1,204 rows"}}}, nil
		},
	}}}
	url := srv.Start()
	defer srv.Close()

	ctx := context.Background()
	ts, err := toolset.Discover(ctx, []config.Server{{Name: "db", URL: url}},
		&toolset.Options{Client: mcp.Options{Tasks: mcp.TasksWhenRequired}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ts.Shutdown(ctx)

	tool, _ := ts.Tool("db_export")
	fmt.Println("db_export runs as a task:", tool.Task)
	first := make(chan mcp.TaskStatus, 1)
	observed := mcp.WithTaskObserver(ctx, func(s mcp.TaskStatus) {
		select {
		case first <- s: // keep the first; a host would show each
		default:
		}
	})
	res, err := ts.Call(observed, "db_export", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text())
	s := <-first
	fmt.Printf("first step: %s on %s, task id given: %v\n", s.Status, s.Server, s.TaskID != "")
	// Output:
	// db_export runs as a task: always
	// exported 1,204 rows
	// first step: working on db, task id given: true
}

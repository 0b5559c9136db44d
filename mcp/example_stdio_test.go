package mcp_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"git.rickub.com/bots-garden/mini-me/mcp"
)

// A desktop finance app serving its data over stdio when started with
// --mcp. It keeps a selected profile for the life of its process, so a
// restart is announced to the user.
func ExampleCommandTransport() {
	ctx := context.Background()
	t := &mcp.CommandTransport{
		Name:    "finance",
		Command: "simpl-resultat",
		Args:    []string{"--mcp"},
		Env:     map[string]string{"LEDGER": "${HOME}/ledger.db"}, // expanded from the host
		Restart: mcp.RestartPolicy{MaxRestarts: 2, OnRestart: func(attempt int, cause error) {
			log.Printf("finance restarted (%d) after %v: select a profile again", attempt, cause)
		}},
	}
	c, err := mcp.Connect(ctx, t, nil)
	var exit *mcp.ExitError
	if errors.As(err, &exit) {
		log.Fatalf("finance exited (%s); its last words:\n%s", exit.State, exit.Stderr)
	}
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	res, err := c.CallTool(ctx, "select_profile", map[string]string{"profile": "perso"})
	if err != nil {
		log.Fatal(err)
	}
	if res.IsError {
		// A refusal such as {"code":"profile_not_allowed",...}: for the
		// model to read and correct itself.
		fmt.Println("refused:", res.Text())
	}
}

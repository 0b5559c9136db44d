package permission_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"git.rickub.com/bots-garden/mini-me/permission"
)

// A host plugs in its own approval UI by implementing Approver. This one lets
// tools that declare themselves read-only through, and sends every other
// question to the goroutine that owns the UI, over a channel. The Policy
// remembers the UI's "always" answers, so the UI is not asked twice.
func Example_customApprover() {
	type question struct {
		req    permission.Request
		answer chan permission.Decision
	}
	questions := make(chan question)

	approver := permission.ApproverFunc(func(ctx context.Context, req permission.Request) (permission.Decision, error) {
		if req.Annotations.ReadOnly() {
			return permission.Decision{Verdict: permission.AllowOnce}, nil
		}
		q := question{req: req, answer: make(chan permission.Decision, 1)}
		select {
		case questions <- q:
		case <-ctx.Done():
			return permission.Decision{}, ctx.Err()
		}
		select {
		case d := <-q.answer:
			return d, nil
		case <-ctx.Done():
			return permission.Decision{}, ctx.Err()
		}
	})

	// The UI: here a stand-in that refuses pushes to main and allows the
	// rest for the session.
	uiDone := make(chan struct{})
	go func() {
		defer close(uiDone)
		for q := range questions {
			fmt.Printf("UI asks: call %s with %s?\n", q.req.PrefixedName, q.req.Arguments)
			if strings.Contains(string(q.req.Arguments), `"main"`) {
				q.answer <- permission.Decision{Verdict: permission.Deny, Reason: "never push to main; open a pull request"}
			} else {
				q.answer <- permission.Decision{Verdict: permission.AllowTool}
			}
		}
	}()

	readOnly := true
	policy := permission.NewPolicy(approver)
	for _, req := range []permission.Request{
		{Server: "git", Tool: "log", PrefixedName: "git_log", Annotations: permission.Annotations{ReadOnlyHint: &readOnly}},
		{Server: "git", Tool: "push", PrefixedName: "git_push", Arguments: json.RawMessage(`{"branch":"main"}`)},
		{Server: "git", Tool: "push", PrefixedName: "git_push", Arguments: json.RawMessage(`{"branch":"fix-42"}`)},
		{Server: "git", Tool: "push", PrefixedName: "git_push", Arguments: json.RawMessage(`{"branch":"fix-43"}`)},
	} {
		d, err := policy.Check(context.Background(), req)
		switch {
		case err != nil:
			fmt.Println("no answer:", err)
		case d.Allowed():
			fmt.Printf("%s runs (%s)\n", req.PrefixedName, d.Verdict)
		default:
			fmt.Println(d.DenialMessage(req.PrefixedName))
		}
	}
	close(questions)
	<-uiDone

	// Output:
	// git_log runs (allow once)
	// UI asks: call git_push with {"branch":"main"}?
	// Permission denied: the call to tool "git_push" was not run. Reason: never push to main; open a pull request
	// Do not retry this call unless the user asks you to.
	// UI asks: call git_push with {"branch":"fix-42"}?
	// git_push runs (allow tool)
	// git_push runs (allow tool)
}

// The terminal approver, reading answers from standard input in a real
// program. Here the answers come from a string: a typo, then "a" (always this
// tool), so the second call is not asked. (The answers do not appear in the
// output: a terminal would echo them.)
func ExampleTerminal() {
	answers := strings.NewReader("yep\na\n")
	policy := permission.NewPolicy(permission.NewTerminal(answers, os.Stdout))

	no := false
	req := permission.Request{
		Server:       "github",
		Tool:         "create_issue",
		PrefixedName: "github_create_issue",
		Title:        "Create issue",
		Arguments:    json.RawMessage(`{"repo":"octo/hello","title":"Crash on start"}`),
		Annotations:  permission.Annotations{DestructiveHint: &no},
	}
	for range 2 {
		d, err := policy.Check(context.Background(), req)
		fmt.Println("decision:", d, err)
	}

	// Output:
	// Tool call awaiting your approval
	//   server:      github
	//   tool:        create_issue (github_create_issue)
	//   title:       Create issue
	//   hints:       writes*, additive only, not idempotent*, open world*  (* not declared by the server: MCP default)
	//   arguments:
	//     {
	//       "repo": "octo/hello",
	//       "title": "Crash on start"
	//     }
	// Allow? y: once | n: no (n <reason>: tell the model why) | a: always this tool | s: always every tool of github
	// > Please answer y, n, a or s.
	// > decision: allow tool <nil>
	// decision: allow tool <nil>
}

// NewPolicy with the settings of a configuration file such as:
//
//	mcp:
//	  permissions: ask
//	  servers:
//	    - name: docs
//	      permissions: auto
//	    - name: files
//	      permissions: auto          # confirmDestructive defaults to true
//
// and an audit function that logs every decision.
func ExampleNewPolicy() {
	global, err := permission.ParseMode("ask")
	if err != nil {
		fmt.Println(err)
		return
	}
	policy := permission.NewPolicy(
		permission.DenyAll{Reason: "nobody is here to approve it"},
		permission.WithMode(global),
		permission.WithServerMode("docs", permission.ModeAuto),
		permission.WithServerMode("files", permission.ModeAuto),
		permission.WithAudit(func(e permission.Event) {
			fmt.Printf("audit: %s mode=%s source=%s verdict=%s\n", e.PrefixedName, e.Mode, e.Source, e.Verdict)
		}),
	)

	destructive := true
	for _, req := range []permission.Request{
		{Server: "docs", Tool: "search", PrefixedName: "docs_search"},
		{Server: "files", Tool: "delete", PrefixedName: "files_delete", Annotations: permission.Annotations{DestructiveHint: &destructive}},
		{Server: "github", Tool: "create_issue", PrefixedName: "github_create_issue"},
	} {
		if _, err := policy.Check(context.Background(), req); err != nil {
			fmt.Println(err)
		}
	}

	// Output:
	// audit: docs_search mode=auto source=auto verdict=allow once
	// audit: files_delete mode=auto source=asked verdict=deny
	// audit: github_create_issue mode=ask source=asked verdict=deny
}

func ExampleDecision_DenialMessage() {
	d := permission.Decision{Verdict: permission.Deny, Reason: "use the staging database"}
	if !d.Allowed() {
		fmt.Println(d.DenialMessage("db_drop_table"))
	}
	// Output:
	// Permission denied: the call to tool "db_drop_table" was not run. Reason: use the staging database
	// Do not retry this call unless the user asks you to.
}

func ExampleRequest_ArgumentsText() {
	req := permission.Request{Arguments: json.RawMessage(`{"path":"/tmp/notes.txt","content":"` + strings.Repeat("la ", 40) + `"}`)}
	fmt.Println(req.ArgumentsText(100))
	// Output:
	// {
	//   "path": "/tmp/notes.txt",
	//   "content": "la la la la la la la la la la la l … [87 more bytes]
	// }
}

// A host that reads its user's messages from the same input as the
// approval questions shares it through Lines: each line goes to whoever
// asks next, and a question withdrawn by Ctrl-C loses no line.
func ExampleNewSharedTerminal() {
	lines := permission.NewLines(strings.NewReader("list my accounts\ny\n")) // os.Stdin in a real host
	defer lines.Close()
	term := permission.NewSharedTerminal(lines, io.Discard) // os.Stdout in a real host

	msg, _ := lines.Next(context.Background())
	fmt.Println("user:", msg)
	d, _ := term.Approve(context.Background(), permission.Request{Server: "finance", Tool: "list_accounts"})
	fmt.Println("approval:", d.Verdict)
	// Output:
	// user: list my accounts
	// approval: allow once
}

package toolset_test

import (
	"context"
	"encoding/json"
	"fmt"

	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

// A server's prompts are the host's commands: the Toolset lists them under
// prefixed names, as it does tools, and renders one on its server.
func ExampleToolset_GetPrompt() {
	srv := &mcptest.Server{Versions: []string{mcptest.Modern}, Catalog: &mcptest.Catalog{Prompts: []mcptest.Prompt{{
		Def:      json.RawMessage(`{"name":"monthly_report","description":"Report on a month's spending.","arguments":[{"name":"month","required":true}]}`),
		Messages: json.RawMessage(`[{"role":"user","content":{"type":"text","text":"Report on my spending in {month}, by category."}}]`),
	}}}}
	url := srv.Start()
	defer srv.Close()

	ctx := context.Background()
	ts, err := toolset.Discover(ctx, []config.Server{{Name: "finance", URL: url}}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ts.Shutdown(ctx)

	for _, p := range ts.Prompts() {
		fmt.Printf("/%s: %s\n", p.Name, p.Prompt.Description)
	}
	res, err := ts.GetPrompt(ctx, "finance_monthly_report", map[string]string{"month": "March"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range res.Result.Messages {
		fmt.Printf("%s: %s\n", m.Role, m.Text())
	}
	// Output:
	// /finance_monthly_report: Report on a month's spending.
	// user: Report on my spending in March, by category.
}

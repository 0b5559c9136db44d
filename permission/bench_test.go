package permission_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"git.rickub.com/bots-garden/mini-me/permission"
)

// benchRequest is a realistic call: a 1.4 KB input schema, as GitHub's
// create_issue has, and small arguments.
func benchRequest(b *testing.B) permission.Request {
	schema, err := os.ReadFile(filepath.Join("testdata", "create_issue.schema.json"))
	if err != nil {
		b.Fatal(err)
	}
	return permission.Request{
		Server: "github", Tool: "create_issue", PrefixedName: "github_create_issue",
		Title: "Create issue", Description: "Create a new issue in a GitHub repository.",
		InputSchema: schema,
		Arguments:   json.RawMessage(`{"owner":"octo","repo":"hello","title":"Crash on start"}`),
		Annotations: permission.Annotations{ReadOnlyHint: new(bool)},
	}
}

// BenchmarkCheck measures the Policy's cost per tool call when it asks no
// one. The baseline is one decoding of the tool's input schema into a Go
// value, work of the same kind the agent does anyway before each call (to
// validate the arguments).
func BenchmarkCheck(b *testing.B) {
	req := benchRequest(b)
	ctx := context.Background()

	b.Run("baseline=unmarshal-schema", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			var v any
			if err := json.Unmarshal(req.InputSchema, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("remembered", func(b *testing.B) {
		p := permission.NewPolicy(permission.ApproverFunc(func(context.Context, permission.Request) (permission.Decision, error) {
			return permission.Decision{Verdict: permission.AllowTool}, nil
		}))
		if _, err := p.Check(ctx, req); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if d, _ := p.Check(ctx, req); d.Verdict != permission.AllowTool {
				b.Fatal(d)
			}
		}
	})
	b.Run("auto", func(b *testing.B) {
		p := permission.NewPolicy(nil, permission.WithMode(permission.ModeAuto))
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if d, _ := p.Check(ctx, req); !d.Allowed() {
				b.Fatal(d)
			}
		}
	})
	b.Run("allow-all", func(b *testing.B) {
		p := permission.NewPolicy(permission.AllowAll{})
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if d, _ := p.Check(ctx, req); !d.Allowed() {
				b.Fatal(d)
			}
		}
	})
}

package agent

import (
	"encoding/json"
	"fmt"
	"testing"
)

// BenchmarkToolSearch ranks a 10,000-tool catalogue for one query: "warm"
// with the index the Agent keeps from earlier searches, "cold" with a new
// one, which reads every tool first.
//
//	go test -run '^$' -bench ToolSearch -benchmem ./agent
func BenchmarkToolSearch(b *testing.B) {
	verbs := []string{"create", "list", "delete", "update", "search", "export", "import", "archive", "merge", "render"}
	nouns := []string{"issue", "file", "page", "record", "invoice", "ticket", "branch", "calendar event", "contact", "report"}
	schema := compileSchema(json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"},"text":{"type":"string"}},"required":["id"]}`))
	docs := make([]*tool, 10_000)
	for i := range docs {
		v, o := verbs[i%len(verbs)], nouns[(i/len(verbs))%len(nouns)]
		docs[i] = &tool{name: fmt.Sprintf("svc%02d_%s_%s_%d", i/500, v, o, i), schema: schema,
			description: fmt.Sprintf("%s a %s of the svc%02d service, by id (tool %d).", v, o, i/500, i)}
	}
	b.Run("warm", func(b *testing.B) {
		var x searchIndex
		x.rankTools(docs, "export invoice", 5)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if got := x.rankTools(docs, "export invoice", 5); len(got) != 5 {
				b.Fatalf("%d tools found", len(got))
			}
		}
	})
	b.Run("cold", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var x searchIndex
			if got := x.rankTools(docs, "export invoice", 5); len(got) != 5 {
				b.Fatalf("%d tools found", len(got))
			}
		}
	})
}

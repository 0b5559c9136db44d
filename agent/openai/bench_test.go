package openai_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"git.rickub.com/bots-garden/mini-me/agent/openai"
)

// BenchmarkOpenAIStream decodes a streamed turn with two tool calls.
func BenchmarkOpenAIStream(b *testing.B) {
	body, err := os.ReadFile(filepath.Join("testdata", "openai_tool_calls.sse"))
	if err != nil {
		b.Fatal(err)
	}
	m := &openai.Model{BaseURL: "http://model.test/v1", HTTPClient: &http.Client{Transport: bodyTransport{"text/event-stream", body}}}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		reply, err := m.Chat(context.Background(), userHello, nil)
		if err != nil || len(reply.Message.ToolCalls()) != 2 {
			b.Fatal(err)
		}
	}
}

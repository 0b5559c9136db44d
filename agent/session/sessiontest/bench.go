package sessiontest

import (
	"context"
	"testing"

	"git.rickub.com/bots-garden/mini-me/agent/session"
)

// Bench measures a store on a conversation of LongSessionMessages
// messages: Append10k appends one message to it (each op one Append),
// Load10k loads it whole.
func Bench(b *testing.B, c Config) {
	b.Run("Append10k", func(b *testing.B) {
		s, _ := fresh(b, c)
		fillLong(b, s, "long", 100)
		batch := session.Batch{Messages: texts("one more message, a short answer of a long conversation ", 1)}
		ctx := context.Background()
		b.ResetTimer()
		for range b.N {
			if _, err := s.Append(ctx, "long", batch); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Load10k", func(b *testing.B) {
		s, _ := fresh(b, c)
		fillLong(b, s, "long", 100)
		ctx := context.Background()
		b.ResetTimer()
		for range b.N {
			got, err := s.Load(ctx, "long")
			if err != nil || len(got.Messages) != LongSessionMessages {
				b.Fatalf("Load: %v, %v messages", err, len(got.Messages))
			}
		}
	})
}

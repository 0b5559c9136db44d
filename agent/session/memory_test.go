package session_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"git.rickub.com/bots-garden/mini-me/agent/session"
	"git.rickub.com/bots-garden/mini-me/agent/session/sessiontest"
)

// memoryConfig opens Memory stores: one per address, in this process.
func memoryConfig() sessiontest.Config {
	var mu sync.Mutex
	stores := map[string]*session.Memory{}
	n := 0
	return sessiontest.Config{
		Open: func(_ context.Context, addr string) (session.Store, func() error, error) {
			mu.Lock()
			defer mu.Unlock()
			s, ok := stores[addr]
			if !ok {
				return nil, nil, fmt.Errorf("no memory database %q", addr)
			}
			return s, func() error { return nil }, nil
		},
		NewDatabase: func(testing.TB) string {
			mu.Lock()
			defer mu.Unlock()
			n++
			addr := fmt.Sprint("memory-", n)
			stores[addr] = &session.Memory{}
			return addr
		},
	}
}

func TestMemory(t *testing.T) { sessiontest.Run(t, memoryConfig()) }

func BenchmarkMemory(b *testing.B) { sessiontest.Bench(b, memoryConfig()) }

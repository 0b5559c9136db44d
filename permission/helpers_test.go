package permission_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"git.rickub.com/bots-garden/mini-me/internal/termtest"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// waitTimeout bounds every wait in these tests; passing runs never reach it.
const waitTimeout = 5 * time.Second

func ptr(b bool) *bool { return &b }

// tool returns a request for a tool with a plain definition and no hints.
func tool(server, name string) permission.Request {
	return permission.Request{
		Server:       server,
		Tool:         name,
		PrefixedName: server + "_" + name,
		Description:  "Does " + name + ".",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`),
		Arguments:    json.RawMessage(`{"q":"x"}`),
	}
}

// screen is a terminal's output: tests wait on it for the questions a
// Terminal writes.
type screen struct{ termtest.Screen }

func newScreen() *screen { return &screen{} }

// waitFor waits until the output holds at least n occurrences of substr and
// returns it.
func (s *screen) waitFor(t *testing.T, n int, substr string) string {
	t.Helper()
	out, ok := s.WaitFor(n, substr, waitTimeout)
	if !ok {
		t.Fatalf("timed out waiting for %d× %q in output:\n%s", n, substr, out)
	}
	return out
}

// checkConcurrently starts n checks at once, of tools tool0 to
// tool{n-1} of server srv; wait returns their answers, in that order.
func checkConcurrently(p *permission.Policy, n int) (wait func() ([]permission.Decision, []error)) {
	var wg sync.WaitGroup
	results := make([]permission.Decision, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = p.Check(context.Background(), tool("srv", fmt.Sprintf("tool%d", i)))
		}()
	}
	return func() ([]permission.Decision, []error) {
		wg.Wait()
		return results, errs
	}
}

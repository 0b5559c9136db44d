package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/mcp"
)

// Bounds of the scenario. A slow machine (2 shared cores, -race, CI's
// other steps) stays well inside them; a hang fails instead of blocking
// the run. The slow calls run 10 s or more, so the bounds still tell a
// client that waits for the call's end from one that does not.
const (
	stepTimeout = 20 * time.Second
	// cancelReturn is how soon a cancelled call must return.
	cancelReturn = 5 * time.Second
	// progressLatency is how soon the first progress notification of the
	// slow call must reach the client. The servers send one every
	// scenario.slowStep (≤ 100 ms), so a client that holds notifications
	// back until the stream ends or a buffer fills misses it.
	progressLatency = 3 * time.Second
)

// scenario is what one server offers, and so what the shared interop
// scenario (run) expects of our client against it.
type scenario struct {
	serverName string
	// tools must all be listed, with these readOnlyHint values; exactTools
	// says nothing else may be listed.
	tools      map[string]bool
	exactTools bool
	calls      []toolCall
	// progress is a call that reports progressSteps steps. progressSteps
	// is 0 when the server cannot deliver progress to the client (JSON
	// responses): then only the result is checked.
	progress      toolCall
	progressSteps int
	// slow runs until cancelled, reporting progress every slowStep (when
	// progressSteps says progress reaches the client). slowStarted returns
	// once the server runs it (nil: the first progress notification says
	// so), and serverCancelled once the server saw the cancellation (nil
	// when the server does not let us see it).
	slow            toolCall
	slowStep        time.Duration
	slowStarted     func(context.Context) error
	serverCancelled func(context.Context) error
	prompt          promptCall
	resource        resourceRead
}

// toolCall is a call and what its result must hold.
type toolCall struct {
	name       string
	args       any
	want       string // a substring of the result's text
	structured string // the structured content, as JSON, if any
	isError    bool
	// rpcCode, when set, is the JSON-RPC error the call must fail with.
	rpcCode int
}

type promptCall struct {
	name string
	args map[string]string
	want string // a substring of the first message's text
}

type resourceRead struct {
	uri  string
	want string // a substring of the text
}

// waitProgress returns once log holds a progress notification about the
// named tool.
func waitProgress(ctx context.Context, log *feed[mcp.Progress], name string) error {
	_, err := log.waitFor(ctx, nil, func(p mcp.Progress) bool { return p.Name == name })
	if err != nil {
		return fmt.Errorf("no progress notification for %s: %w", name, err)
	}
	return nil
}

// options are the client options of every interop connection: progress
// goes to log.
func options(log *feed[mcp.Progress], pin string) *mcp.Options {
	return &mcp.Options{
		ClientInfo:      mcp.Implementation{Name: "mini-me-interop", Version: "0.0.0"},
		ProtocolVersion: pin,
		ConnectTimeout:  stepTimeout,
		OnProgress:      func(p mcp.Progress) { log.add(p) },
	}
}

func stepContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), stepTimeout)
}

// run drives a connected client through everything s offers, then closes
// it. Each step is a subtest, so one failure does not hide the others.
func run(t *testing.T, c *mcp.Client, log *feed[mcp.Progress], s scenario) {
	t.Run("server info", func(t *testing.T) {
		assert.Equal(t, s.serverName, c.ServerInfo().Name)
		assert.NotNil(t, c.Capabilities().Tools, "tools capability")
		assert.NotNil(t, c.Capabilities().Prompts, "prompts capability")
		assert.NotNil(t, c.Capabilities().Resources, "resources capability")
	})
	t.Run("tools/list", func(t *testing.T) { checkTools(t, c, s) })
	t.Run("tools/call", func(t *testing.T) {
		for _, call := range s.calls {
			t.Run(call.name, func(t *testing.T) { checkCall(t, c, call) })
		}
	})
	t.Run("progress", func(t *testing.T) {
		log.take()
		checkCall(t, c, s.progress)
		if s.progressSteps == 0 {
			return
		}
		// Progress reaches the callback off the reader, maybe after the
		// call returned: wait for the last step.
		ctx, cancel := stepContext()
		defer cancel()
		_, err := log.waitFor(ctx, nil, func(p mcp.Progress) bool {
			return p.Name == s.progress.name && p.Progress == float64(s.progressSteps)
		})
		require.NoError(t, err, "the last progress notification")
		events := log.take()
		require.Len(t, events, s.progressSteps, "progress notifications received: %+v", events)
		for i, e := range events {
			assert.Equal(t, mcp.Progress{Method: "tools/call", Name: s.progress.name, Progress: float64(i + 1), Total: float64(s.progressSteps)},
				mcp.Progress{Method: e.Method, Name: e.Name, Progress: e.Progress, Total: e.Total}, "event %d", i)
		}
	})
	t.Run("prompts", func(t *testing.T) {
		ctx, cancel := stepContext()
		defer cancel()
		prompts, err := c.ListPrompts(ctx)
		require.NoError(t, err)
		assert.Contains(t, promptNames(prompts), s.prompt.name)
		res, err := c.GetPrompt(ctx, s.prompt.name, s.prompt.args)
		require.NoError(t, err)
		require.NotEmpty(t, res.Messages)
		assert.Equal(t, "user", res.Messages[0].Role)
		assert.Equal(t, "text", res.Messages[0].Content.Type)
		assert.Contains(t, res.Messages[0].Content.Text, s.prompt.want)
	})
	t.Run("resources", func(t *testing.T) {
		ctx, cancel := stepContext()
		defer cancel()
		resources, err := c.ListResources(ctx)
		require.NoError(t, err)
		assert.Contains(t, resourceURIs(resources), s.resource.uri)
		res, err := c.ReadResource(ctx, s.resource.uri)
		require.NoError(t, err)
		require.Len(t, res.Contents, 1)
		assert.Equal(t, s.resource.uri, res.Contents[0].URI)
		assert.Contains(t, res.Contents[0].Text, s.resource.want)
	})
	t.Run("cancel", func(t *testing.T) { checkCancel(t, c, log, s) })
	t.Run("close", func(t *testing.T) {
		require.NoError(t, c.Close())
		require.NoError(t, c.Close(), "second Close")
		ctx, cancel := stepContext()
		defer cancel()
		_, err := c.CallTool(ctx, s.calls[0].name, s.calls[0].args)
		assert.ErrorIs(t, err, mcp.ErrClosed)
	})
}

func checkTools(t *testing.T, c *mcp.Client, s scenario) {
	ctx, cancel := stepContext()
	defer cancel()
	tools, err := c.ListTools(ctx)
	require.NoError(t, err)
	byName := make(map[string]mcp.Tool, len(tools))
	for _, tool := range tools {
		assert.NotContains(t, byName, tool.Name, "tool listed twice")
		byName[tool.Name] = tool
		var schema struct {
			Type string `json:"type"`
		}
		if assert.NoError(t, json.Unmarshal(tool.InputSchema, &schema), "tool %s: input schema", tool.Name) {
			assert.Equal(t, "object", schema.Type, "tool %s: input schema type", tool.Name)
		}
	}
	for name, readOnly := range s.tools {
		tool, ok := byName[name]
		if assert.True(t, ok, "tool %s not listed; got %v", name, sortedKeys(byName)) {
			assert.Equal(t, readOnly, tool.Annotations.ReadOnly(), "tool %s: readOnlyHint", name)
		}
	}
	if s.exactTools {
		assert.Equal(t, sortedKeys(s.tools), sortedKeys(byName))
	}
}

func checkCall(t *testing.T, c *mcp.Client, call toolCall) {
	ctx, cancel := stepContext()
	defer cancel()
	res, err := c.CallTool(ctx, call.name, call.args)
	if call.rpcCode != 0 {
		var rpc *mcp.RPCError
		require.ErrorAs(t, err, &rpc)
		assert.Equal(t, call.rpcCode, rpc.Code, "JSON-RPC error code")
		assert.Contains(t, rpc.Message, call.want)
		return
	}
	require.NoError(t, err)
	assert.Equal(t, call.isError, res.IsError, "isError; result text %q", res.Text())
	assert.Contains(t, res.Text(), call.want)
	if call.structured != "" {
		assert.JSONEq(t, call.structured, string(res.StructuredContent))
	}
}

// checkCancel runs the slow call and cancels it once it runs on the
// server. Progress must reach the client while the call runs, not when it
// ends; the call must return context.Canceled promptly; the server must see
// the cancellation where it lets us look; and the connection must keep
// working.
func checkCancel(t *testing.T, c *mcp.Client, log *feed[mcp.Progress], s scenario) {
	log.take() // progress of earlier calls must not count
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	began := time.Now()
	go func() {
		_, err := c.CallTool(ctx, s.slow.name, s.slow.args)
		errc <- err
	}()
	wait, wcancel := stepContext()
	defer wcancel()
	started := func() error {
		if s.slowStarted != nil {
			if err := s.slowStarted(wait); err != nil {
				return err
			}
			began = time.Now()
		}
		if s.progressSteps > 0 {
			if err := waitProgress(wait, log, s.slow.name); err != nil {
				return err
			}
			latency := time.Since(began)
			assert.Less(t, latency, progressLatency,
				"first progress notification of the slow call: the server sends one every %v, the client delivered the first after %v", s.slowStep, latency)
		}
		return nil
	}()
	if started != nil {
		cancel()
		<-errc
		t.Fatalf("the slow call did not start: %v", started)
	}
	cancelled := time.Now()
	cancel()
	select {
	case err := <-errc:
		assert.ErrorIs(t, err, context.Canceled)
		assert.Less(t, time.Since(cancelled), cancelReturn, "time for a cancelled call to return")
	case <-wait.Done():
		t.Fatalf("CallTool still running %v after its context was cancelled", stepTimeout)
	}
	if s.serverCancelled != nil {
		assert.NoError(t, s.serverCancelled(wait), "the server did not see the cancellation")
	}
	checkCall(t, c, s.calls[0])
}

func promptNames(ps []mcp.Prompt) []string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	return names
}

func resourceURIs(rs []mcp.Resource) []string {
	uris := make([]string, len(rs))
	for i, r := range rs {
		uris[i] = r.URI
	}
	return uris
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

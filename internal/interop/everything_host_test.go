//go:build unix

package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/openai"
	"git.rickub.com/bots-garden/mini-me/agent/openai/openaitest"
	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/internal/termtest"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// TestEverythingHostRequests answers server-everything's requests to the
// host, over stdio and Streamable HTTP: sampling with the agent's Sampler
// and a scripted model, form and URL elicitation with a permission.Terminal
// typed into through a pipe, the -32042 URL-elicitation-required error,
// and roots with their list_changed notification.
func TestEverythingHostRequests(t *testing.T) {
	t.Run("stdio", func(t *testing.T) {
		node, dir := everythingInstall(t)
		testHostRequests(t, &mcp.CommandTransport{Command: node, Args: []string{filepath.Join(dir, everythingMain), "stdio"}, Dir: dir})
	})
	t.Run("http", func(t *testing.T) {
		url, _ := startEverythingHTTP(t)
		testHostRequests(t, &mcp.HTTPTransport{URL: url})
	})
}

func testHostRequests(t *testing.T, tr mcp.Transport) {
	llm := &openaitest.Server{Turns: []openaitest.Turn{{Text: "Hello from the host model."}}}
	llmURL := llm.Start()
	t.Cleanup(llm.Close)
	var samplingAsked atomic.Int32
	sampler := &agent.Sampler{
		Model: &openai.Model{BaseURL: llmURL, Model: "tiny"}, ModelName: "tiny",
		Servers: []config.Server{{Name: "everything"}},
		Policy: permission.NewPolicy(permission.ApproverFunc(func(_ context.Context, req permission.Request) (permission.Decision, error) {
			samplingAsked.Add(1)
			return permission.Decision{Verdict: permission.AllowOnce}, nil
		})),
	}
	in, w := io.Pipe()
	t.Cleanup(func() { w.Close() })
	scr := &termtest.Screen{}
	term := permission.NewTerminal(in, scr)
	rootsAsked := make(chan struct{}, 8)
	ctx, cancel := stepContext()
	defer cancel()
	c, err := mcp.Connect(ctx, tr, &mcp.Options{
		ClientInfo: mcp.Implementation{Name: "mini-me-interop", Version: "0.0.0"}, ConnectTimeout: stepTimeout,
		ServerName: "everything",
		Sample:     sampler.Sample,
		Elicit:     (&agent.Elicitor{Ask: term.Elicit}).Elicit, ElicitURL: true,
		// server-everything sends no elicitation/complete: the retry
		// after its -32042 comes once this wait is over.
		ElicitCompleteWait: 200 * time.Millisecond,
		Roots: func(context.Context) ([]mcp.Root, error) {
			rootsAsked <- struct{}{}
			return []mcp.Root{{URI: "file:///tmp/mini-me-work", Name: "work"}}, nil
		},
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	tools, err := c.ListTools(ctx)
	require.NoError(t, err)
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"trigger-sampling-request", "trigger-elicitation-request", "trigger-url-elicitation", "get-roots-list"} {
		assert.Contains(t, names, want, "offered only to a client that declares the capability")
	}

	t.Run("sampling", func(t *testing.T) {
		text := callText(t, c, "trigger-sampling-request", map[string]any{"prompt": "greet me", "maxTokens": 20})
		assert.Contains(t, text, "Hello from the host model.")
		assert.Contains(t, text, `"model": "tiny"`)
		assert.Equal(t, int32(1), samplingAsked.Load())
		reqs := llm.Requests()
		require.Len(t, reqs, 1)
		var body struct {
			MaxTokens int `json:"max_tokens"`
		}
		require.NoError(t, json.Unmarshal(reqs[0].Body, &body))
		assert.Equal(t, 20, body.MaxTokens)
		assert.Equal(t, "You are a helpful test server.", reqs[0].Messages[0].Content)
		assert.Contains(t, reqs[0].Messages[1].Content, "greet me")
	})

	t.Run("form elicitation on the terminal", func(t *testing.T) {
		done := typeAnswers(t, w, scr,
			"y",            // fill in the form
			"Ada Lovelace", // name
			"maybe", "y",   // check: not a boolean, then yes
			"",                         // firstLine: its default
			"ada@example.com",          // email
			"https://ada.example/",     // homepage
			"10/12/1815", "1815-12-10", // birthdate: not a date, then one
			"",         // integer: default 42
			"1001", "", // number: out of range, then the default
			"3",   // untitledSingleSelectEnum: Joey
			"1,2", // untitledMultipleSelectEnum: Guitar, Piano
			"3",   // titledSingleSelectEnum: Wonder Woman
			"",    // titledMultipleSelectEnum: its default
			"2",   // legacyTitledEnum: Dogs
			"y")   // send
		text := callText(t, c, "trigger-elicitation-request", nil)
		<-done
		for _, want := range []string{"- Name: Ada Lovelace", "- Agreed to terms: true", "- Email: ada@example.com",
			"- Birthdate: 1815-12-10", "- Favorite Integer: 42", "- Favorite Number: 3.14", `"untitledSingleSelectEnum": "Joey"`,
			`"titledSingleSelectEnum": "hero-3"`, `"legacyTitledEnum": "pet-2"`, `"firstLine": "It was a dark and stormy night."`} {
			assert.Contains(t, text, want)
		}
		assert.Contains(t, scr.String(), "Server everything asks you for information")
		assert.Contains(t, scr.String(), "3) Wonder Woman")
	})

	t.Run("url elicitation", func(t *testing.T) {
		done := typeAnswers(t, w, scr, "o")
		text := callText(t, c, "trigger-url-elicitation", map[string]any{"url": "https://login.example.com/start", "message": "Sign in, please"})
		<-done
		assert.Contains(t, text, "User completed the URL elicitation flow")
		assert.Contains(t, scr.String(), "site:    LOGIN.EXAMPLE.COM")
	})

	t.Run("url elicitation required (-32042), then retried", func(t *testing.T) {
		done := typeAnswers(t, w, scr, "o", "n")
		text := callText(t, c, "trigger-url-elicitation", map[string]any{"url": "https://login.example.com/second", "errorPath": true})
		<-done
		// The prerequisite was shown, then the retry ran the tool, whose
		// own URL the user declined.
		assert.Contains(t, scr.String(), "site:    MODELCONTEXTPROTOCOL.IO")
		assert.Contains(t, text, "User declined to open the URL")
	})

	t.Run("roots", func(t *testing.T) {
		text := callText(t, c, "get-roots-list", nil)
		assert.Contains(t, text, "file:///tmp/mini-me-work")
		for len(rootsAsked) > 0 {
			<-rootsAsked
		}
		require.NoError(t, c.NotifyRootsChanged(ctx))
		select {
		case <-rootsAsked: // the server asked again
		case <-ctx.Done():
			t.Fatal("the server did not ask for the roots again after list_changed")
		}
	})
}

// callText calls a tool that must succeed and returns its text.
func callText(t *testing.T, c *mcp.Client, tool string, args any) string {
	t.Helper()
	ctx, cancel := stepContext()
	defer cancel()
	res, err := c.CallTool(ctx, tool, args)
	require.NoError(t, err, tool)
	require.False(t, res.IsError, "%s: %s", tool, res.Text())
	return res.Text()
}

// typeAnswers types each line once the terminal shows one more prompt
// ("> ") than before; the channel closes when all are typed.
func typeAnswers(t *testing.T, w io.Writer, scr *termtest.Screen, lines ...string) <-chan struct{} {
	done := make(chan struct{})
	base := strings.Count(scr.String(), "> ")
	go func() {
		defer close(done)
		for i, line := range lines {
			if _, ok := scr.WaitFor(base+i+1, "> ", stepTimeout); !ok {
				t.Errorf("no prompt for answer %d (%q); screen:\n%s", i, line, scr.String())
				return
			}
			if _, err := fmt.Fprintln(w, line); err != nil {
				t.Errorf("typing %q: %v", line, err)
				return
			}
		}
	}()
	return done
}

// usageModel records the usage of each reply of its OpenAI model, and is
// local as it is.
type usageModel struct {
	*openai.Model
	mu     sync.Mutex
	tokens []int
}

func (m *usageModel) Chat(ctx context.Context, req *agent.ChatRequest, onDelta func(agent.Delta)) (*agent.Reply, error) {
	r, err := m.Model.Chat(ctx, req, onDelta)
	if err == nil {
		m.mu.Lock()
		m.tokens = append(m.tokens, r.Usage.CompletionTokens)
		m.mu.Unlock()
	}
	return r, err
}

// TestEverythingSamplingWithLlamaCpp answers server-everything's sampling
// request with the real llama-server and its tiny model: the completion
// reaches the server, within the token limit the server asked for.
func TestEverythingSamplingWithLlamaCpp(t *testing.T) {
	node, dir := everythingInstall(t)
	base := startLlama(t, nil)
	model := &usageModel{Model: &openai.Model{BaseURL: base, Model: "tiny", MaxTokens: 48}}
	sampler := &agent.Sampler{Model: model, ModelName: "tiny", Servers: []config.Server{{Name: "everything", Egress: config.EgressLocal}},
		Policy: permission.NewPolicy(permission.AllowAll{})}
	ctx := llamaCtx(t)
	c, err := mcp.Connect(ctx, &mcp.CommandTransport{Command: node, Args: []string{filepath.Join(dir, everythingMain), "stdio"}, Dir: dir},
		&mcp.Options{ServerName: "everything", CallTimeout: llamaTimeout, Sample: func(ctx context.Context, req *mcp.SampleRequest) (*mcp.SampleResult, error) {
			res, err := sampler.Sample(ctx, req)
			if err != nil {
				t.Logf("sampling failed: %v", err)
			}
			return res, err
		}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	res, err := c.CallTool(ctx, "trigger-sampling-request", map[string]any{"prompt": "Say hello.", "maxTokens": 8})
	require.NoError(t, err)
	require.False(t, res.IsError, res.Text())
	var got struct {
		Content struct {
			Text string `json:"text"`
		} `json:"content"`
		Model string `json:"model"`
	}
	text := res.Text()
	require.NoError(t, json.Unmarshal([]byte(text[strings.Index(text, "{"):]), &got), text)
	assert.Equal(t, "tiny", got.Model)
	// The tiny model's answer may be empty (it is random, and short on some
	// CPUs): the server's own validation of the completion (IsError above)
	// and the token count below are what this test rests on.
	model.mu.Lock()
	defer model.mu.Unlock()
	require.Len(t, model.tokens, 1)
	t.Logf("the model answered %q in %d tokens", got.Content.Text, model.tokens[0])
	assert.LessOrEqual(t, model.tokens[0], 8, "the server's maxTokens, below the model's own 48")
	assert.Positive(t, model.tokens[0])
}

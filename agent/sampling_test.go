package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/openai/openaitest"
	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// countingApprover answers every question with d, counting them.
func countingApprover(n *atomic.Int32, d func(permission.Request) permission.Decision) permission.Approver {
	return permission.ApproverFunc(func(_ context.Context, req permission.Request) (permission.Decision, error) {
		n.Add(1)
		return d(req), nil
	})
}

func sampleRequest(server string) *mcp.SampleRequest {
	return &mcp.SampleRequest{Server: server, SystemPrompt: "You are a test server.", MaxTokens: 5000,
		Messages: []mcp.SamplingMessage{{Role: "user", Content: mcp.SamplingContents{{Type: "text", Text: "Say hi"}}}}}
}

func maxTokensOf(t *testing.T, r openaitest.Request) int {
	t.Helper()
	var body struct {
		MaxTokens int `json:"max_tokens"`
	}
	require.NoError(t, json.Unmarshal(r.Body, &body))
	return body.MaxTokens
}

func TestSamplerAnswers(t *testing.T) {
	llm, model := startLLM(t, openaitest.Turn{Text: "hi"})
	var asked atomic.Int32
	var question permission.Request
	s := &agent.Sampler{Model: model, ModelName: "tiny", MaxTokens: 64, Servers: []config.Server{{Name: "docs"}},
		Policy: permission.NewPolicy(countingApprover(&asked, func(r permission.Request) permission.Decision {
			question = r
			return permission.Decision{Verdict: permission.AllowOnce}
		}))}
	res, err := s.Sample(context.Background(), sampleRequest("docs"))
	require.NoError(t, err)
	assert.Equal(t, &mcp.SampleResult{Role: "assistant", Content: mcp.SamplingContents{{Type: "text", Text: "hi"}}, Model: "tiny", StopReason: "endTurn"}, res)
	assert.Equal(t, int32(1), asked.Load())
	require.NotNil(t, question.Sampling)
	assert.Equal(t, "docs", question.Server)
	assert.Equal(t, 64, question.Sampling.MaxTokens, "capped before asking")
	assert.Equal(t, []permission.SamplingMessage{{Role: "user", Text: "Say hi"}}, question.Sampling.Messages)
	reqs := llm.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, 64, maxTokensOf(t, reqs[0]))
	require.Len(t, reqs[0].Messages, 2)
	assert.Equal(t, openaitest.Message{Role: "system", Content: "You are a test server."}, reqs[0].Messages[0])
	assert.Equal(t, openaitest.Message{Role: "user", Content: "Say hi"}, reqs[0].Messages[1])
	assert.Empty(t, reqs[0].Tools)
}

func TestSamplerRefuses(t *testing.T) {
	allow := func(permission.Request) permission.Decision {
		return permission.Decision{Verdict: permission.AllowOnce}
	}
	for _, tc := range []struct {
		name    string
		servers []config.Server
		local   bool
		decide  func(permission.Request) permission.Decision
		asked   int32
		reason  string
	}{
		{"denied", []config.Server{{Name: "docs"}}, true, func(permission.Request) permission.Decision {
			return permission.Decision{Verdict: permission.Deny, Reason: "not now"}
		}, 1, "not now"},
		{"unknown server", []config.Server{{Name: "other"}}, true, allow, 0, "not one the host answers"},
		{"local-only server, hosted model", []config.Server{{Name: "docs", Egress: config.EgressLocal}}, false, allow, 0, "local-only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			llm, model := startLLM(t, openaitest.Turn{Text: "hi"})
			var m agent.Model = model
			if !tc.local {
				m = remote{model}
			}
			var asked atomic.Int32
			s := &agent.Sampler{Model: m, Servers: tc.servers, Policy: permission.NewPolicy(countingApprover(&asked, tc.decide))}
			_, err := s.Sample(context.Background(), sampleRequest("docs"))
			require.ErrorIs(t, err, mcp.ErrRefused)
			assert.Contains(t, err.Error(), tc.reason)
			assert.Equal(t, tc.asked, asked.Load())
			assert.Empty(t, llm.Requests(), "the model saw nothing")
		})
	}
	t.Run("local-only server, local model", func(t *testing.T) {
		_, model := startLLM(t, openaitest.Turn{Text: "hi"})
		s := &agent.Sampler{Model: model, Servers: []config.Server{{Name: "docs", Egress: config.EgressLocal}}, Policy: permission.NewPolicy(permission.AllowAll{})}
		_, err := s.Sample(context.Background(), sampleRequest("docs"))
		require.NoError(t, err)
	})
	t.Run("zero Sampler", func(t *testing.T) {
		_, err := (&agent.Sampler{}).Sample(context.Background(), sampleRequest("docs"))
		require.ErrorIs(t, err, mcp.ErrRefused)
	})
}

func TestSamplerRateLimit(t *testing.T) {
	llm, model := startLLM(t, openaitest.Turn{Text: "1"}, openaitest.Turn{Text: "2"}, openaitest.Turn{Text: "3"})
	var asked atomic.Int32
	s := &agent.Sampler{Model: model, PerMinute: 2, Servers: []config.Server{{Name: "docs"}, {Name: "wiki"}},
		Policy: permission.NewPolicy(countingApprover(&asked, func(permission.Request) permission.Decision {
			return permission.Decision{Verdict: permission.AllowOnce}
		}))}
	for range 2 {
		_, err := s.Sample(context.Background(), sampleRequest("docs"))
		require.NoError(t, err)
	}
	_, err := s.Sample(context.Background(), sampleRequest("docs"))
	require.ErrorIs(t, err, mcp.ErrRefused)
	assert.Contains(t, err.Error(), "more than 2 sampling requests in a minute")
	assert.Equal(t, int32(2), asked.Load(), "the user is not asked past the limit")
	_, err = s.Sample(context.Background(), sampleRequest("wiki"))
	require.NoError(t, err, "the limit is per server")
	assert.Len(t, llm.Requests(), 3)
}

func TestSamplerTools(t *testing.T) {
	llm, model := startLLM(t, openaitest.Turn{ToolCalls: []openaitest.ToolCall{
		{ID: "c1", Name: "weather", Arguments: `{"city":"Paris"}`},
		{ID: "c2", Name: "host_secret_tool", Arguments: `{}`},
	}})
	s := &agent.Sampler{Model: model, Servers: []config.Server{{Name: "docs"}}, Policy: permission.NewPolicy(permission.AllowAll{})}
	req := sampleRequest("docs")
	req.Tools = []mcp.Tool{{Name: "weather", Description: "Weather of a city", InputSchema: json.RawMessage(`{"type":"object"}`)}}
	req.ToolChoice = &mcp.ToolChoice{Mode: "required"}
	res, err := s.Sample(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, mcp.SamplingContents{{Type: "tool_use", ID: "c1", Name: "weather", Input: json.RawMessage(`{"city":"Paris"}`)}}, res.Content,
		"only the server's own tools come back, for the server to run")
	assert.Equal(t, "toolUse", res.StopReason)
	reqs := llm.Requests()
	require.Len(t, reqs, 1)
	require.Len(t, reqs[0].Tools, 1)
	assert.Equal(t, "weather", reqs[0].Tools[0].Name)
	assert.JSONEq(t, `"required"`, string(reqs[0].ToolChoice))

	// The server ran the tool and asks again with its result.
	llm2, model2 := startLLM(t, openaitest.Turn{Text: "Sunny in Paris."})
	s.Model = model2
	req.Messages = append(req.Messages,
		mcp.SamplingMessage{Role: "assistant", Content: res.Content},
		mcp.SamplingMessage{Role: "user", Content: mcp.SamplingContents{{Type: "tool_result", ToolUseID: "c1", Content: []mcp.Content{{Type: "text", Text: "sunny"}}}}})
	res, err = s.Sample(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, "Sunny in Paris.", res.Content[0].Text)
	msgs := llm2.Requests()[0].Messages
	require.Len(t, msgs, 4)
	assert.Equal(t, "c1", msgs[2].ToolCalls[0].ID)
	assert.Equal(t, openaitest.Message{Role: "tool", Content: "sunny", ToolCallID: "c1"}, msgs[3])
}

func TestSamplerReviewAndEdits(t *testing.T) {
	for _, tc := range []struct {
		name   string
		review permission.Decision
		want   string
	}{
		{"sent as is", permission.Decision{Verdict: permission.AllowOnce}, "hi there"},
		{"edited", permission.Decision{Verdict: permission.AllowOnce, Edited: &permission.Sampling{Completion: "hello"}}, "hello"},
		{"withheld", permission.Decision{Verdict: permission.Deny, Reason: "wrong answer"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			llm, model := startLLM(t, openaitest.Turn{Text: "hi there"})
			var reviewed string
			s := &agent.Sampler{Model: model, Servers: []config.Server{{Name: "docs"}}, Policy: permission.NewPolicy(permission.ApproverFunc(
				func(_ context.Context, req permission.Request) (permission.Decision, error) {
					if req.Sampling.Completion != "" {
						reviewed = req.Sampling.Completion
						return tc.review, nil
					}
					return permission.Decision{Verdict: permission.AllowOnce, Review: true,
						Edited: &permission.Sampling{SystemPrompt: "Be brief.", MaxTokens: 7}}, nil
				}))}
			res, err := s.Sample(context.Background(), sampleRequest("docs"))
			assert.Equal(t, "hi there", reviewed)
			if tc.want == "" {
				require.ErrorIs(t, err, mcp.ErrRefused)
				assert.Contains(t, err.Error(), "wrong answer")
			} else {
				require.NoError(t, err)
				assert.Equal(t, tc.want, res.Content[0].Text)
			}
			r := llm.Requests()[0]
			assert.Equal(t, 7, maxTokensOf(t, r), "the edited limit")
			assert.Equal(t, "Be brief.", r.Messages[0].Content, "the edited system prompt")
		})
	}
}

// Issue 35 #6: a request's input is bounded before anyone is asked, and
// the question says how large it is.
func TestSamplerBoundsInput(t *testing.T) {
	llm, model := startLLM(t, openaitest.Turn{Text: "short"})
	var asked atomic.Int32
	var question permission.Request
	s := &agent.Sampler{Model: model, Servers: []config.Server{{Name: "docs"}},
		Policy: permission.NewPolicy(countingApprover(&asked, func(r permission.Request) permission.Decision {
			question = r
			return permission.Decision{Verdict: permission.AllowOnce}
		}))}
	huge := sampleRequest("docs")
	huge.Messages[0].Content[0].Text = strings.Repeat("a", 1<<20)
	_, err := s.Sample(context.Background(), huge)
	require.ErrorIs(t, err, mcp.ErrRefused)
	assert.Contains(t, err.Error(), fmt.Sprintf("more than the host's limit of %d", agent.DefaultSamplingMaxInputBytes))
	assert.Zero(t, asked.Load(), "refused before asking")
	assert.Empty(t, llm.Requests(), "the model saw nothing")

	req := sampleRequest("docs")
	req.Tools = []mcp.Tool{{Name: "weather", Description: "Weather of a city", InputSchema: json.RawMessage(`{"type":"object"}`)}}
	_, err = s.Sample(context.Background(), req)
	require.NoError(t, err)
	want := len("You are a test server.") + len("Say hi") + len("weather") + len("Weather of a city") + len(`{"type":"object"}`)
	require.NotNil(t, question.Sampling)
	assert.Equal(t, want, question.Sampling.InputBytes)
	assert.Equal(t, (want+2)/3, question.Sampling.InputTokens)

	s.MaxInputBytes = want - 1
	_, err = s.Sample(context.Background(), req)
	require.ErrorIs(t, err, mcp.ErrRefused, "MaxInputBytes sets the limit")
	assert.Len(t, llm.Requests(), 1)
}

// Issue 35 #6, review: what the bound counts is what the model is sent.
// Tool call ids go to the model twice (the call and its result) and the
// text blocks of a message are joined with newlines: neither passed the
// bound uncounted.
func TestSamplerBoundCountsWhatIsSent(t *testing.T) {
	id := strings.Repeat("i", agent.DefaultSamplingMaxInputBytes/2+1)
	blocks := make(mcp.SamplingContents, agent.DefaultSamplingMaxInputBytes+2)
	for i := range blocks {
		blocks[i] = mcp.SamplingContent{Type: "text"}
	}
	for _, tc := range []struct {
		name     string
		messages []mcp.SamplingMessage
	}{
		{"tool call ids", []mcp.SamplingMessage{
			{Role: "user", Content: mcp.SamplingContents{{Type: "text", Text: "Weather?"}}},
			{Role: "assistant", Content: mcp.SamplingContents{{Type: "tool_use", ID: id, Name: "weather", Input: json.RawMessage(`{}`)}}},
			{Role: "user", Content: mcp.SamplingContents{{Type: "tool_result", ToolUseID: id, Content: []mcp.Content{{Type: "text", Text: "sunny"}}}}},
		}},
		{"newlines between text blocks", []mcp.SamplingMessage{{Role: "user", Content: blocks}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			llm, model := startLLM(t)
			var asked atomic.Int32
			s := &agent.Sampler{Model: model, Servers: []config.Server{{Name: "docs"}},
				Policy: permission.NewPolicy(countingApprover(&asked, func(permission.Request) permission.Decision {
					return permission.Decision{Verdict: permission.AllowOnce}
				}))}
			req := sampleRequest("docs")
			req.Messages = tc.messages
			_, err := s.Sample(context.Background(), req)
			require.ErrorIs(t, err, mcp.ErrRefused)
			assert.Contains(t, err.Error(), fmt.Sprintf("more than the host's limit of %d", agent.DefaultSamplingMaxInputBytes))
			assert.Zero(t, asked.Load(), "refused before asking")
			assert.Empty(t, llm.Requests(), "the model saw nothing")
		})
	}
}

// Issue 35 #6: a configuration whose server runs its tools without asking
// still has its sampling asked, unless its sampling key says auto.
func TestSamplerAskedDespiteAutoTools(t *testing.T) {
	for _, tc := range []struct {
		name     string
		sampling permission.Mode
		asked    int32
	}{
		{"sampling not set", "", 1},
		{"sampling ask", permission.ModeAsk, 1},
		{"sampling auto", permission.ModeAuto, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, model := startLLM(t, openaitest.Turn{Text: "hi"})
			srv := config.Server{Name: "docs", Permissions: permission.ModeAuto, Sampling: tc.sampling}
			cfg := &config.Config{Permissions: permission.ModeAuto, Servers: []config.Server{srv}}
			var asked atomic.Int32
			s := &agent.Sampler{Model: model, Servers: cfg.Servers, Policy: agent.PolicyFromConfig(cfg, countingApprover(&asked, func(permission.Request) permission.Decision {
				return permission.Decision{Verdict: permission.AllowOnce}
			}))}
			_, err := s.Sample(context.Background(), sampleRequest("docs"))
			require.NoError(t, err)
			assert.Equal(t, tc.asked, asked.Load())
		})
	}
}

// A server's sampling request maps to parts: its text blocks to one text,
// its image to an image part, which the driver sends as a content part.
func TestSamplerImage(t *testing.T) {
	llm, model := startLLM(t, openaitest.Turn{Text: "a cat"})
	s := &agent.Sampler{Model: model, Servers: []config.Server{{Name: "docs"}},
		Policy: permission.NewPolicy(permission.AllowAll{})}
	req := sampleRequest("docs")
	req.Messages[0].Content = mcp.SamplingContents{{Type: "text", Text: "What is"}, {Type: "text", Text: "this?"},
		{Type: "image", MIMEType: "image/png", Data: "cG5nIQ=="}}
	res, err := s.Sample(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, "a cat", res.Content[0].Text)
	sent := llm.Requests()[0].Messages[1]
	assert.Equal(t, openaitest.Message{Role: "user", Content: "What is\nthis?", Media: []string{"data:image/png;base64,cG5nIQ=="}}, sent)

	req.Messages[0].Content = mcp.SamplingContents{{Type: "image", MIMEType: "image/png", Data: "not base64!"}}
	_, err = s.Sample(context.Background(), req)
	require.ErrorIs(t, err, mcp.ErrRefused)
	assert.ErrorContains(t, err, "not base64")
}

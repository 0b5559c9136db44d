//go:build unix

package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// The agent's OpenAI client against the real llama-server (see
// startLlama). The tiny model calls a tool when tools are offered and no
// tool result is in the conversation yet, and answers in words otherwise.

// llamaTimeout bounds one test's talk with the model: on two busy cores
// the model makes a few tokens a second under a tool-call grammar.
const llamaTimeout = 3 * time.Minute

const lookupSchema = `{"type":"object","properties":{"q":{"type":"string","description":"the word"}},"required":["q"]}`

var lookupDef = agent.ToolDef{Name: "lookup", Description: "Looks a word up", Parameters: json.RawMessage(lookupSchema)}

// tiny is a greedy client of the tiny model.
func tiny(base string, noStream bool) *agent.OpenAI {
	zero, seed := 0.0, 1
	return &agent.OpenAI{BaseURL: base, Model: "tiny", Temperature: &zero, Seed: &seed, MaxTokens: 48, NoStream: noStream}
}

func hello(tools ...agent.ToolDef) *agent.ChatRequest {
	return &agent.ChatRequest{Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}}, Tools: tools}
}

func llamaCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), llamaTimeout)
	t.Cleanup(cancel)
	return ctx
}

// chat calls m and joins the text it streamed.
func chat(t *testing.T, m *agent.OpenAI, req *agent.ChatRequest) (*agent.Reply, []string) {
	t.Helper()
	var pieces []string
	reply, err := m.Chat(llamaCtx(t), req, func(d agent.Delta) { pieces = append(pieces, d.Text) })
	require.NoError(t, err)
	return reply, pieces
}

func TestLlamaCppWire(t *testing.T) {
	base := startLlama(t, nil)

	t.Run("plain answer, streamed and whole", func(t *testing.T) {
		streamed, pieces := chat(t, tiny(base, false), hello())
		assert.Greater(t, len(pieces), 1, "the text arrives in pieces")
		assert.Equal(t, strings.Join(pieces, ""), streamed.Message.Content)
		assert.NotEmpty(t, strings.TrimSpace(streamed.Message.Content))
		assert.Equal(t, agent.FinishStop, streamed.Finish)
		assert.Empty(t, streamed.Message.ToolCalls)

		whole, pieces := chat(t, tiny(base, true), hello())
		assert.Equal(t, []string{whole.Message.Content}, pieces, "one piece")
		assert.Equal(t, streamed.Message.Content, whole.Message.Content, "greedy: the same answer")
		assert.Equal(t, agent.FinishStop, whole.Finish)
		for _, u := range []agent.Usage{streamed.Usage, whole.Usage} {
			assert.Positive(t, u.PromptTokens)
			assert.Positive(t, u.CompletionTokens)
			assert.Equal(t, u.PromptTokens+u.CompletionTokens, u.TotalTokens)
		}
		assert.Equal(t, streamed.Usage, whole.Usage)
	})

	t.Run("usage comes in an extra chunk without choices", func(t *testing.T) {
		body := `{"model":"tiny","temperature":0,"seed":1,"max_tokens":48,"stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`
		chunks := postRaw(t, base, body)
		require.GreaterOrEqual(t, len(chunks), 3)
		last, finish := chunks[len(chunks)-1], chunks[len(chunks)-2]
		assert.Empty(t, last.Choices)
		require.NotNil(t, last.Usage)
		require.Len(t, finish.Choices, 1)
		require.NotNil(t, finish.Choices[0].FinishReason)
		assert.Equal(t, "stop", *finish.Choices[0].FinishReason)
		for _, c := range chunks[:len(chunks)-1] {
			assert.Nil(t, c.Usage, "usage only in the last chunk")
		}
		reply, _ := chat(t, tiny(base, false), hello())
		assert.Equal(t, agent.Usage{PromptTokens: last.Usage.PromptTokens, CompletionTokens: last.Usage.CompletionTokens,
			TotalTokens: last.Usage.TotalTokens}, reply.Usage, "the client reports it")

		chunks = postRaw(t, base, strings.Replace(body, `"include_usage":true`, `"include_usage":false`, 1))
		for _, c := range chunks {
			assert.Nil(t, c.Usage, "no usage unless asked")
		}
	})

	t.Run("finish length", func(t *testing.T) {
		for _, noStream := range []bool{false, true} {
			m := tiny(base, noStream)
			m.MaxTokens = 2
			reply, _ := chat(t, m, hello())
			assert.Equal(t, agent.FinishLength, reply.Finish, "noStream %v", noStream)
			assert.NotEmpty(t, reply.Message.Content)
			assert.Equal(t, 2, reply.Usage.CompletionTokens)
		}
	})

	t.Run("a tool call, streamed and whole", func(t *testing.T) {
		body := `{"model":"tiny","temperature":0,"seed":1,"max_tokens":48,"stream":true,"messages":[{"role":"user","content":"hi"}],` +
			`"tools":[{"type":"function","function":{"name":"lookup","parameters":` + lookupSchema + `}}]}`
		var first *rawChunk
		var fragments []string
		var finish string
		for _, c := range postRaw(t, base, body) {
			if len(c.Choices) == 0 {
				continue
			}
			if f := c.Choices[0].FinishReason; f != nil {
				finish = *f
			}
			for _, tc := range c.Choices[0].Delta.ToolCalls {
				if first == nil {
					first = &c
					continue
				}
				assert.Empty(t, tc.ID, "only the first fragment has the id")
				assert.Empty(t, tc.Function.Name, "only the first fragment has the name")
				require.NotNil(t, tc.Index)
				assert.Equal(t, 0, *tc.Index)
				fragments = append(fragments, *tc.Function.Arguments)
			}
		}
		require.NotNil(t, first, "a tool_calls delta")
		tc := first.Choices[0].Delta.ToolCalls[0]
		assert.NotEmpty(t, tc.ID)
		assert.Equal(t, "function", tc.Type)
		assert.Equal(t, "lookup", tc.Function.Name)
		require.NotNil(t, tc.Function.Arguments)
		assert.Equal(t, "{", *tc.Function.Arguments, "the first fragment opens the arguments")
		assert.Greater(t, len(fragments), 1, "then the arguments come in fragments")
		assert.Equal(t, "tool_calls", finish)
		rawArgs := "{" + strings.Join(fragments, "")

		streamed, _ := chat(t, tiny(base, false), hello(lookupDef))
		whole, _ := chat(t, tiny(base, true), hello(lookupDef))
		for _, r := range []*agent.Reply{streamed, whole} {
			assert.Equal(t, agent.FinishToolCalls, r.Finish)
			require.Len(t, r.Message.ToolCalls, 1)
			c := r.Message.ToolCalls[0]
			assert.Equal(t, "lookup", c.Name)
			assert.NotEmpty(t, c.ID)
			assert.Equal(t, rawArgs, c.Arguments, "the arguments as the model wrote them")
			var args struct{ Q *string }
			require.NoError(t, json.Unmarshal([]byte(c.Arguments), &args), c.Arguments)
			assert.NotNil(t, args.Q, "grammar-valid for the schema")
		}
	})

	t.Run("two calls in one turn", func(t *testing.T) {
		// The grammar allows several calls with parallel_tool_calls; the
		// tiny model makes two for some seeds, the same streamed or whole.
		one := 1.0
		for seed := 1; seed <= 20; seed++ {
			m := tiny(base, false)
			m.Temperature, m.Seed, m.MaxTokens = &one, &seed, 64
			m.Extra = map[string]any{"parallel_tool_calls": true}
			streamed, _ := chat(t, m, hello(lookupDef))
			if len(streamed.Message.ToolCalls) < 2 || streamed.Finish != agent.FinishToolCalls {
				continue
			}
			m.NoStream = true
			whole, _ := chat(t, m, hello(lookupDef))
			for _, r := range []*agent.Reply{streamed, whole} {
				assert.Equal(t, agent.FinishToolCalls, r.Finish)
				ids := map[string]bool{}
				for _, c := range r.Message.ToolCalls {
					ids[c.ID] = true
					var args map[string]any
					assert.NoError(t, json.Unmarshal([]byte(c.Arguments), &args), c.Arguments)
				}
				assert.Len(t, ids, len(r.Message.ToolCalls), "distinct ids")
			}
			assert.Equal(t, callsOf(streamed), callsOf(whole), "seed %d", seed)
			return
		}
		t.Fatal("no seed of 1 to 20 made two whole calls in one turn")
	})
}

// callsOf renders a reply's calls without their ids, which the server
// draws at random.
func callsOf(r *agent.Reply) []string {
	var out []string
	for _, c := range r.Message.ToolCalls {
		out = append(out, c.Name+" "+c.Arguments)
	}
	return out
}

func TestLlamaCppToolChoice(t *testing.T) {
	base := startLlama(t, nil)
	for _, tt := range []struct {
		choice agent.ToolChoice
		calls  bool
	}{
		{agent.ToolChoiceNone, false},
		{agent.ToolChoiceRequired, true},
		{agent.ToolChoiceAuto, true},
		// llama-server ignores a named tool: it answers as with auto.
		{"lookup", true},
	} {
		t.Run(string(tt.choice), func(t *testing.T) {
			m := tiny(base, true)
			m.MaxTokens = 24
			req := hello(lookupDef)
			req.ToolChoice = tt.choice
			reply, _ := chat(t, m, req)
			assert.Equal(t, tt.calls, len(reply.Message.ToolCalls) > 0, "%+v", reply.Message)
		})
	}
}

func TestLlamaCppErrors(t *testing.T) {
	base := startLlama(t, nil)

	t.Run("a schema the converter rejects", func(t *testing.T) {
		float := agent.ToolDef{Name: "scale", Parameters: json.RawMessage(`{"type":"object","properties":{"by":{"type":"float"}}}`)}
		for _, noStream := range []bool{false, true} {
			_, err := tiny(base, noStream).Chat(llamaCtx(t), hello(float), nil)
			var apiErr *agent.APIError
			require.ErrorAs(t, err, &apiErr, "noStream %v", noStream)
			assert.Equal(t, http.StatusBadRequest, apiErr.StatusCode)
			assert.Equal(t, "invalid_request_error", apiErr.Type)
			assert.Contains(t, apiErr.Message, "unrecognized type float")
		}

		// The agent shows the model a projection that maps the alias, and
		// validates the call against it.
		srv, entry := startTool(t, "calc", `{"name":"scale","description":"Scales","inputSchema":{"type":"object","properties":{"by":{"type":"float"}},"required":["by"]}}`)
		var warnings []string
		res, err := (&agent.Agent{Model: tiny(base, false), Tools: discoverTools(t, entry), Policy: permission.NewPolicy(permission.AllowAll{})}).
			RunStream(llamaCtx(t), []agent.Message{{Role: agent.RoleUser, Content: "scale"}}, func(e agent.Event) {
				if w, ok := e.(*agent.Warning); ok {
					warnings = append(warnings, w.Message)
				}
			})
		require.NoError(t, err)
		assert.NotEmpty(t, res.Answer)
		require.NotEmpty(t, srv.calls(), "the tool was called")
		assert.Contains(t, strings.Join(warnings, "\n"), `"float" → "number"`)
	})

	t.Run("a malformed request", func(t *testing.T) {
		// json_schema and grammar together: llama-server throws, and
		// answers 500. It is not sent again.
		var sent atomic.Int32
		m := tiny(base, false)
		m.HTTPClient = &http.Client{Transport: countingTransport{&sent}}
		m.Extra = map[string]any{"json_schema": map[string]any{"type": "object"}, "grammar": `root ::= "a"`}
		res, err := (&agent.Agent{Model: m}).Run(llamaCtx(t), []agent.Message{{Role: agent.RoleUser, Content: "hi"}})
		var apiErr *agent.APIError
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, http.StatusInternalServerError, apiErr.StatusCode)
		assert.Equal(t, "server_error", apiErr.Type)
		assert.Equal(t, "Cannot use both json_schema and grammar", apiErr.Message)
		assert.Equal(t, agent.StopError, res.Stop)
		assert.Equal(t, int32(1), sent.Load())
	})

	t.Run("a prompt longer than the context", func(t *testing.T) {
		log := strings.Repeat("line of the log\n", 3000) // about 15,000 tokens; the context is 8,192
		_, err := tiny(base, false).Chat(llamaCtx(t), &agent.ChatRequest{Messages: []agent.Message{{Role: agent.RoleUser, Content: log}}}, nil)
		require.ErrorIs(t, err, agent.ErrContextExceeded)
		var apiErr *agent.APIError
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, http.StatusBadRequest, apiErr.StatusCode)
		assert.Equal(t, 8192, apiErr.ContextSize)
		assert.Greater(t, apiErr.PromptTokens, apiErr.ContextSize)

		// The run has nothing to shorten: a typed error.
		res, err := (&agent.Agent{Model: tiny(base, false), ContextBudget: 32768}).Run(llamaCtx(t), []agent.Message{{Role: agent.RoleUser, Content: log}})
		require.ErrorIs(t, err, agent.ErrContextExceeded)
		assert.ErrorContains(t, err, "no tool output left to shorten")
		assert.Equal(t, agent.StopError, res.Stop)

		// An old tool output is shortened and the request sent again. The
		// host's budget (32,768 estimated tokens) lets the first request
		// through whole.
		echo := echoFunc(t)
		msgs := []agent.Message{
			{Role: agent.RoleUser, Content: "read the log"},
			{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "old", Name: "echo", Arguments: `{"text":"log"}`}}},
			{Role: agent.RoleTool, ToolCallID: "old", Name: "echo", Server: agent.FuncServer, Content: log},
			{Role: agent.RoleUser, Content: "what failed?"},
		}
		var sent atomic.Int32
		m := tiny(base, false)
		m.HTTPClient = &http.Client{Transport: countingTransport{&sent}}
		res, err = (&agent.Agent{Model: m, Funcs: []*agent.Func{echo}, ContextBudget: 32768, MaxTurns: 1}).Run(llamaCtx(t), msgs)
		require.NoError(t, err)
		assert.NotEmpty(t, res.Answer, "the model read the shortened conversation")
		assert.Equal(t, int32(2), sent.Load())
		assert.Less(t, len(res.Messages[2].Content), 2048)
		require.NotEmpty(t, res.Warnings)
		assert.Contains(t, res.Warnings[0].Message, "longer than the model's context")
	})

	t.Run("a call cut at the output limit", func(t *testing.T) {
		// Cut before the call's name is whole, llama-server withholds the
		// call from a stream and leaves "<tool_call>..." as text in a whole
		// answer; cut after, both have the partial arguments.
		for _, limit := range []int{10, 18} {
			for _, noStream := range []bool{false, true} {
				t.Run(fmt.Sprintf("max_tokens %d noStream %v", limit, noStream), func(t *testing.T) {
					m := tiny(base, noStream)
					m.MaxTokens = limit
					res, err := (&agent.Agent{Model: m, Funcs: []*agent.Func{echoFunc(t)}, MaxTurns: 1}).
						Run(llamaCtx(t), []agent.Message{{Role: agent.RoleUser, Content: "hi"}})
					require.ErrorIs(t, err, agent.ErrMaxTurns)
					require.Len(t, res.Messages, 3)
					told := res.Messages[2]
					assert.Contains(t, told.Content, "cut off at the output limit", "%+v", res.Messages[1])
					assert.NotContains(t, told.Content, "Correct the arguments")
					require.NotEmpty(t, res.Warnings)
					assert.Equal(t, agent.WarnTruncatedAnswer, res.Warnings[0].Kind)
					assert.Contains(t, res.Warnings[0].Message, "in the middle of a tool call")
				})
			}
		}
	})
}

// countingTransport counts the requests it sends.
type countingTransport struct{ n *atomic.Int32 }

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

// echoFunc is a local tool that returns its text.
func echoFunc(t *testing.T) *agent.Func {
	t.Helper()
	type in struct {
		Text string `json:"text" jsonschema:"what to echo"`
	}
	f, err := agent.NewFunc("echo", "Echoes its text", func(_ context.Context, a in) (string, error) { return "echo: " + a.Text, nil })
	require.NoError(t, err)
	return f
}

// toolServer is an mcptest server with one tool that records its calls.
type toolServer struct {
	mu  sync.Mutex
	got []string
}

func (s *toolServer) calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.got...)
}

// startTool serves one MCP tool with definition def, answering "done: ARGS".
func startTool(t *testing.T, server, def string) (*toolServer, config.Server) {
	t.Helper()
	ts := &toolServer{}
	s := &mcptest.Server{Versions: []string{mcptest.Modern}, Tools: []mcptest.Tool{{
		Def: json.RawMessage(def),
		Call: func(_ context.Context, args json.RawMessage, _ func(string, any)) (any, error) {
			ts.mu.Lock()
			ts.got = append(ts.got, string(args))
			ts.mu.Unlock()
			return map[string]any{"content": []any{map[string]any{"type": "text", "text": "done: " + string(args)}}}, nil
		},
	}}}
	url := s.Start()
	t.Cleanup(s.Close)
	return ts, config.Server{Name: server, URL: url, Permissions: config.ModeAsk}
}

func discoverTools(t *testing.T, servers ...config.Server) *mcp.Toolset {
	t.Helper()
	ts, err := mcp.Discover(context.Background(), servers, nil)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, ts.Close(context.Background())) })
	require.Empty(t, ts.Warnings())
	return ts
}

// step is what the host saw of one tool call of a run.
type step struct {
	Turn             int
	Server, Tool     string
	Arguments        string
	Asked            bool
	Status           agent.CallStatus
	Output           string
	ApprovalDecision string
}

func TestLlamaCppAgentRun(t *testing.T) {
	base := startLlama(t, nil)
	_, entry := startTool(t, "dict", `{"name":"lookup","description":"Looks a word up in the dictionary","inputSchema":`+lookupSchema+`}`)
	tools := discoverTools(t, entry)
	add, err := agent.NewFunc("add", "Adds two integers", func(_ context.Context, in struct {
		A int64 `json:"a"`
		B int64 `json:"b"`
	}) (int64, error) {
		return in.A + in.B, nil
	})
	require.NoError(t, err)

	// run runs the conversation with the seed, every call put to an
	// approver, and returns what the host saw.
	run := func(t *testing.T, seed int, noStream bool) (agent.Result, []step) {
		var mu sync.Mutex
		asked := map[string]bool{}
		policy := permission.NewPolicy(permission.ApproverFunc(func(_ context.Context, req permission.Request) (permission.Decision, error) {
			mu.Lock()
			defer mu.Unlock()
			asked[req.Server+"/"+req.Tool+" "+string(req.Arguments)] = true
			return permission.Decision{Verdict: permission.AllowOnce}, nil
		}))
		m := tiny(base, noStream)
		one := 1.0
		m.Temperature, m.Seed = &one, &seed
		a := &agent.Agent{Model: m, Tools: tools, Funcs: []*agent.Func{add}, Policy: policy, MaxTurns: 4}
		var steps []step
		var text strings.Builder
		res, err := a.RunStream(llamaCtx(t), []agent.Message{{Role: agent.RoleUser, Content: "add, then look it up"}}, func(e agent.Event) {
			switch e := e.(type) {
			case *agent.TextDelta:
				text.WriteString(e.Text)
			case *agent.ToolCallProposed:
				steps = append(steps, step{Turn: e.Turn, Server: e.Server, Tool: e.Tool, Arguments: e.Call.Arguments})
			case *agent.ApprovalDecided:
				steps[len(steps)-1].ApprovalDecision = e.Decision.Verdict.String()
			case *agent.ToolResult:
				s := &steps[len(steps)-1]
				s.Status, s.Output = e.Status, e.Output
			}
		})
		require.NoError(t, err)
		assert.Equal(t, agent.StopAnswer, res.Stop)
		assert.True(t, strings.HasSuffix(text.String(), res.Answer), "the answer reached the host as text")
		for i := range steps {
			s := &steps[i]
			var compact bytes.Buffer
			require.NoError(t, json.Compact(&compact, []byte(s.Arguments)))
			s.Asked = asked[s.Server+"/"+s.Tool+" "+compact.String()]
			assert.True(t, s.Asked, "the approver was asked about %s/%s %s", s.Server, s.Tool, s.Arguments)
			assert.Equal(t, agent.StatusOK, s.Status)
		}
		return res, steps
	}

	// Which tool the model picks, and whether it says more than nothing
	// after the result, depends on the seed: try seeds until both the MCP
	// tool and the Func have been called, and an answer had words.
	called := map[string]bool{}
	answered := false
	for seed := 1; seed <= 20 && (len(called) < 2 || !answered); seed++ {
		streamed, steps := run(t, seed, false)
		whole, wholeSteps := run(t, seed, true)
		require.NotEmpty(t, steps, "seed %d: the model called a tool", seed)
		assert.Equal(t, steps, wholeSteps, "seed %d: the same calls, streamed or not", seed)
		assert.Equal(t, streamed.Answer, whole.Answer, "seed %d", seed)
		answered = answered || strings.TrimSpace(streamed.Answer) != ""
		t.Logf("seed %d: %d turns, calls %+v, answer %q", seed, streamed.Turns, steps, streamed.Answer)
		assert.Equal(t, streamed.Turns, whole.Turns)
		assert.Equal(t, streamed.Usage, whole.Usage)
		assert.Equal(t, roles(streamed.Messages), roles(whole.Messages))
		for _, s := range steps {
			called[s.Server] = true
			switch s.Server {
			case agent.FuncServer:
				var in struct{ A, B int64 }
				require.NoError(t, json.Unmarshal([]byte(s.Arguments), &in))
				assert.Contains(t, s.Output, fmt.Sprint(in.A+in.B))
			case "dict":
				assert.Contains(t, s.Output, "done: ")
			default:
				t.Errorf("a call of server %q", s.Server)
			}
		}
	}
	assert.True(t, called["dict"], "the MCP tool was called")
	assert.True(t, called[agent.FuncServer], "the Func was called")
	assert.True(t, answered, "an answer had words")
}

func roles(msgs []agent.Message) []agent.Role {
	out := make([]agent.Role, len(msgs))
	for i, m := range msgs {
		out[i] = m.Role
	}
	return out
}

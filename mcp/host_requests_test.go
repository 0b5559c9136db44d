package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/internal/jsonrpc"
	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
)

// askingServer is a legacy server whose tools/call sends the request
// method(params) to the client on the call's stream, waits for the
// client's answer and returns it as the tool's text: the response's
// "result" or "error" member.
func askingServer(t *testing.T, method, params string) *mcptest.Server {
	t.Helper()
	answered := make(chan *jsonrpc.Message, 1)
	s := &mcptest.Server{Versions: []string{mcptest.Legacy}, SSE: true}
	s.Intercept = func(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) bool {
		if msg.Method == "" && len(msg.ID) > 0 {
			answered <- msg
			w.WriteHeader(http.StatusAccepted)
			return true
		}
		if msg.Method != "tools/call" {
			return false
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\"method\":%q,\"params\":%s}\n\n", method, params)
		w.(http.Flusher).Flush()
		select {
		case a := <-answered:
			var text []byte
			if a.Error != nil {
				text, _ = json.Marshal(map[string]any{"error": a.Error})
			} else {
				text, _ = json.Marshal(map[string]any{"result": a.Result})
			}
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": map[string]any{"content": []any{map[string]any{"type": "text", "text": string(text)}}}})
			fmt.Fprintf(w, "data: %s\n\n", b)
		case <-r.Context().Done():
		}
		return true
	}
	return s
}

// initCapabilities returns the capabilities the client sent in initialize.
func initCapabilities(t *testing.T, s *mcptest.Server) string {
	t.Helper()
	for _, r := range s.Requests() {
		if r.Method == "initialize" {
			var m struct {
				Params struct {
					Capabilities json.RawMessage `json:"capabilities"`
				} `json:"params"`
			}
			require.NoError(t, json.Unmarshal(r.Body, &m))
			return string(m.Params.Capabilities)
		}
	}
	t.Fatal("no initialize")
	return ""
}

// askOnce calls the asking server's tool and returns the client's answer.
func askOnce(t *testing.T, c *mcp.Client) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, "ask", nil)
	require.NoError(t, err)
	return res.Text()
}

const samplingParams = `{"messages":[{"role":"user","content":{"type":"text","text":"Say hi"}}],"systemPrompt":"You are terse.","maxTokens":20,"temperature":0.7}`

func TestLegacySampling(t *testing.T) {
	t.Run("answered by the handler", func(t *testing.T) {
		s := askingServer(t, "sampling/createMessage", samplingParams)
		got := make(chan *mcp.SampleRequest, 1)
		c := connect(t, mcptest.Start(t, s), &mcp.Options{ServerName: "srv", SampleTools: true,
			Sample: func(_ context.Context, req *mcp.SampleRequest) (*mcp.SampleResult, error) {
				got <- req
				return &mcp.SampleResult{Content: mcp.SamplingContents{{Type: "text", Text: "hi"}}, Model: "m-1", StopReason: "endTurn"}, nil
			}})
		assert.JSONEq(t, `{"sampling":{"tools":{}},"tasks":{}}`, initCapabilities(t, s))
		assert.JSONEq(t, `{"result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m-1","stopReason":"endTurn"}}`, askOnce(t, c))
		req := <-got
		assert.Equal(t, "srv", req.Server)
		assert.Equal(t, "You are terse.", req.SystemPrompt)
		assert.Equal(t, 20, req.MaxTokens)
		require.Len(t, req.Messages, 1)
		assert.Equal(t, mcp.SamplingContents{{Type: "text", Text: "Say hi"}}, req.Messages[0].Content)
	})
	t.Run("refused", func(t *testing.T) {
		s := askingServer(t, "sampling/createMessage", samplingParams)
		c := connect(t, mcptest.Start(t, s), &mcp.Options{Sample: func(context.Context, *mcp.SampleRequest) (*mcp.SampleResult, error) {
			return nil, fmt.Errorf("policy says no: %w", mcp.ErrRefused)
		}})
		assert.JSONEq(t, `{"error":{"code":-1,"message":"user rejected sampling request"}}`, askOnce(t, c))
	})
	t.Run("handler failure not shown to the server", func(t *testing.T) {
		s := askingServer(t, "sampling/createMessage", samplingParams)
		c := connect(t, mcptest.Start(t, s), &mcp.Options{Sample: func(context.Context, *mcp.SampleRequest) (*mcp.SampleResult, error) {
			return nil, errors.New("model at http://10.0.0.7:8080 down")
		}})
		answer := askOnce(t, c)
		assert.Contains(t, answer, fmt.Sprint(mcp.CodeInternalError))
		assert.NotContains(t, answer, "10.0.0.7")
	})
	for name, params := range map[string]string{
		"tools not declared":       `{"messages":[{"role":"user","content":{"type":"text","text":"x"}}],"maxTokens":5,"tools":[{"name":"t","inputSchema":{"type":"object"}}]}`,
		"context not declared":     `{"messages":[{"role":"user","content":{"type":"text","text":"x"}}],"maxTokens":5,"includeContext":"allServers"}`,
		"no max tokens":            `{"messages":[{"role":"user","content":{"type":"text","text":"x"}}]}`,
		"no messages":              `{"messages":[],"maxTokens":5}`,
		"bad role":                 `{"messages":[{"role":"system","content":{"type":"text","text":"x"}}],"maxTokens":5}`,
		"result without use":       `{"messages":[{"role":"user","content":[{"type":"tool_result","toolUseId":"u1","content":[]}]}],"maxTokens":5}`,
		"result mixed with text":   `{"messages":[{"role":"assistant","content":{"type":"tool_use","id":"u1","name":"t","input":{}}},{"role":"user","content":[{"type":"tool_result","toolUseId":"u1","content":[]},{"type":"text","text":"x"}]}],"maxTokens":5}`,
		"use left unanswered":      `{"messages":[{"role":"assistant","content":{"type":"tool_use","id":"u1","name":"t","input":{}}},{"role":"user","content":{"type":"text","text":"x"}}],"maxTokens":5}`,
		"content neither one many": `{"messages":[{"role":"user","content":"x"}],"maxTokens":5}`,
	} {
		t.Run(name, func(t *testing.T) {
			s := askingServer(t, "sampling/createMessage", params)
			var calls atomic.Int32
			c := connect(t, mcptest.Start(t, s), &mcp.Options{Sample: func(context.Context, *mcp.SampleRequest) (*mcp.SampleResult, error) {
				calls.Add(1)
				return &mcp.SampleResult{Content: mcp.SamplingContents{{Type: "text", Text: "x"}}, Model: "m"}, nil
			}})
			assert.Contains(t, askOnce(t, c), fmt.Sprintf(`"code":%d`, mcp.CodeInvalidParams))
			assert.Zero(t, calls.Load(), "the handler is not asked")
		})
	}
	t.Run("tool round trip accepted", func(t *testing.T) {
		params := `{"messages":[{"role":"user","content":{"type":"text","text":"weather?"}},{"role":"assistant","content":[{"type":"tool_use","id":"u1","name":"weather","input":{"city":"Paris"}}]},{"role":"user","content":[{"type":"tool_result","toolUseId":"u1","content":[{"type":"text","text":"sunny"}]}]}],"maxTokens":5,"tools":[{"name":"weather","inputSchema":{"type":"object"}}],"toolChoice":{"mode":"auto"}}`
		s := askingServer(t, "sampling/createMessage", params)
		got := make(chan *mcp.SampleRequest, 1)
		c := connect(t, mcptest.Start(t, s), &mcp.Options{SampleTools: true, Sample: func(_ context.Context, req *mcp.SampleRequest) (*mcp.SampleResult, error) {
			got <- req
			return &mcp.SampleResult{Content: mcp.SamplingContents{{Type: "text", Text: "It is sunny."}}, Model: "m"}, nil
		}})
		assert.Contains(t, askOnce(t, c), "It is sunny.")
		req := <-got
		require.Len(t, req.Tools, 1)
		assert.Equal(t, "weather", req.Tools[0].Name)
		assert.Equal(t, "auto", req.ToolChoice.Mode)
		assert.JSONEq(t, `{"city":"Paris"}`, string(req.Messages[1].Content[0].Input))
		assert.Equal(t, "sunny", req.Messages[2].Content[0].Content[0].Text)
	})
	t.Run("no handler", func(t *testing.T) {
		s := askingServer(t, "sampling/createMessage", samplingParams)
		c := connect(t, mcptest.Start(t, s), &mcp.Options{Elicit: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, nil
		}})
		assert.JSONEq(t, `{"elicitation":{"form":{}},"tasks":{}}`, initCapabilities(t, s), "no sampling declared")
		assert.Contains(t, askOnce(t, c), fmt.Sprintf(`"code":%d`, mcp.CodeMethodNotFound))
	})
}

// inputServer is a 2026-07-28 server whose tools/call asks for the input
// request method(params) under key "k", then returns the params of the
// retry as the tool's text.
func inputServer(t *testing.T, method, params string) *mcptest.Server {
	t.Helper()
	return inputRoundServer(fmt.Sprintf(`{"resultType":"input_required","inputRequests":{"k":{"method":%q,"params":%s}}}`, method, params))
}

// inputRoundServer is a 2026-07-28 server whose tools/call answers first
// with the result round, then with the params of the retry as the tool's
// text.
func inputRoundServer(round string) *mcptest.Server {
	var rounds atomic.Int32
	s := &mcptest.Server{Versions: []string{mcptest.Modern}}
	s.Intercept = func(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) bool {
		if msg.Method != "tools/call" {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		if rounds.Add(1) == 1 {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, msg.ID, round)
			return true
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":%q}]}}`, msg.ID, string(msg.Params))
		return true
	}
	return s
}

// retryParams decodes the params of an inputServer's retry.
type retryParams struct {
	Meta           map[string]json.RawMessage `json:"_meta"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
}

func TestModernSampling(t *testing.T) {
	t.Run("answered", func(t *testing.T) {
		s := inputServer(t, "sampling/createMessage", samplingParams)
		c := connect(t, mcptest.Start(t, s), &mcp.Options{ServerName: "srv", Sample: func(_ context.Context, req *mcp.SampleRequest) (*mcp.SampleResult, error) {
			assert.Equal(t, "srv", req.Server)
			return &mcp.SampleResult{Content: mcp.SamplingContents{{Type: "text", Text: "hi"}}, Model: "m-1"}, nil
		}})
		res, err := c.CallTool(context.Background(), "ask", nil)
		require.NoError(t, err)
		var p retryParams
		require.NoError(t, json.Unmarshal([]byte(res.Text()), &p))
		assert.JSONEq(t, `{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m-1"}`, string(p.InputResponses["k"]))
		assert.JSONEq(t, `{"sampling":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`, string(p.Meta["io.modelcontextprotocol/clientCapabilities"]))
	})
	t.Run("refused", func(t *testing.T) {
		s := inputServer(t, "sampling/createMessage", samplingParams)
		c := connect(t, mcptest.Start(t, s), &mcp.Options{Sample: func(context.Context, *mcp.SampleRequest) (*mcp.SampleResult, error) {
			return nil, mcp.ErrRefused
		}})
		_, err := c.CallTool(context.Background(), "ask", nil)
		require.ErrorIs(t, err, mcp.ErrRefused)
		assert.Equal(t, 1, s.Count("tools/call"), "a refusal is not sent back: the call is not retried")
	})
}

func TestURLElicitation(t *testing.T) {
	const urlParams = `{"mode":"url","url":"https://auth.example/start?x=1","message":"Sign in"}`
	t.Run("modern consent drops content", func(t *testing.T) {
		s := inputServer(t, "elicitation/create", urlParams)
		got := make(chan *mcp.ElicitRequest, 1)
		c := connect(t, mcptest.Start(t, s), &mcp.Options{ElicitURL: true, Elicit: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			got <- req
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"leak": "no"}}, nil
		}})
		res, err := c.CallTool(context.Background(), "ask", nil)
		require.NoError(t, err)
		var p retryParams
		require.NoError(t, json.Unmarshal([]byte(res.Text()), &p))
		assert.JSONEq(t, `{"action":"accept"}`, string(p.InputResponses["k"]))
		assert.JSONEq(t, `{"elicitation":{"form":{},"url":{}},"extensions":{"io.modelcontextprotocol/tasks":{}}}`, string(p.Meta["io.modelcontextprotocol/clientCapabilities"]))
		req := <-got
		assert.Equal(t, "url", req.Mode)
		assert.Equal(t, "https://auth.example/start?x=1", req.URL)
		assert.Equal(t, "Sign in", req.Message)
	})
	for name, u := range map[string]string{
		"user info":      "https://bank.example@evil.example/",
		"javascript":     "javascript:alert(1)",
		"file":           "file:///etc/passwd",
		"relative":       "/start",
		"control":        "https://a.example/\x1b[2J",
		"no url":         "",
		"too long":       "https://a.example/" + strings.Repeat("a", 9000),
		"not even a url": "https://[::1",
	} {
		t.Run("refused "+name, func(t *testing.T) {
			b, _ := json.Marshal(map[string]any{"mode": "url", "url": u, "message": "m", "elicitationId": "e"})
			s := askingServer(t, "elicitation/create", string(b))
			var calls atomic.Int32
			c := connect(t, mcptest.Start(t, s), &mcp.Options{ElicitURL: true, Elicit: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				calls.Add(1)
				return &mcp.ElicitResult{Action: "accept"}, nil
			}})
			assert.Contains(t, askOnce(t, c), fmt.Sprintf(`"code":%d`, mcp.CodeInvalidParams))
			assert.Zero(t, calls.Load())
		})
	}
	t.Run("legacy without elicitationId", func(t *testing.T) {
		s := askingServer(t, "elicitation/create", urlParams)
		c := connect(t, mcptest.Start(t, s), &mcp.Options{ElicitURL: true, Elicit: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept"}, nil
		}})
		assert.Contains(t, askOnce(t, c), fmt.Sprintf(`"code":%d`, mcp.CodeInvalidParams))
	})
	t.Run("url mode not declared", func(t *testing.T) {
		s := askingServer(t, "elicitation/create", `{"mode":"url","url":"https://a.example/","message":"m","elicitationId":"e"}`)
		c := connect(t, mcptest.Start(t, s), &mcp.Options{Elicit: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			t.Error("the handler was asked for an undeclared mode")
			return nil, nil
		}})
		assert.JSONEq(t, `{"elicitation":{"form":{}},"tasks":{}}`, initCapabilities(t, s))
		assert.Contains(t, askOnce(t, c), fmt.Sprintf(`"code":%d`, mcp.CodeInvalidParams))
	})
	t.Run("legacy accepted, then completed", func(t *testing.T) {
		s := askingServer(t, "elicitation/create", `{"mode":"url","url":"https://a.example/","message":"m","elicitationId":"e-7"}`)
		c := connect(t, mcptest.Start(t, s), &mcp.Options{ElicitURL: true, Elicit: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			assert.Equal(t, "e-7", req.ElicitationID)
			return &mcp.ElicitResult{Action: "accept"}, nil
		}})
		assert.JSONEq(t, `{"result":{"action":"accept"}}`, askOnce(t, c))
	})
}

// elicitRequiredServer is a legacy server whose tools/call fails with
// URLElicitationRequired (elicitation "e-1") the first `refusals` times,
// then succeeds. complete sends notifications/elicitation/complete for an
// id on its GET stream.
type elicitRequiredServer struct {
	*mcptest.Server
	url      string
	notes    chan string
	refusals int32
	calls    atomic.Int32
}

func startElicitRequired(t *testing.T, refusals int32) *elicitRequiredServer {
	t.Helper()
	e := &elicitRequiredServer{Server: &mcptest.Server{Versions: []string{mcptest.Legacy}}, notes: make(chan string, 4), refusals: refusals}
	e.Intercept = func(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Message) bool {
		if msg.Method != "tools/call" {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		if e.calls.Add(1) <= e.refusals {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32042,"message":"This request requires browser-based authorization.","data":{"elicitations":[{"mode":"url","url":"https://auth.example/x","message":"Open it","elicitationId":"e-1"}]}}}`, msg.ID)
			return true
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"done"}]}}`, msg.ID)
		return true
	}
	mcptest.Start(t, e.Server) // sets the server up; its own listener stays unused
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			e.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for {
			select {
			case id := <-e.notes:
				fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/elicitation/complete\",\"params\":{\"elicitationId\":%q}}\n\n", id)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	e.url = srv.URL
	return e
}

func TestURLElicitationRequired(t *testing.T) {
	t.Run("retried once the server completes", func(t *testing.T) {
		e := startElicitRequired(t, 1)
		completed := make(chan string, 1)
		var shown atomic.Int32
		c := connect(t, e.url, &mcp.Options{ElicitURL: true, ElicitCompleteWait: time.Hour,
			OnElicitationComplete: func(id string) { completed <- id },
			Elicit: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				shown.Add(1)
				assert.Equal(t, "url", req.Mode)
				assert.Equal(t, "https://auth.example/x", req.URL)
				assert.Equal(t, 1, int(e.calls.Load()), "no retry before the user consented")
				e.notes <- req.ElicitationID // the user finished in the browser
				return &mcp.ElicitResult{Action: "accept"}, nil
			}})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, err := c.CallTool(ctx, "guarded", nil)
		require.NoError(t, err)
		assert.Equal(t, "done", res.Text())
		assert.Equal(t, int32(2), e.calls.Load())
		assert.Equal(t, int32(1), shown.Load())
		assert.Equal(t, "e-1", <-completed)
	})
	t.Run("retried after the wait when no completion comes", func(t *testing.T) {
		e := startElicitRequired(t, 1)
		c := connect(t, e.url, &mcp.Options{ElicitURL: true, ElicitCompleteWait: 10 * time.Millisecond,
			Elicit: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept"}, nil
			}})
		res, err := c.CallTool(context.Background(), "guarded", nil)
		require.NoError(t, err)
		assert.Equal(t, "done", res.Text())
	})
	t.Run("retried only once", func(t *testing.T) {
		e := startElicitRequired(t, 5)
		c := connect(t, e.url, &mcp.Options{ElicitURL: true, ElicitCompleteWait: -1,
			Elicit: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept"}, nil
			}})
		_, err := c.CallTool(context.Background(), "guarded", nil)
		var rpc *mcp.RPCError
		require.ErrorAs(t, err, &rpc)
		assert.Equal(t, mcp.CodeURLElicitationRequired, rpc.Code)
		assert.Equal(t, int32(2), e.calls.Load())
	})
	t.Run("declined", func(t *testing.T) {
		e := startElicitRequired(t, 1)
		c := connect(t, e.url, &mcp.Options{ElicitURL: true, Elicit: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}})
		_, err := c.CallTool(context.Background(), "guarded", nil)
		var rpc *mcp.RPCError
		require.ErrorAs(t, err, &rpc)
		assert.Equal(t, mcp.CodeURLElicitationRequired, rpc.Code)
		assert.Contains(t, err.Error(), "decline")
		assert.Equal(t, int32(1), e.calls.Load(), "not retried")
	})
	t.Run("not declared", func(t *testing.T) {
		e := startElicitRequired(t, 1)
		c := connect(t, e.url, nil)
		_, err := c.CallTool(context.Background(), "guarded", nil)
		var rpc *mcp.RPCError
		require.ErrorAs(t, err, &rpc)
		assert.Equal(t, mcp.CodeURLElicitationRequired, rpc.Code)
		assert.Equal(t, int32(1), e.calls.Load())
	})
}

func TestNotifyRootsChanged(t *testing.T) {
	roots := func(context.Context) ([]mcp.Root, error) { return []mcp.Root{{URI: "file:///work"}}, nil }
	t.Run("legacy", func(t *testing.T) {
		s := &mcptest.Server{Versions: []string{mcptest.Legacy}}
		c := connect(t, mcptest.Start(t, s), &mcp.Options{Roots: roots})
		assert.JSONEq(t, `{"roots":{"listChanged":true},"tasks":{}}`, initCapabilities(t, s))
		require.NoError(t, c.NotifyRootsChanged(context.Background()))
		assert.Equal(t, 1, s.Count("notifications/roots/list_changed"))
	})
	t.Run("modern has no such notification", func(t *testing.T) {
		s := &mcptest.Server{Versions: []string{mcptest.Modern}}
		c := connect(t, mcptest.Start(t, s), &mcp.Options{Roots: roots})
		require.NoError(t, c.NotifyRootsChanged(context.Background()))
		assert.Zero(t, s.Count("notifications/roots/list_changed"))
	})
	t.Run("no roots offered", func(t *testing.T) {
		s := &mcptest.Server{Versions: []string{mcptest.Legacy}}
		c := connect(t, mcptest.Start(t, s), nil)
		require.Error(t, c.NotifyRootsChanged(context.Background()))
	})
}

// A text block keeps its "text" member when the model answered nothing:
// the schema requires it, and a server that validates refuses the
// completion without it.
func TestSamplingContentEmptyText(t *testing.T) {
	b, err := json.Marshal(mcp.SampleResult{Role: "assistant", Model: "m", Content: mcp.SamplingContents{{Type: "text"}}})
	require.NoError(t, err)
	assert.Contains(t, string(b), `"content":{"type":"text","text":""}`)
	b, err = json.Marshal(mcp.SamplingContent{Type: "image", Data: "AA==", MIMEType: "image/png"})
	require.NoError(t, err)
	assert.NotContains(t, string(b), `"text"`, "only a text block carries text")
	var back mcp.SamplingContents
	require.NoError(t, json.Unmarshal([]byte(`{"type":"text","text":"hi"}`), &back))
	assert.Equal(t, mcp.SamplingContents{{Type: "text", Text: "hi"}}, back)
}

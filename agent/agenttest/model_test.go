package agenttest_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"go.uber.org/goleak"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/agenttest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func request(text string) *agent.ChatRequest {
	return &agent.ChatRequest{Messages: []agent.Message{agent.UserMessage(text)}}
}

func TestModelPlaysTurns(t *testing.T) {
	m := &agenttest.Model{Name: "mine", Turns: []agenttest.Turn{
		{Reasoning: "think", Text: "héllo wörld", ToolCalls: []agent.ToolCall{{Name: "a", Arguments: "{}"}, {ID: "x", Name: "b", Arguments: "{}"}}},
		{Text: "done", Usage: &agent.Usage{PromptTokens: 7}},
	}}
	var text, reasoning strings.Builder
	var pieces int
	reply, err := m.Chat(context.Background(), request("hi"), func(d agent.Delta) {
		pieces++
		text.WriteString(d.Text)
		reasoning.WriteString(d.Reasoning)
		if !utf8.ValidString(d.Text) {
			t.Errorf("a piece splits a character: %q", d.Text)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if text.String() != "héllo wörld" || reasoning.String() != "think" || pieces < 4 {
		t.Errorf("deltas: text %q reasoning %q in %d pieces", text.String(), reasoning.String(), pieces)
	}
	msg := reply.Message
	if msg.Role != agent.RoleAssistant || msg.Text() != "héllo wörld" || msg.Reasoning() != "think" {
		t.Errorf("message: %+v", msg)
	}
	calls := msg.ToolCalls()
	if len(calls) != 2 || calls[0].ID != "call_1_1" || calls[1].ID != "x" {
		t.Errorf("calls: %+v", calls)
	}
	if reply.Finish != agent.FinishToolCalls || reply.Model != "mine" || reply.Usage.PromptTokens == 0 {
		t.Errorf("reply: finish %q model %q usage %+v", reply.Finish, reply.Model, reply.Usage)
	}
	reply, err = m.Chat(context.Background(), request("again"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if reply.Finish != agent.FinishStop || reply.Usage.PromptTokens != 7 {
		t.Errorf("second reply: %+v", reply)
	}
	if err := m.Verify(); err != nil {
		t.Errorf("Verify: %v", err)
	}
	if info := m.ModelInfo(); info.Name != "mine" || info.Provider != agenttest.Provider {
		t.Errorf("ModelInfo: %+v", info)
	}
}

func TestModelVerify(t *testing.T) {
	t.Run("beyond the script", func(t *testing.T) {
		m := &agenttest.Model{}
		if _, err := m.Chat(context.Background(), request("hi"), nil); err == nil || !strings.Contains(err.Error(), "no scripted turn") {
			t.Fatalf("Chat: %v", err)
		}
		if err := m.Verify(); err == nil || !strings.Contains(err.Error(), "no scripted turn") {
			t.Errorf("Verify: %v", err)
		}
	})
	t.Run("unplayed", func(t *testing.T) {
		m := &agenttest.Model{Turns: []agenttest.Turn{agenttest.Answer("a"), agenttest.Answer("b")}}
		if _, err := m.Chat(context.Background(), request("hi"), nil); err != nil {
			t.Fatal(err)
		}
		if err := m.Verify(); err == nil || !strings.Contains(err.Error(), "1 of 2") {
			t.Errorf("Verify: %v", err)
		}
	})
	t.Run("expectation", func(t *testing.T) {
		wrong := errors.New("wrong question")
		m := &agenttest.Model{Turns: []agenttest.Turn{{Text: "never", Expect: func(req *agent.ChatRequest) error {
			if req.Messages[0].Text() != "right" {
				return wrong
			}
			return nil
		}}}}
		var deltas int
		_, err := m.Chat(context.Background(), request("hi"), func(agent.Delta) { deltas++ })
		if !errors.Is(err, wrong) || deltas != 0 {
			t.Fatalf("Chat: %v after %d deltas", err, deltas)
		}
		if err := m.Verify(); !errors.Is(err, wrong) {
			t.Errorf("Verify: %v", err)
		}
	})
}

func TestModelFails(t *testing.T) {
	limited := &agent.ModelError{Kind: agent.ErrRateLimited, RetryAfter: time.Second}
	m := &agenttest.Model{Turns: []agenttest.Turn{{Text: "half", Err: limited}}}
	var text string
	_, err := m.Chat(context.Background(), request("hi"), func(d agent.Delta) { text += d.Text })
	if !errors.Is(err, agent.ErrRateLimited) || text != "half" {
		t.Errorf("Chat: %v after %q", err, text)
	}
}

func TestModelContextEnds(t *testing.T) {
	t.Run("delay", func(t *testing.T) {
		m := &agenttest.Model{Turns: []agenttest.Turn{{Text: "late", Delay: time.Hour}}}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := m.Chat(ctx, request("hi"), nil); !errors.Is(err, context.Canceled) {
			t.Errorf("Chat: %v", err)
		}
	})
	t.Run("delay passes", func(t *testing.T) {
		m := &agenttest.Model{Turns: []agenttest.Turn{{Text: "late", Delay: time.Millisecond}}}
		reply, err := m.Chat(context.Background(), request("hi"), nil)
		if err != nil || reply.Message.Text() != "late" {
			t.Errorf("Chat: %v, %v", reply, err)
		}
	})
	t.Run("hang", func(t *testing.T) {
		m := &agenttest.Model{Turns: []agenttest.Turn{{Text: "stalls", Hang: true}}}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		streamed := make(chan struct{})
		var once sync.Once
		go func() {
			_, err := m.Chat(ctx, request("hi"), func(agent.Delta) { once.Do(func() { close(streamed) }) })
			done <- err
		}()
		<-streamed
		select {
		case err := <-done:
			t.Fatalf("Chat returned before its context ended: %v", err)
		default:
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Chat: %v", err)
		}
	})
}

// The Model keeps a copy of each request, not the caller's.
func TestModelCopiesRequests(t *testing.T) {
	m := &agenttest.Model{Turns: []agenttest.Turn{agenttest.Answer("ok")}}
	req := &agent.ChatRequest{Messages: []agent.Message{{Role: agent.RoleUser, Parts: []agent.Part{{Kind: agent.PartImage, Data: []byte("png")}}}},
		Tools: []agent.ToolDef{{Name: "t", Parameters: []byte(`{"type":"object"}`)}}}
	if _, err := m.Chat(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	req.Messages[0].Parts[0].Data[0] = 'X'
	req.Tools[0].Parameters[0] = 'X'
	got := m.Requests()
	got[0].Tools[0].Name = "changed"
	again := m.Requests()[0]
	if string(again.Messages[0].Parts[0].Data) != "png" || string(again.Tools[0].Parameters) != `{"type":"object"}` || again.Tools[0].Name != "t" {
		t.Errorf("the recorded request changed: %+v", again)
	}
}

// Concurrent calls take the turns in turn, each once.
func TestModelConcurrent(t *testing.T) {
	const n = 16
	m := &agenttest.Model{}
	for range n {
		m.Turns = append(m.Turns, agenttest.Answer("x"))
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := m.Chat(context.Background(), request("hi"), func(agent.Delta) {})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if err := m.Verify(); err != nil || len(m.Requests()) != n {
		t.Errorf("Verify: %v, %d requests", err, len(m.Requests()))
	}
}

func TestModelChunkSmallerThanCharacter(t *testing.T) {
	m := &agenttest.Model{ChunkSize: 1, Turns: []agenttest.Turn{agenttest.Answer("é€")}}
	var got []string
	if _, err := m.Chat(context.Background(), request("hi"), func(d agent.Delta) { got = append(got, d.Text) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != "é" || got[1] != "€" {
		t.Errorf("pieces: %q", got)
	}
}

package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/agenttest"
	"git.rickub.com/bots-garden/mini-me/agent/openai"
	"git.rickub.com/bots-garden/mini-me/agent/openai/openaitest"
	"git.rickub.com/bots-garden/mini-me/config"
	"git.rickub.com/bots-garden/mini-me/permission"
)

// everyPart is a conversation with every kind of part, provider metadata,
// and the labels a conversation carries.
func everyPart() []agent.Message {
	result := agent.ToolResultPart("<tool_output>21.5</tool_output>")
	result.Structured = json.RawMessage(`{"temp":21.5}`)
	reasoning := agent.ReasoningPart("anthropic", "The user wants the weather.", "c2lnbmF0dXJl")
	reasoning.Metadata = map[string]json.RawMessage{"anthropic": json.RawMessage(`{"cache_control":{"type":"ephemeral"}}`)}
	call := agent.CallPart(agent.ToolCall{ID: "c1", Name: "weather_now", Arguments: `{"city":"Paris"}`})
	call.Metadata = map[string]json.RawMessage{"gemini": json.RawMessage(`{"thought_signature":"AAE="}`)}
	return []agent.Message{
		agent.SystemMessage("Be brief."),
		{Role: agent.RoleUser, Parts: []agent.Part{
			agent.TextPart("What is the weather here, and what is this?"),
			agent.ImagePart("image/png", []byte{0x89, 'P', 'N', 'G', 0, 1, 2}),
			agent.FilePart("notes.pdf", "application/pdf", []byte("%PDF-1.7")),
			{Kind: agent.PartImage, MediaType: "image/jpeg", URL: "https://example.test/sky.jpg"},
		}},
		{Role: agent.RoleAssistant, Parts: []agent.Part{
			reasoning,
			{Kind: agent.PartReasoning, Provider: "openai-responses", Signature: "gAAAAB-encrypted"}, // hidden reasoning
			agent.TextPart("Let me look."),
			call,
		}},
		{Role: agent.RoleTool, ToolCallID: "c1", Name: "weather_now", Server: "weather", Egress: config.EgressLocal, Parts: []agent.Part{result}},
		{Role: agent.RoleAssistant, Parts: agent.Parts("21.5 °C, and a PDF of notes."), Egress: config.EgressLocal},
	}
}

func TestConversationRoundTrip(t *testing.T) {
	msgs := everyPart()
	data, err := json.Marshal(msgs)
	require.NoError(t, err)
	var back []agent.Message
	require.NoError(t, json.Unmarshal(data, &back))
	assert.Equal(t, msgs, back, "decodes to the same value")
	again, err := json.Marshal(back)
	require.NoError(t, err)
	assert.Equal(t, string(data), string(again), "encodes to the same bytes")

	_, model := startLLM(t, openaitest.Turn{Text: "ok"})
	_, err = (&agent.Agent{Model: model}).Run(context.Background(), append(back, agent.UserMessage("thanks")))
	require.NoError(t, err, "the agent accepts it")
}

func TestMessageAccessors(t *testing.T) {
	msgs := everyPart()
	assert.Equal(t, "What is the weather here, and what is this?", msgs[1].Text())
	assert.Equal(t, "Let me look.", msgs[2].Text(), "neither reasoning nor calls")
	assert.Equal(t, "The user wants the weather.", msgs[2].Reasoning())
	assert.Equal(t, []agent.ToolCall{{ID: "c1", Name: "weather_now", Arguments: `{"city":"Paris"}`}}, msgs[2].ToolCalls())
	assert.Equal(t, "<tool_output>21.5</tool_output>", msgs[3].Text(), "a tool message's result")
	assert.Nil(t, msgs[4].ToolCalls())
	assert.Equal(t, []agent.Part{agent.TextPart("a"), agent.CallPart(agent.ToolCall{ID: "x", Name: "y"})}, agent.Parts("a", agent.ToolCall{ID: "x", Name: "y"}))
	assert.Nil(t, agent.Parts(""))
}

// A driver sends a reasoning part to the provider that wrote it only, and
// reads only its own metadata.
func TestPartSentTo(t *testing.T) {
	p := agent.ReasoningPart("anthropic", "hmm", "sig")
	p.Metadata = map[string]json.RawMessage{"anthropic": json.RawMessage(`1`), "gemini": json.RawMessage(`2`)}
	assert.True(t, p.SentTo("anthropic"))
	assert.False(t, p.SentTo("gemini"))
	assert.False(t, agent.ReasoningPart("", "hmm", "").SentTo(""), "a reasoning part that names no provider goes to none")
	assert.True(t, agent.TextPart("hi").SentTo("gemini"), "every other part goes to every provider")
	assert.Equal(t, json.RawMessage(`2`), p.MetadataFor("gemini"))
	assert.Nil(t, p.MetadataFor("openai"))
}

// Conversations stored by the release before parts decode into parts, and
// the agent carries them on; the egress labels still hold.
func TestLegacyConversationDecodes(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "legacy", "conversation.json"))
	require.NoError(t, err)
	var msgs []agent.Message
	require.NoError(t, json.Unmarshal(data, &msgs))
	want := []agent.Message{
		agent.SystemMessage("You are a careful assistant."),
		agent.UserMessage("what is issue 7 and what does my diary say?"),
		{Role: agent.RoleAssistant, Parts: agent.Parts("Let me look.",
			agent.ToolCall{ID: "c1", Name: "github_get_issue", Arguments: `{"number":7}`},
			agent.ToolCall{ID: "c2", Name: "notes_read", Arguments: `{"path":"diary"}`})},
		{Role: agent.RoleTool, ToolCallID: "c1", Name: "github_get_issue", Server: "github",
			Parts: []agent.Part{agent.ToolResultPart("<tool_output server=\"github\" tool=\"get_issue\">\nget_issue got {\"number\":7}\n</tool_output>")}},
		{Role: agent.RoleTool, ToolCallID: "c2", Name: "notes_read", Server: "notes", Egress: config.EgressLocal,
			Parts: []agent.Part{agent.ToolResultPart("<tool_output server=\"notes\" tool=\"read\">\nread got {\"path\":\"diary\"}\n</tool_output>")}},
		{Role: agent.RoleAssistant, Parts: agent.Parts("Issue 7 is open; your diary says to call Bob."), Egress: config.EgressLocal},
	}
	assert.Equal(t, want, msgs)

	// A hosted model is sent neither the local-only output nor the reply
	// that quotes it.
	llm, model := startLLM(t, openaitest.Turn{Text: "ok"})
	_, err = (&agent.Agent{Model: remote{model}}).Run(context.Background(), append(msgs, agent.UserMessage("and now?")))
	require.NoError(t, err)
	body := string(llm.Requests()[0].Body)
	assert.NotContains(t, body, "diary says")
	assert.NotContains(t, body, `read got`)
	assert.Contains(t, body, "get_issue got", "the output of a server that is not local-only is sent")
}

func TestMessageBothFormsRefused(t *testing.T) {
	var m agent.Message
	err := json.Unmarshal([]byte(`{"role":"user","content":"a","parts":[{"kind":"text","text":"b"}]}`), &m)
	assert.ErrorContains(t, err, "both parts and content")
}

func TestRunRefusesMisplacedParts(t *testing.T) {
	_, model := startLLM(t)
	img := agent.ImagePart("image/png", []byte{1})
	tests := []struct {
		name string
		msgs []agent.Message
		err  string
	}{
		{"image from the assistant", []agent.Message{agent.UserMessage("x"), {Role: agent.RoleAssistant, Parts: []agent.Part{img}}, agent.UserMessage("y")},
			"message 1: part 0: a assistant message cannot hold a image part"},
		{"reasoning from the user", []agent.Message{{Role: agent.RoleUser, Parts: []agent.Part{agent.ReasoningPart("p", "t", "")}}}, "cannot hold a reasoning part"},
		{"unknown kind", []agent.Message{{Role: agent.RoleUser, Parts: []agent.Part{{Kind: "video"}}}}, `unknown kind "video"`},
		{"empty image", []agent.Message{{Role: agent.RoleUser, Parts: []agent.Part{{Kind: agent.PartImage}}}}, "image has neither data nor url"},
		{"text in a system message is the only kind", []agent.Message{{Role: agent.RoleSystem, Parts: []agent.Part{img}}}, "a system message cannot hold a image part"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := (&agent.Agent{Model: model}).Run(context.Background(), tt.msgs)
			require.ErrorContains(t, err, tt.err)
			assert.Equal(t, agent.StopError, res.Stop)
		})
	}
}

// A paused State written by the release before parts resumes.
func TestLegacyStateResumes(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "legacy", "state.json"))
	require.NoError(t, err)
	var st agent.State
	require.NoError(t, json.Unmarshal(data, &st))
	require.Equal(t, 1, st.Version)
	require.Len(t, st.Pending, 2)
	assert.Equal(t, agent.ToolCall{ID: "c2", Name: "files_write", Arguments: `{"path":"b","text":"hi"}`}, st.Pending[0].Call)

	mcp, srv := filesServer(t)
	r := newResumer(t, srv, openaitest.Turn{Text: "b written, c kept"})
	got, err := r.agent.Resume(context.Background(), &st, map[string]permission.Decision{
		st.Pending[0].ID: {Verdict: permission.AllowOnce},
		st.Pending[1].ID: {Verdict: permission.Deny, Reason: "keep c"},
	})
	require.NoError(t, err)
	assert.Equal(t, agent.StopAnswer, got.Stop)
	assert.Equal(t, "b written, c kept", got.Answer)
	assert.Equal(t, []string{`write {"path":"b","text":"hi"}`}, toolCalls(mcp), "only the approved call ran")
	held := toolMessages(got.Messages)
	assert.Contains(t, held["c2"], "write b done")
	assert.Contains(t, held["c3"], "keep c")
}

// signingModel stands for a provider that, as Claude and Gemini do, signs
// its reasoning and requires it back, unchanged, with the calls it made:
// it fails a request whose assistant messages do not carry, for each of
// its turns, the reasoning part it wrote with its signature. It calls
// files_read, then files_write (which the host defers), then answers.
// The first skip assistant messages of a conversation are not its turns.
type signingModel struct {
	skip int
	mu   sync.Mutex
	seen []string // the providers of the reasoning parts of others it was sent
}

const signingProvider = "signing"

func sign(text string) string { return fmt.Sprintf("sig(%d:%s)", len(text), text) }

func (m *signingModel) Chat(_ context.Context, req *agent.ChatRequest, onDelta func(agent.Delta)) (*agent.Reply, error) {
	turn, skip := 0, m.skip
	for _, msg := range req.Messages {
		if msg.Role != agent.RoleAssistant {
			continue
		}
		if skip > 0 {
			skip--
		} else {
			turn++
		}
		var mine []agent.Part
		for _, p := range msg.Parts {
			switch {
			case p.SentTo(signingProvider) && p.Kind == agent.PartReasoning:
				mine = append(mine, p)
			case p.Kind == agent.PartReasoning:
				m.mu.Lock()
				m.seen = append(m.seen, p.Provider) // what a careless driver would send
				m.mu.Unlock()
			}
		}
		if turn == 0 {
			continue
		}
		want := fmt.Sprintf("turn %d: I should look at the files.", turn)
		if len(mine) != 1 || mine[0].Text != want || mine[0].Signature != sign(want) || string(mine[0].MetadataFor(signingProvider)) != `{"turn":`+fmt.Sprint(turn)+`}` {
			return nil, fmt.Errorf("signing model: assistant turn %d came back without its signed reasoning: %+v", turn, mine)
		}
	}
	turn++
	thinking := fmt.Sprintf("turn %d: I should look at the files.", turn)
	reasoning := agent.ReasoningPart(signingProvider, thinking, sign(thinking))
	reasoning.Metadata = map[string]json.RawMessage{signingProvider: json.RawMessage(fmt.Sprintf(`{"turn":%d}`, turn))}
	if onDelta != nil {
		onDelta(agent.Delta{Reasoning: thinking})
	}
	reply := &agent.Reply{Message: agent.Message{Role: agent.RoleAssistant, Parts: []agent.Part{reasoning}}, Finish: agent.FinishToolCalls}
	switch turn {
	case 1:
		reply.Message.Parts = append(reply.Message.Parts, agent.CallPart(agent.ToolCall{ID: "r1", Name: "files_read", Arguments: `{"path":"a"}`}))
	case 2:
		reply.Message.Parts = append(reply.Message.Parts, agent.CallPart(agent.ToolCall{ID: "w1", Name: "files_write", Arguments: `{"path":"b"}`}))
	default:
		reply.Message.Parts = append(reply.Message.Parts, agent.TextPart("a read, b written"))
		reply.Finish = agent.FinishStop
	}
	return reply, nil
}

// A reasoning model's signed state survives a multi-turn tool-using run,
// a pause for approval, the State's trip through JSON and Resume by
// another Agent; a reasoning part of another provider in the conversation
// reaches the Model (it is the driver's to drop, with Part.SentTo) and is
// kept.
func TestReasoningSurvivesResume(t *testing.T) {
	mcp, srv := filesServer(t)
	foreign := agent.ReasoningPart("other", "their thoughts", "their-signature")
	msgs := []agent.Message{
		agent.UserMessage("earlier question"),
		{Role: agent.RoleAssistant, Parts: []agent.Part{foreign, agent.TextPart("earlier answer")}},
		agent.UserMessage("tidy the files"),
	}
	model := &signingModel{skip: 1} // the earlier answer is not its turn
	rec := &recorder{}
	a := &agent.Agent{Model: model, Tools: discover(t, srv), Policy: permission.NewPolicy(webHost)}
	res, err := a.RunStream(context.Background(), msgs, rec.on)
	require.ErrorIs(t, err, agent.ErrPendingApproval, "%v", err)
	assert.Contains(t, reasoningDeltas(rec), "turn 2: I should look at the files.", "reasoning is shown as it streams")
	data, err := json.Marshal(res.Pending)
	require.NoError(t, err)
	var st agent.State
	require.NoError(t, json.Unmarshal(data, &st))

	b := &agent.Agent{Model: &signingModel{skip: 1}, Tools: discover(t, srv), Policy: permission.NewPolicy(webHost)}
	got, err := b.Resume(context.Background(), &st, allowEvery(&st))
	require.NoError(t, err)
	assert.Equal(t, "a read, b written", got.Answer)
	assert.Equal(t, []string{`read {"path":"a"}`, `write {"path":"b"}`}, toolCalls(mcp))
	assert.Equal(t, foreign, got.Messages[1].Parts[0], "the host's conversation keeps the other provider's reasoning")
	assert.Equal(t, "turn 3: I should look at the files.", got.Messages[len(got.Messages)-1].Reasoning(), "the answer keeps its reasoning")
	assert.Equal(t, []string{"other", "other"}, model.seen, "sent to the model, which must drop it")
}

func reasoningDeltas(r *recorder) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, e := range r.events {
		if d, ok := e.(*agent.TextDelta); ok {
			b.WriteString(d.Reasoning)
		}
	}
	return b.String()
}

// The OpenAI-compatible driver keeps the reasoning a server sends, in a
// part of its own, and gives it back in the member the server used; it
// sends no reasoning of another provider.
func TestOpenAIReasoningRoundTrip(t *testing.T) {
	forWires(t, func(t *testing.T, w wire) {
		llm, model := w.start(t,
			openaitest.Turn{Reasoning: "I need the time.", ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "clock", Arguments: `{}`}}},
			openaitest.Turn{Text: "It is noon."})
		clock, err := agent.NewFunc("clock", "Tells the time", func(context.Context, struct{}) (string, error) { return "12:00", nil })
		require.NoError(t, err)
		msgs := []agent.Message{agent.UserMessage("time?")}
		msgs = append(msgs, agent.Message{Role: agent.RoleAssistant, Parts: []agent.Part{agent.ReasoningPart("anthropic", "secret thoughts", "sig"), agent.TextPart("Hello.")}},
			agent.UserMessage("and the time?"))
		res, err := (&agent.Agent{Model: model, Funcs: []*agent.Func{clock}, Policy: allowAll()}).Run(context.Background(), msgs)
		require.NoError(t, err)
		reply := res.Messages[3]
		assert.Equal(t, "I need the time.", reply.Reasoning())
		require.Equal(t, agent.PartReasoning, reply.Parts[0].Kind)
		assert.Equal(t, "openai-compatible", reply.Parts[0].Provider)

		member := "reasoning_content"
		if w.dialect == openaitest.DialectOllama {
			member = "reasoning"
		}
		body := string(llm.Requests()[1].Body)
		assert.Contains(t, body, `"`+member+`":"I need the time."`, "given back in the member it came in")
		assert.NotContains(t, body, "secret thoughts", "another provider's reasoning is not sent")
		assert.NotContains(t, string(llm.Requests()[0].Body), "secret thoughts")
	})
}

// captured is an http.RoundTripper that keeps the request body and
// answers with a fixed turn.
type captured struct {
	mu   sync.Mutex
	body []byte
}

func (c *captured) RoundTrip(r *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.body = body
	c.mu.Unlock()
	const answer = `{"choices":[{"index":0,"message":{"role":"assistant","content":"a cat"},"finish_reason":"stop"}],` +
		`"usage":{"prompt_tokens":120,"completion_tokens":30,"total_tokens":150,"prompt_tokens_details":{"cached_tokens":100},"completion_tokens_details":{"reasoning_tokens":20}}}`
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(answer)), Request: r}, nil
}

// A user's image and file go to an OpenAI-compatible server as content
// parts; the usage's cache and reasoning details are read.
func TestOpenAIUserMedia(t *testing.T) {
	rt := &captured{}
	m := &openai.Model{BaseURL: "http://model.test/v1", NoStream: true, HTTPClient: &http.Client{Transport: rt}}
	req := &agent.ChatRequest{Messages: []agent.Message{{Role: agent.RoleUser, Parts: []agent.Part{
		agent.TextPart("What is this?"),
		agent.ImagePart("image/png", []byte("png!")),
		agent.FilePart("a.pdf", "application/pdf", []byte("pdf!")),
		{Kind: agent.PartImage, URL: "https://example.test/cat.jpg"},
	}}}}
	reply, err := m.Chat(context.Background(), req, nil)
	require.NoError(t, err)
	var sent struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(rt.body, &sent))
	assert.JSONEq(t, `[{"type":"text","text":"What is this?"},
		{"type":"image_url","image_url":{"url":"data:image/png;base64,cG5nIQ=="}},
		{"type":"file","file":{"filename":"a.pdf","file_data":"data:application/pdf;base64,cGRmIQ=="}},
		{"type":"image_url","image_url":{"url":"https://example.test/cat.jpg"}}]`, string(sent.Messages[0].Content))
	assert.Equal(t, agent.Usage{PromptTokens: 120, CompletionTokens: 30, TotalTokens: 150, CacheReadTokens: 100, ReasoningTokens: 20}, reply.Usage)
	assert.True(t, bytes.Contains(rt.body, []byte(`"stream":false`)))
}

func TestUsageCost(t *testing.T) {
	u := agent.Usage{PromptTokens: 1_000_000, CacheReadTokens: 600_000, CacheWriteTokens: 100_000, CompletionTokens: 200_000, ReasoningTokens: 50_000}
	p := agent.Prices{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}
	// 300k plain at 3, 600k read at 0.3, 100k written at 3.75, 200k out at 15.
	assert.InDelta(t, 0.9+0.18+0.375+3.0, u.Cost(p), 1e-9)
	assert.Zero(t, u.Cost(agent.Prices{}), "no prices, no cost")
}

// The egress rule covers reasoning: a local model's reasoning after it
// read a local-only server's output is withheld from a hosted model with
// the rest of its reply, though both speak the OpenAI-compatible wire
// (the same provider, to which the driver sends its reasoning back).
func TestEgressWithholdsReasoning(t *testing.T) {
	_, private := startMCP(t, "notes", mcpTool(readDef, echoTool(readDef)))
	private.Egress = config.EgressLocal
	w := wire{dialect: openaitest.DialectLlamaCpp}
	_, local := w.start(t, openaitest.Turn{ToolCalls: []openaitest.ToolCall{{ID: "c", Name: "notes_read", Arguments: `{"path":"diary"}`}}},
		openaitest.Turn{Reasoning: "The diary says Bob.", Text: "Call Bob."})
	require.True(t, local.Local())
	res, err := (&agent.Agent{Model: local, Tools: discover(t, private), Policy: allowAll()}).Run(context.Background(), user("what does my note say?"))
	require.NoError(t, err)
	require.Equal(t, "The diary says Bob.", res.Messages[3].Reasoning())

	llm, model := w.start(t, openaitest.Turn{Text: "ok"})
	_, err = (&agent.Agent{Model: remote{model}}).Run(context.Background(), append(res.Messages, agent.UserMessage("and now?")))
	require.NoError(t, err)
	assert.NotContains(t, string(llm.Requests()[0].Body), "Bob")
}

// FuzzMessageJSON: whatever a stored conversation holds, decoding never
// panics, and what is encoded again decodes to the same value and bytes.
func FuzzMessageJSON(f *testing.F) {
	for _, name := range []string{"conversation.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", "legacy", name))
		require.NoError(f, err)
		f.Add(data)
	}
	data, err := json.Marshal(everyPart())
	require.NoError(f, err)
	f.Add(data)
	f.Add([]byte(`[{"role":"tool","content":""},{"role":"assistant","content":"","tool_calls":[]}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var msgs []agent.Message
		if json.Unmarshal(data, &msgs) != nil {
			return
		}
		once, err := json.Marshal(msgs)
		require.NoError(t, err)
		var back []agent.Message
		require.NoError(t, json.Unmarshal(once, &back))
		twice, err := json.Marshal(back)
		require.NoError(t, err)
		require.Equal(t, string(once), string(twice))
	})
}

// The egress rule covers provider metadata: a call kept (its arguments
// blanked) in a message withheld from a hosted model keeps none of the
// metadata the local model's provider gave it, which a hosted model of the
// same provider would read.
func TestEgressWithholdsCallMetadata(t *testing.T) {
	meta := map[string]json.RawMessage{"same-provider": json.RawMessage(`{"item":"secret-item"}`)}
	call := func(id string) agent.Part {
		p := agent.CallPart(agent.ToolCall{ID: id, Name: "notes_read", Arguments: `{"path":"secret-path"}`})
		p.Metadata = meta
		return p
	}
	conv := []agent.Message{
		agent.UserMessage("read my notes"),
		{Role: agent.RoleAssistant, Parts: []agent.Part{call("c1")}}, // unlabelled: its call's output is local-only
		{Role: agent.RoleTool, ToolCallID: "c1", Server: "notes", Egress: config.EgressLocal, Parts: []agent.Part{agent.ToolResultPart("secret-diary")}},
		{Role: agent.RoleAssistant, Egress: config.EgressLocal, Parts: []agent.Part{agent.TextPart("secret-answer"), call("c2")}},
		{Role: agent.RoleTool, ToolCallID: "c2", Server: "notes", Egress: config.EgressLocal, Parts: []agent.Part{agent.ToolResultPart("secret-diary")}},
		agent.UserMessage("and now?"),
	}
	model := &agenttest.Model{Name: "hosted", Turns: []agenttest.Turn{agenttest.Answer("ok")}}
	_, err := (&agent.Agent{Model: model}).Run(context.Background(), conv)
	require.NoError(t, err)
	sent, err := json.Marshal(model.Requests()[0].Messages)
	require.NoError(t, err)
	assert.NotContains(t, string(sent), "secret")
	assert.Contains(t, string(sent), `"id":"c2"`, "the calls are kept, so that their tool messages answer one")
}

// A leading system message labelled local-only, folded into the system
// prompt, is withheld from a hosted model like any labelled message.
func TestEgressWithholdsLabelledSystemMessage(t *testing.T) {
	sys := agent.SystemMessage("The vault code is secret-code.")
	sys.Egress = config.EgressLocal
	for _, local := range []bool{false, true} {
		model := &agenttest.Model{Name: "m", Claims: agent.Capabilities{Local: local}, Turns: []agenttest.Turn{agenttest.Answer("ok")}}
		res, err := (&agent.Agent{Model: model}).Run(context.Background(), []agent.Message{sys, agent.UserMessage("hi")})
		require.NoError(t, err)
		system := model.Requests()[0].Messages[0].Text()
		if local {
			assert.Contains(t, system, "secret-code", "a local model is sent it")
			continue
		}
		assert.NotContains(t, system, "secret-code")
		assert.Contains(t, fmt.Sprint(res.Warnings), "local-only")
	}
}

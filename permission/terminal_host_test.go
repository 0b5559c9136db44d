package permission_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/permission"
)

// converse types each line once the terminal shows its next prompt: the
// i-th line answers the i-th "> " written.
func converse(t *testing.T, w *io.PipeWriter, scr *screen, lines ...string) {
	t.Helper()
	for i, line := range lines {
		scr.waitFor(t, i+1, "> ")
		_, err := fmt.Fprintln(w, line)
		require.NoError(t, err)
	}
}

func samplingRequest() permission.Request {
	return permission.Request{Server: "docs", Tool: permission.SamplingTool, Sampling: &permission.Sampling{
		SystemPrompt: "You are \x1b[31mred",
		Messages:     []permission.SamplingMessage{{Role: "user", Text: "Summarise the file"}},
		MaxTokens:    200, Model: "qwen", Tools: []string{"search"},
	}}
}

func TestTerminalSampling(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines []string
		want  permission.Decision
	}{
		{"once, reviewed", []string{"maybe", "y"}, permission.Decision{Verdict: permission.AllowOnce, Review: true}},
		{"always", []string{"a"}, permission.Decision{Verdict: permission.AllowTool}},
		{"no", []string{"n too costly"}, permission.Decision{Verdict: permission.Deny, Reason: "too costly"}},
		{"edited", []string{"e", "Be brief.", "5000", "50"}, permission.Decision{Verdict: permission.AllowOnce, Review: true,
			Edited: &permission.Sampling{SystemPrompt: "Be brief.", Messages: samplingRequest().Sampling.Messages, MaxTokens: 50, Model: "qwen", Tools: []string{"search"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			term, w, scr := pipeTerminal(t)
			ch := approveAsync(context.Background(), term, samplingRequest())
			converse(t, w, scr, tc.lines...)
			got := await(t, ch)
			require.NoError(t, got.err)
			assert.Equal(t, tc.want, got.d)
			out := scr.String()
			assert.Contains(t, out, "A server asks to use your model (sampling)")
			assert.Contains(t, out, `You are \x1b[31mred`, "escaped")
			assert.NotContains(t, out, "\x1b")
			assert.Contains(t, out, "Summarise the file")
			assert.Contains(t, out, "max tokens:    200")
			assert.NotContains(t, out, "input:", "no size when none was measured")
			assert.Contains(t, out, "its tools:     search")
		})
	}
	// Issue 35 #6: the question shows what the request costs, and a long
	// list of tools is cut.
	t.Run("size shown", func(t *testing.T) {
		term, w, scr := pipeTerminal(t)
		req := samplingRequest()
		req.Sampling.InputBytes, req.Sampling.InputTokens = 1<<20, 349526
		for i := range 5000 {
			req.Sampling.Tools = append(req.Sampling.Tools, fmt.Sprintf("tool_%04d", i))
		}
		ch := approveAsync(context.Background(), term, req)
		converse(t, w, scr, "n")
		require.NoError(t, await(t, ch).err)
		out := scr.String()
		assert.Contains(t, out, "input:         1.0 MiB, about 349526 tokens, sent to the model")
		assert.Contains(t, out, "max tokens:    200 in the answer")
		assert.Contains(t, out, "tool_0000, tool_0001")
		assert.NotContains(t, out, "tool_4999")
		assert.Less(t, len(out), 4000)
	})
	t.Run("completion edited", func(t *testing.T) {
		term, w, scr := pipeTerminal(t)
		req := samplingRequest()
		req.Sampling.Completion = "The file says hello."
		ch := approveAsync(context.Background(), term, req)
		converse(t, w, scr, "a", "e", "It says hi.")
		got := await(t, ch)
		require.NoError(t, got.err)
		require.NotNil(t, got.d.Edited)
		assert.Equal(t, permission.AllowOnce, got.d.Verdict)
		assert.Equal(t, "It says hi.", got.d.Edited.Completion)
		assert.Contains(t, scr.String(), "The file says hello.")
		assert.Contains(t, scr.String(), "Please answer y, n or e.", `"always" is no answer to a review`)
	})
	t.Run("input closed", func(t *testing.T) {
		term, w, scr := pipeTerminal(t)
		ch := approveAsync(context.Background(), term, samplingRequest())
		scr.waitFor(t, 1, "> ")
		require.NoError(t, w.Close())
		got := await(t, ch)
		require.NoError(t, got.err)
		assert.Equal(t, permission.Deny, got.d.Verdict)
	})
}

func TestPolicySampling(t *testing.T) {
	asked := 0
	approver := permission.ApproverFunc(func(_ context.Context, req permission.Request) (permission.Decision, error) {
		asked++
		if req.Sampling != nil {
			return permission.Decision{Verdict: permission.AllowServer}, nil
		}
		return permission.Decision{Verdict: permission.AllowServer}, nil
	})
	ctx := context.Background()
	t.Run("sampling auto mode allows without asking", func(t *testing.T) {
		for _, opt := range []permission.Option{
			permission.WithServerSamplingMode("docs", permission.ModeAuto),
			permission.WithSamplingMode(permission.ModeAuto),
		} {
			asked = 0
			var events []permission.Event
			p := permission.NewPolicy(approver, opt, permission.WithAudit(func(e permission.Event) { events = append(events, e) }))
			d, err := p.Check(ctx, samplingRequest())
			require.NoError(t, err)
			assert.True(t, d.Allowed())
			assert.Zero(t, asked)
			require.Len(t, events, 1)
			assert.Equal(t, permission.SourceAuto, events[0].Source)
			assert.Equal(t, permission.ModeAuto, events[0].Mode, "the sampling mode is reported")
		}
	})
	// Issue 35 #6: auto for a server's tools is not auto for its sampling.
	t.Run("tools auto mode still asks about sampling", func(t *testing.T) {
		for _, opt := range []permission.Option{
			permission.WithServerMode("docs", permission.ModeAuto),
			permission.WithMode(permission.ModeAuto),
		} {
			asked = 0
			p := permission.NewPolicy(approver, opt)
			d, err := p.Check(ctx, samplingRequest())
			require.NoError(t, err)
			assert.True(t, d.Allowed())
			assert.Equal(t, 1, asked, "sampling is asked")
			d, err = p.Check(ctx, permission.Request{Server: "other", Tool: "read"})
			require.NoError(t, err)
			assert.True(t, d.Allowed())
		}
		asked = 0
		p := permission.NewPolicy(approver, permission.WithServerMode("docs", permission.ModeAuto),
			permission.WithServerSamplingMode("docs", permission.ModeAsk))
		_, err := p.Check(ctx, permission.Request{Server: "docs", Tool: "read"})
		require.NoError(t, err)
		assert.Zero(t, asked, "the tools' mode stands")
	})
	t.Run("tools and sampling are allowed apart", func(t *testing.T) {
		asked = 0
		p := permission.NewPolicy(approver)
		tool := permission.Request{Server: "docs", Tool: "read"}
		_, err := p.Check(ctx, tool) // "always every tool of docs"
		require.NoError(t, err)
		d, err := p.Check(ctx, samplingRequest())
		require.NoError(t, err)
		assert.True(t, d.Allowed())
		assert.Equal(t, 2, asked, "a server's tools allowed do not allow its sampling")
		_, err = p.Check(ctx, samplingRequest())
		require.NoError(t, err)
		assert.Equal(t, 2, asked, "its sampling is remembered")
		other := permission.Request{Server: "docs", Tool: "write"}
		_, err = p.Check(ctx, other)
		require.NoError(t, err)
		assert.Equal(t, 2, asked, "the tools allowance stands")
	})
	t.Run("review asks, remembers nothing", func(t *testing.T) {
		asked = 0
		var events []permission.Event
		p := permission.NewPolicy(approver, permission.WithAudit(func(e permission.Event) { events = append(events, e) }))
		req := samplingRequest()
		req.Sampling.Completion = "done"
		d, err := p.ReviewSampling(ctx, req)
		require.NoError(t, err)
		assert.True(t, d.Allowed())
		_, err = p.Check(ctx, samplingRequest())
		require.NoError(t, err)
		assert.Equal(t, 2, asked)
		require.Len(t, events, 2)
		assert.Equal(t, permission.SamplingTool, events[0].Tool)
	})
	t.Run("no approver denies", func(t *testing.T) {
		d, err := permission.NewPolicy(nil).Check(ctx, samplingRequest())
		require.NoError(t, err)
		assert.False(t, d.Allowed())
	})
}

// Issue 35 #13: a tool named like the sampling question never shares what
// the Policy remembers with the server's sampling, even with the
// changed-definition rule off (which used to tell them apart by chance).
func TestPolicySamplingKeyApart(t *testing.T) {
	ctx := context.Background()
	var asked []string
	approver := permission.ApproverFunc(func(_ context.Context, req permission.Request) (permission.Decision, error) {
		kind := "tool"
		if req.Sampling != nil {
			kind = "sampling"
		}
		asked = append(asked, kind)
		return permission.Decision{Verdict: permission.AllowTool}, nil
	})
	impostor := permission.Request{Server: "docs", Tool: permission.SamplingTool, PrefixedName: "docs_sampling/createMessage"}
	for _, order := range [][]permission.Request{{impostor, samplingRequest()}, {samplingRequest(), impostor}} {
		asked = nil
		p := permission.NewPolicy(approver, permission.WithConfirmChanged(false))
		for _, req := range order {
			d, err := p.Check(ctx, req) // "always"
			require.NoError(t, err)
			require.True(t, d.Allowed())
		}
		require.Len(t, asked, 2, "the second is asked: an allowance of the first does not cover it")
		assert.NotEqual(t, asked[0], asked[1])
		for _, req := range order {
			_, err := p.Check(ctx, req)
			require.NoError(t, err)
		}
		assert.Len(t, asked, 2, "each is remembered for itself")
	}
}

const formSchema = `{"type":"object","required":["name"],"properties":{
	"name":{"type":"string","title":"Your name"},
	"age":{"type":"integer","minimum":0,"default":30},
	"email":{"type":"string","format":"email"},
	"color":{"type":"string","enum":["r","g"],"enumNames":["Red","Green"]},
	"agree":{"type":"boolean","description":"Terms \u202eevil"},
	"tags":{"type":"array","maxItems":2,"items":{"anyOf":[{"const":"a","title":"Alpha"},{"const":"b","title":"Beta"}]}}}}`

func TestTerminalElicitForm(t *testing.T) {
	term, w, scr := pipeTerminal(t)
	type result struct {
		a   permission.ElicitAnswer
		err error
	}
	ch := make(chan result, 1)
	go func() {
		a, err := term.Elicit(context.Background(), permission.Elicitation{Server: "crm", Mode: "form", Message: "Who are you?", Schema: json.RawMessage(formSchema)})
		ch <- result{a, err}
	}()
	converse(t, w, scr,
		"y",
		"", "Ada", // name: required
		"-3", "", // age: out of range, then the default
		"not-an-address", "ada@example.com",
		"3", "2", // color: no such choice, then Green
		"maybe", "y", // agree
		"1,2,1", "1, b", // tags: too many, then two
		"y")
	r := <-ch
	require.NoError(t, r.err)
	assert.Equal(t, "accept", r.a.Action)
	got, _ := json.Marshal(r.a.Content)
	assert.JSONEq(t, `{"name":"Ada","age":30,"email":"ada@example.com","color":"g","agree":true,"tags":["a","b"]}`, string(got))
	out := scr.String()
	assert.Contains(t, out, "Server crm asks you for information")
	assert.Contains(t, out, "Your name (name) [string, required]")
	assert.Contains(t, out, "2) Green")
	assert.Contains(t, out, `Terms \u202eevil`)
	assert.Less(t, indexOf(out, "Your name"), indexOf(out, "age ["), "the schema's order")
}

// Issue 35 #15: a form's titles, default and choices are cut as
// descriptions are, and only the first choices are listed.
func TestTerminalElicitFormBounded(t *testing.T) {
	huge := strings.Repeat("T", 200_000)
	var values, names []string
	for i := range 5000 {
		values = append(values, fmt.Sprintf("v%04d", i))
		names = append(names, fmt.Sprintf("choice %04d ", i)+strings.Repeat("n", 100))
	}
	props := map[string]any{
		"pick":     map[string]any{"type": "string", "title": huge, "enum": values, "enumNames": names},
		"z" + huge: map[string]any{"type": "string", "format": huge, "title": huge, "default": huge}, // asked second: keys are sorted
	}
	schema, err := json.Marshal(map[string]any{"type": "object", "properties": props})
	require.NoError(t, err)
	term, w, scr := pipeTerminal(t)
	ch := make(chan permission.ElicitAnswer, 1)
	go func() {
		a, err := term.Elicit(context.Background(), permission.Elicitation{Server: "crm", Mode: "form", Message: "Pick", Schema: schema})
		assert.NoError(t, err)
		ch <- a
	}()
	converse(t, w, scr, "y", "4999", "", "c")
	assert.Equal(t, "cancel", (<-ch).Action)
	out := scr.String()
	t.Logf("%d bytes shown", len(out))
	assert.Less(t, len(out), 12_000, "the form's question is bounded")
	assert.Contains(t, out, "20) choice 0019")
	assert.NotContains(t, out, "21) ")
	assert.Contains(t, out, "(4980 more choices not shown: type one's value)")
	assert.Contains(t, out, `"pick": "v4998"`, "a choice not shown may be typed")
	assert.Contains(t, out, "more bytes]", "says what it cut")
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

func TestTerminalElicitURL(t *testing.T) {
	for _, tc := range []struct {
		name, url, line, action, shown, warning string
	}{
		{"consent", "https://auth.example.com/start?x=1", "o", "accept", "site:    AUTH.EXAMPLE.COM", ""},
		{"decline", "https://auth.example.com/", "n", "decline", "AUTH.EXAMPLE.COM", ""},
		{"punycode", "https://xn--pypal-4ve.com/login", "c", "cancel", "XN--PYPAL-4VE.COM", "punycode"},
		{"plain http", "http://a.example/x", "c", "cancel", "A.EXAMPLE", "not encrypted"},
		{"control characters", "http://a.example/\x1b[2J", "c", "cancel", `http://a.example/\x1b[2J`, "does not parse"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			term, w, scr := pipeTerminal(t)
			ch := make(chan permission.ElicitAnswer, 1)
			go func() {
				a, err := term.Elicit(context.Background(), permission.Elicitation{Server: "bank", Mode: "url", Message: "Sign in", URL: tc.url})
				assert.NoError(t, err)
				ch <- a
			}()
			converse(t, w, scr, "what", tc.line)
			assert.Equal(t, tc.action, (<-ch).Action)
			out := scr.String()
			assert.Contains(t, out, tc.shown)
			assert.Contains(t, out, "It is not opened for you")
			assert.NotContains(t, out, "\x1b")
			if tc.warning != "" {
				assert.Contains(t, out, "WARNING: ")
				assert.Contains(t, out, tc.warning)
			} else {
				assert.NotContains(t, out, "WARNING")
			}
		})
	}
	t.Run("input closed cancels", func(t *testing.T) {
		term, w, _ := pipeTerminal(t)
		require.NoError(t, w.Close())
		a, err := term.Elicit(context.Background(), permission.Elicitation{Mode: "url", URL: "https://a.example/"})
		require.NoError(t, err)
		assert.Equal(t, "cancel", a.Action)
	})
}

func TestElicitationCheckAnswer(t *testing.T) {
	form := permission.Elicitation{Server: "crm", Mode: "form", Schema: json.RawMessage(formSchema)}
	for _, tc := range []struct {
		name, action, content, err string
	}{
		{"fits", "accept", `{"name":"Ada","age":3,"email":"a@b.example","color":"g","agree":false,"tags":["a"]}`, ""},
		{"required left to no default", "accept", `{"age":3}`, `required field "name" missing`},
		{"a default fills an omitted field", "accept", `{"name":"Ada"}`, ""},
		{"unknown field", "accept", `{"name":"Ada","admin":true}`, `field "admin" is not in the form`},
		{"wrong type", "accept", `{"name":7}`, `field "name": not a string`},
		{"integer", "accept", `{"name":"Ada","age":2.5}`, `field "age": not a integer`},
		{"minimum", "accept", `{"name":"Ada","age":-1}`, `field "age": out of range`},
		{"format", "accept", `{"name":"Ada","email":"nope"}`, `field "email": not a valid email`},
		{"enum", "accept", `{"name":"Ada","color":"blue"}`, `field "color": choose a number from 1 to 2`},
		{"boolean", "accept", `{"name":"Ada","agree":"yes"}`, `field "agree": not a boolean`},
		{"items", "accept", `{"name":"Ada","tags":["a","z"]}`, `field "tags": choose a number`},
		{"max items", "accept", `{"name":"Ada","tags":["a","b","a"]}`, `field "tags": wrong number of choices`},
		{"not a list", "accept", `{"name":"Ada","tags":"a"}`, `field "tags": not a list of choices`},
		{"decline needs nothing", "decline", `{"admin":true}`, ""},
		{"unknown action", "maybe", `{}`, `action "maybe" is not accept, decline or cancel`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var content map[string]any
			require.NoError(t, json.Unmarshal([]byte(tc.content), &content))
			err := form.CheckAnswer(permission.ElicitAnswer{Action: tc.action, Content: content})
			if tc.err == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
		})
	}
	t.Run("lengths", func(t *testing.T) {
		e := permission.Elicitation{Mode: "form", Schema: json.RawMessage(`{"type":"object","properties":{"code":{"type":"string","minLength":2,"maxLength":3}}}`)}
		assert.ErrorContains(t, e.CheckAnswer(permission.ElicitAnswer{Action: "accept", Content: map[string]any{"code": "ab€d"}}), "wrong length")
		assert.NoError(t, e.CheckAnswer(permission.ElicitAnswer{Action: "accept", Content: map[string]any{"code": "a€"}}))
	})
	t.Run("url mode sends no content", func(t *testing.T) {
		e := permission.Elicitation{Mode: "url", URL: "https://x.example/"}
		assert.NoError(t, e.CheckAnswer(permission.ElicitAnswer{Action: "accept"}))
	})
}

package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"git.rickub.com/bots-garden/mini-me/agent"
)

// The fuzz targets of what the driver reads from a model server: stream
// chunks and Retry-After. Their seeds run with every go test.

// chunkReader returns s in chunks of size bytes.
type chunkReader struct {
	s    string
	size int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	n := min(c.size, len(p), len(c.s))
	copy(p, c.s[:n])
	c.s = c.s[n:]
	return n, nil
}

// streamOf makes the SSE body of a stream that sends each line of chunks
// as the data of one event, then "[DONE]" if done.
func streamOf(chunks string, done bool) string {
	var b strings.Builder
	for _, line := range strings.Split(chunks, "\n") {
		b.WriteString("data: " + strings.ReplaceAll(line, "\r", " ") + "\n\n")
	}
	if done {
		b.WriteString("data: [DONE]\n\n")
	}
	return b.String()
}

// streamResult is what readStream made of a stream, as comparable text,
// and what it passed to onDelta.
type streamResult struct {
	reply  *agent.Reply
	err    error
	deltas []agent.Delta
}

func readChunks(t *testing.T, body string, size, max int) streamResult {
	t.Helper()
	m := &Model{IdleTimeout: -1}
	var r streamResult
	r.reply, r.err = m.readStream(context.Background(), &chunkReader{s: body, size: size}, http.StatusOK, max, func(d agent.Delta) { r.deltas = append(r.deltas, d) })
	if (r.reply == nil) == (r.err == nil) {
		t.Fatalf("reply %+v with error %v", r.reply, r.err)
	}
	return r
}

// FuzzStreamAssembler feeds sequences of chat.completion.chunk events to
// the stream reader, in any byte chunking, with and without "[DONE]". The
// result does not depend on the chunking; a chunk that is not JSON is an
// error, never skipped; a turn put together holds exactly the text of
// every delta of the first choice, each call with a name and an id unique
// in the turn, and no more than the size limit.
func FuzzStreamAssembler(f *testing.F) {
	for _, name := range []string{"openai_text.sse", "openai_tool_calls.sse", "ollama_text.sse", "ollama_tool_calls.sse", "llamacpp_tool_calls.sse", "llamacpp_reasoning.sse", "llamacpp_error.sse"} {
		data, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		var lines []string
		for _, l := range strings.Split(string(data), "\n") {
			if d, ok := strings.CutPrefix(l, "data: "); ok && d != "[DONE]" {
				lines = append(lines, d)
			}
		}
		f.Add(strings.Join(lines, "\n"), true, byte(7), uint16(0))
	}
	for _, s := range []string{
		`{"choices":[{"index":0,"delta":{"content":"Hel"}}]}` + "\n" + `{"choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{\"x\""}}]}}]}` + "\n" +
			`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":":1}"}}]}}]}` + "\n" +
			`{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"a","function":{"name":"g","arguments":{"y":2}}}]},"finish_reason":"tool_calls"}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"function":{"name":"f","arguments":"{}"}},{"function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`,
		`{"choices":[{"index":1,"delta":{"content":"other choice"}},{"index":0,"delta":{"reasoning_content":"hmm","content":"x"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3}}`,
		`{"error":{"message":"boom","code":500}}`,
		`{"choices":[{"delta":{"content":"x"}}]}` + "\n" + `not json`,
		`{"choices":[]}` + "\n\n" + `{"choices":[{"delta":{},"finish_reason":"length"}]}`,
	} {
		f.Add(s, true, byte(1), uint16(0))
		f.Add(s, false, byte(3), uint16(40))
	}
	f.Fuzz(func(t *testing.T, chunks string, done bool, size byte, limit uint16) {
		max := DefaultMaxResponseSize
		if limit > 0 {
			max = int(limit)
		}
		body := streamOf(chunks, done)
		whole := readChunks(t, body, len(body)+1, max)
		bytewise := readChunks(t, body, 1+int(size%16), max)
		if fmt.Sprintf("%+v %v %+v", whole.reply, whole.err, whole.deltas) != fmt.Sprintf("%+v %v %+v", bytewise.reply, bytewise.err, bytewise.deltas) {
			t.Fatalf("the chunking changes the result:\n%+v %v\n%+v %v", whole.reply, whole.err, bytewise.reply, bytewise.err)
		}
		// What the chunks say, decoded one by one.
		var text, reasoning strings.Builder
		var finish agent.FinishReason
		args, names := 0, 0
		malformed, sawDone := false, false
		for _, line := range strings.Split(chunks, "\n") {
			data := strings.TrimSpace(strings.ReplaceAll(line, "\r", " "))
			if data == "[DONE]" {
				sawDone = true
				break
			}
			if data == "" {
				continue
			}
			var w wireResponse
			if json.Unmarshal([]byte(data), &w) != nil {
				malformed = true
				break
			}
			if hasError(w.Error) {
				break
			}
			for _, c := range w.Choices {
				if c.Index != 0 {
					continue
				}
				text.WriteString(c.Delta.Content)
				reasoning.WriteString(c.Delta.ReasoningContent + c.Delta.Reasoning)
				for _, tc := range c.Delta.ToolCalls {
					a, _ := argumentsText(tc.Function.Arguments)
					args += len(a)
					if tc.Function.Name != "" {
						names++
					}
				}
				if c.FinishReason != nil && *c.FinishReason != "" {
					finish = agent.FinishReason(*c.FinishReason)
				}
			}
		}
		r := whole.reply
		if malformed && whole.err == nil {
			t.Fatalf("a malformed chunk was skipped: %+v", r)
		}
		if whole.err != nil {
			return
		}
		var deltaText, deltaReasoning strings.Builder
		for _, d := range whole.deltas {
			if d.Text == "" && d.Reasoning == "" {
				t.Fatalf("empty delta")
			}
			deltaText.WriteString(d.Text)
			deltaReasoning.WriteString(d.Reasoning)
		}
		if r.Message.Text() != text.String() || deltaText.String() != text.String() || deltaReasoning.String() != reasoning.String() {
			t.Fatalf("text %q, deltas %q and %q, want %q and %q", r.Message.Text(), deltaText.String(), deltaReasoning.String(), text.String(), reasoning.String())
		}
		if r.Finish != finish || finish == "" && !done && !sawDone {
			t.Fatalf("finish %q, want %q", r.Finish, finish)
		}
		ids := map[string]bool{}
		total := len(r.Message.Text()) + len(reasoning.String())
		gotArgs := 0
		for _, c := range r.Message.ToolCalls() {
			if c.Name == "" || c.ID == "" || ids[c.ID] {
				t.Fatalf("bad or repeated call %+v in %+v", c, r.Message.ToolCalls())
			}
			ids[c.ID] = true
			gotArgs += len(c.Arguments)
			total += len(c.Name) + len(c.Arguments)
		}
		if gotArgs != args || len(r.Message.ToolCalls()) > names {
			t.Fatalf("calls %+v hold %d bytes of arguments, the chunks %d", r.Message.ToolCalls(), gotArgs, args)
		}
		if total > max {
			t.Fatalf("a turn of %d bytes at a limit of %d", total, max)
		}
	})
}

// FuzzParseRetryAfter checks that a Retry-After header, seconds or a date,
// gives a wait that is never negative, that a number of seconds is read
// exactly, and that a retry never waits longer than allowed.
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"0", "5", " 120 ", "-1", "+5", "1.5", "007", "", "abc",
		"Wed, 21 Oct 2015 07:28:00 GMT", "Sun, 06 Nov 2094 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		d, ok := parseRetryAfter(v)
		if !ok {
			if d != 0 {
				t.Fatalf("%q: no wait, yet %v", v, d)
			}
			return
		}
		if d < 0 {
			t.Fatalf("%q: negative wait %v", v, d)
		}
		if secs, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && secs >= 0 && secs < 1<<32 && d != time.Duration(secs)*time.Second {
			t.Fatalf("%q: %v", v, d)
		}
		m := &Model{}
		for _, code := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
			wait, retry := m.retryWait(&APIError{StatusCode: code, RetryAfter: d, hasRetryAfter: ok}, 0)
			if retry && (wait < 0 || wait > DefaultMaxRetryWait) {
				t.Fatalf("%q: status %d retried after %v", v, code, wait)
			}
		}
	})
}

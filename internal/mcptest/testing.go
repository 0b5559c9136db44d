package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// The helpers below are the building blocks the tests of several packages
// share: a server started for one test, the usual tools, prompts,
// resources and skills, and the stdio test server built from source.

// Start starts s and closes it when t ends; it returns the server's URL.
func Start(t testing.TB, s *Server) string {
	t.Helper()
	url := s.Start()
	t.Cleanup(s.Close)
	return url
}

// ClosedURL is the URL of a port nothing listens on.
func ClosedURL(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return "http://" + addr + "/mcp"
}

// Count counts the server's requests of one method.
func (s *Server) Count(method string) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Method == method {
			n++
		}
	}
	return n
}

// LastProgressToken returns the progress token of the last request the
// server saw.
func (s *Server) LastProgressToken() any {
	reqs := s.Requests()
	var p struct {
		Params struct {
			Meta struct {
				Token any `json:"progressToken"`
			} `json:"_meta"`
		} `json:"params"`
	}
	_ = json.Unmarshal(reqs[len(reqs)-1].Body, &p)
	return p.Params.Meta.Token
}

// TextResult is a tool result of one text block.
func TextResult(text string) map[string]any {
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}
}

// EchoTool is the read-only tool "echo", which answers with the text of
// its "text" argument.
func EchoTool() Tool {
	return Tool{
		Def: json.RawMessage(`{"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}},"annotations":{"readOnlyHint":true}}`),
		Call: func(_ context.Context, args json.RawMessage, _ func(string, any)) (any, error) {
			var a struct{ Text string }
			_ = json.Unmarshal(args, &a)
			return TextResult(a.Text), nil
		},
	}
}

// NamingTool is a tool whose definition is def and whose result names the
// tool the server ran and the arguments it got: "ran NAME ARGS".
func NamingTool(def string) Tool {
	var d struct{ Name string }
	if err := json.Unmarshal([]byte(def), &d); err != nil {
		panic(err)
	}
	return Tool{
		Def: json.RawMessage(def),
		Call: func(_ context.Context, args json.RawMessage, _ func(string, any)) (any, error) {
			return TextResult("ran " + d.Name + " " + string(args)), nil
		},
	}
}

// PlainTool is a NamingTool named name with an empty object schema.
func PlainTool(name string) Tool {
	return NamingTool(fmt.Sprintf(`{"name":%q,"inputSchema":{"type":"object"}}`, name))
}

// TextPrompt is a prompt named name with one required argument, topic,
// rendered as one user message.
func TextPrompt(name string) Prompt {
	return Prompt{
		Def:      json.RawMessage(fmt.Sprintf(`{"name":%q,"description":"Summarise.","arguments":[{"name":"topic","required":true}]}`, name)),
		Messages: json.RawMessage(`[{"role":"user","content":{"type":"text","text":"Summarise {topic}."}}]`),
	}
}

// TextResource is a text/plain resource whose contents are text.
func TextResource(uri, name, text string) Resource {
	return Resource{
		Def:      json.RawMessage(fmt.Sprintf(`{"uri":%q,"name":%q,"mimeType":"text/plain"}`, uri, name)),
		Contents: json.RawMessage(fmt.Sprintf(`[{"uri":%q,"mimeType":"text/plain","text":%q}]`, uri, text)),
	}
}

// PDFSkill is the SKILL.md of SampleSkills' first skill.
const PDFSkill = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\nversion: 2.1\ntags: [pdf, forms]\n---\n\nUse references/FORMS.md for forms.\n"

// SampleSkills are two skills: acme/pdf-processing with three files, and
// notes with its SKILL.md alone.
func SampleSkills() []Skill {
	return []Skill{
		{Path: "acme/pdf-processing", Files: map[string]string{"SKILL.md": PDFSkill, "references/FORMS.md": "Fill every field.\n", "scripts/fill.py": "print('x')\n"}},
		{Path: "notes", Files: map[string]string{"SKILL.md": "---\nname: notes\ndescription: Take notes\n---\nWrite them down.\n"}},
	}
}

// Eras runs f as a subtest for each era's version: Modern, then Legacy.
func Eras(t *testing.T, f func(t *testing.T, version string)) {
	for _, v := range []string{Modern, Legacy} {
		t.Run(v, func(t *testing.T) { f(t, v) })
	}
}

// BuildFinance builds internal/mcptest/finance, the stdio test server,
// into a directory of t's, with the go command found in PATH.
func BuildFinance(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "finance")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	out, err := exec.Command("go", "build", "-o", bin, "git.rickub.com/bots-garden/mini-me/internal/mcptest/finance").CombinedOutput()
	if err != nil {
		t.Fatalf("building the finance server: %v: %s", err, out)
	}
	return bin
}

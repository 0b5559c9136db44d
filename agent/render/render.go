// Package render prints what a terminal host shows of mini-me: the servers
// and tools discovery found, with its warnings ([Banner]); the model and
// whether tool results leave the machine ([Model]); and a run as it
// streams ([Events]): the answer, each tool call and its outcome, and
// warnings; and a stored conversation, the model's reasoning apart
// ([Transcript]).
//
// Everything a server or a model said is cleaned first ([Clean]): control
// and bidirectional characters and invalid UTF-8 are replaced, so that a
// tool's output cannot move the cursor, clear the screen or reorder what
// the user reads. A host with another UI uses the same events and data,
// and this package as an example of what to show.
package render

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/agent/openai"
	"git.rickub.com/bots-garden/mini-me/mcp/toolset"
)

// Banner prints what discovery found: the servers ([Servers]), the tools
// ([Tools]), the skills when there are any ([Skills]) and the warnings
// (toolset.Toolset.Warnings), or "warnings: none".
func Banner(w io.Writer, tools *toolset.Toolset) {
	Servers(w, tools)
	Tools(w, tools)
	Skills(w, tools)
	warnings := tools.Warnings()
	if len(warnings) == 0 {
		fmt.Fprintln(w, "warnings: none")
		return
	}
	fmt.Fprintln(w, "warnings:")
	for _, warn := range warnings {
		fmt.Fprintf(w, "  %s\n", Clean(warn.String(), 300))
	}
}

// Servers lists the servers, each with its protocol era and version, or
// why it was skipped.
func Servers(w io.Writer, tools *toolset.Toolset) {
	servers := tools.Servers()
	tw := table(w, "servers", len(servers))
	if tw == nil {
		return
	}
	for _, s := range servers {
		if !s.Connected {
			fmt.Fprintf(tw, "  %s\tskipped\t%s\n", s.Name, Clean(s.Err.Error(), 200))
			continue
		}
		extra := ""
		if s.Prompts+s.Resources+s.ResourceTemplates > 0 {
			extra = fmt.Sprintf(", %d prompts, %d resources, %d templates", s.Prompts, s.Resources, s.ResourceTemplates)
		}
		fmt.Fprintf(tw, "  %s\t%s (%s)\t%s %s, %d tools%s\n", s.Name, s.Era, s.ProtocolVersion,
			Clean(s.ServerInfo.Name, 40), Clean(s.ServerInfo.Version, 20), s.Tools, extra)
	}
	tw.Flush()
}

// Tools lists the tools: the name the model calls, the server, the hint
// that matters for permission and the start of the description. The hint
// is "read-only", "writes" (declared not destructive), "destructive"
// (declared so, asked even in auto mode while confirmDestructive is on) or
// "destructive*": nothing declared, so destructive by the protocol's
// default, but not declared so, and run without asking in auto mode.
func Tools(w io.Writer, tools *toolset.Toolset) {
	list := tools.Tools()
	tw := table(w, "tools", len(list))
	if tw == nil {
		return
	}
	hints := make([]string, len(list))
	nameW, serverW, hintW := 0, 0, 0
	for i, t := range list {
		hints[i] = "destructive*"
		switch a := t.Tool.Annotations; {
		case a != nil && a.ReadOnly():
			hints[i] = "read-only"
		case a != nil && a.DestructiveHint != nil && *a.DestructiveHint:
			hints[i] = "destructive"
		case a != nil && a.DestructiveHint != nil:
			hints[i] = "writes"
		}
		nameW = max(nameW, utf8.RuneCountInString(t.Name))
		serverW = max(serverW, utf8.RuneCountInString(t.Server))
		hintW = max(hintW, len(hints[i]))
	}
	// The description takes what is left of 80 columns (never under 20).
	descW := max(Width-(2+nameW+2+serverW+2+hintW+2)-1, 20)
	for i, t := range list {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", t.Name, t.Server, hints[i], Clean(t.Tool.Description, descW))
	}
	tw.Flush()
}

// Width is the width of a terminal the listings fit, in columns.
const Width = 80

// table starts a listing of rows under heading: a tab writer to fill and
// flush, or nil, having printed "heading: none", when there are no rows.
func table(w io.Writer, heading string, rows int) *tabwriter.Writer {
	if rows == 0 {
		fmt.Fprintf(w, "%s: none\n", heading)
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s:\n", heading)
	return tw
}

// Model says which model answers, and whether what the tools return
// leaves this machine (openai.Model.Local). A query in the base URL,
// which may hold a key, is not shown.
func Model(w io.Writer, m *openai.Model) {
	where := "on this machine"
	if !m.Local() {
		where = "HOSTED: tool results are sent to this provider"
	}
	base, _, query := strings.Cut(m.BaseURL, "?")
	if query {
		base += "?…"
	}
	fmt.Fprintf(w, "model: %s at %s (%s)\n", Clean(m.Model, 80), Clean(base, 200), where)
}

// Events returns an event handler for agent.Agent.RunStream that prints a
// run to w as it goes: "(thinking…)" once for reasoning, the answer as it
// streams, "→ tool {arguments}" for each call proposed, "← status tool:
// output (duration)" for its outcome, "… tool task id: status message"
// for each step of a task-backed call, "? server asks ..." and "? server
// was answered action" for an elicitation of its server, "skill name: file, size" for each
// skill file loaded, and "warning: ..." for warnings. An approver writing
// to w prints its questions between a call and its outcome. The handler is
// for one run at a time.
func Events(w io.Writer) func(agent.Event) {
	midLine, thinking := false, false
	newline := func() {
		if midLine {
			fmt.Fprintln(w)
			midLine = false
		}
	}
	return func(e agent.Event) {
		switch e := e.(type) {
		case *agent.TextDelta:
			if e.Reasoning != "" && !thinking && !midLine {
				fmt.Fprintln(w, "(thinking…)")
				thinking = true
			}
			if e.Text != "" {
				fmt.Fprint(w, cleanKeep(e.Text))
				midLine = !strings.HasSuffix(e.Text, "\n")
			}
		case *agent.ToolCallProposed:
			newline()
			fmt.Fprintf(w, "→ %s %s\n", Clean(e.Call.Name, 64), Clean(e.Call.Arguments, 300))
		case *agent.ToolStatus:
			newline()
			fmt.Fprintf(w, "… %s task %s: %s %s\n", Clean(e.Call.Name, 64), Clean(e.Task.TaskID, 16), e.Task.Status, Clean(e.Task.Message, 200))
		case *agent.ElicitationRequested:
			newline()
			q := e.Elicitation
			if q.Mode == "url" {
				fmt.Fprintf(w, "? %s asks to open a page on %s: %s (%s)\n", Clean(q.Server, 64), strings.ToUpper(e.Site), Clean(q.URL, 300), Clean(q.Message, 200))
			} else {
				fmt.Fprintf(w, "? %s asks for a form: %s\n", Clean(q.Server, 64), Clean(q.Message, 200))
			}
		case *agent.ElicitationAnswered:
			if e.Err != nil {
				fmt.Fprintf(w, "? %s was sent no answer: %s\n", Clean(e.Server, 64), Clean(e.Err.Error(), 300))
			} else {
				fmt.Fprintf(w, "? %s was answered %s\n", Clean(e.Server, 64), e.Action)
			}
		case *agent.ToolFinished:
			newline()
			out := e.Output
			if e.Status == agent.StatusOK || e.Status == agent.StatusToolError {
				out = fmt.Sprintf("%s (%s)", out, e.Duration.Round(100*time.Microsecond))
			}
			fmt.Fprintf(w, "← %s %s: %s\n", e.Status, Clean(e.Call.Name, 64), Clean(out, 300))
		case *agent.SkillLoaded:
			newline()
			if e.Err != nil {
				fmt.Fprintf(w, "skill %s: %s not loaded: %s\n", Clean(e.Skill, 64), Clean(e.File, 64), Clean(e.Err.Error(), 300))
				break
			}
			check := "not verified: dynamic"
			if e.Verified {
				check = "verified"
			}
			fmt.Fprintf(w, "skill %s: %s, %d bytes, %s\n", Clean(e.Skill, 64), Clean(e.File, 64), e.Bytes, check)
		case *agent.Warning:
			newline()
			fmt.Fprintf(w, "warning: %s\n", Clean(e.Message, 300))
		case *agent.TurnFinished:
			newline()
			thinking = false
		}
	}
}

// Clean makes text from a server or a model safe to print on one line:
// control and bidirectional characters and invalid UTF-8 become '�', line
// breaks become "⏎", and text longer than max runes is cut, ending in "…".
func Clean(s string, max int) string {
	return CleanText(strings.NewReplacer("\r\n", "⏎", "\n", "⏎", "\t", " ").Replace(s), max)
}

// CleanText is Clean for text of several lines: it keeps line breaks and
// tabs.
func CleanText(s string, max int) string {
	s = cleanKeep(s)
	if utf8.RuneCountInString(s) > max {
		s = string([]rune(s)[:max]) + "…"
	}
	return s
}

// cleanKeep replaces what CleanText replaces, keeping every other rune.
func cleanKeep(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r == utf8.RuneError, unicode.IsControl(r), unicode.Is(unicode.Bidi_Control, r):
			return '�'
		}
		return r
	}, s)
}

// Skills lists the skill catalogue, when it is not empty: the name the
// model loads, the server (or "(local)") and the start of the description.
func Skills(w io.Writer, tools *toolset.Toolset) {
	skills := tools.Skills()
	if len(skills) == 0 {
		return
	}
	tw := table(w, "skills", len(skills))
	for _, s := range skills {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", s.Name, s.Server, Clean(s.Skill.Description(), 60))
	}
	tw.Flush()
}

package host

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"git.rickub.com/bots-garden/mini-me/agent"
	"git.rickub.com/bots-garden/mini-me/mcp"
)

// PrintBanner prints what discovery found: the servers, the tools, the
// skills (when there are any) and the warnings. Everything a server said
// is cleaned of control characters.
func PrintBanner(w io.Writer, tools *mcp.Toolset) {
	PrintServers(w, tools)
	PrintTools(w, tools)
	PrintSkills(w, tools)
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

// PrintServers lists the servers, each with its protocol era and version,
// or why it was skipped.
func PrintServers(w io.Writer, tools *mcp.Toolset) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "servers:")
	for _, s := range tools.Servers() {
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

// PrintTools lists the tools: the name the model calls, the server, the
// hints that matter for permission, and the start of the description.
func PrintTools(w io.Writer, tools *mcp.Toolset) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "tools:")
	for _, t := range tools.Tools() {
		hint := "writes"
		if a := t.Tool.Annotations; a != nil && a.ReadOnly() {
			hint = "read-only"
		} else if a != nil && a.DestructiveHint != nil && *a.DestructiveHint {
			hint = "destructive"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", t.Name, t.Server, hint, Clean(t.Tool.Description, 60))
	}
	tw.Flush()
}

// PrintModel says which model answers, and whether what the tools return
// leaves this machine.
func PrintModel(w io.Writer, m *agent.OpenAI) {
	where := "on this machine"
	if !m.Local() {
		where = "HOSTED: tool results are sent to this provider"
	}
	base, _, query := strings.Cut(m.BaseURL, "?")
	if query {
		base += "?…" // a query may hold a key
	}
	fmt.Fprintf(w, "model: %s at %s (%s)\n", Clean(m.Model, 80), Clean(base, 200), where)
}

// Render returns an event handler for agent.Agent.RunStream that prints a
// run to w as it goes: the answer as it streams, each tool call and its
// outcome, and warnings. The policy's questions are printed by the
// approver, between a call and its outcome.
func Render(w io.Writer) func(agent.Event) {
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
		case *agent.ToolResult:
			newline()
			out := e.Output
			if e.Status == agent.StatusOK || e.Status == agent.StatusToolError {
				out = fmt.Sprintf("%s (%s)", out, e.Duration.Round(100*time.Microsecond))
			}
			fmt.Fprintf(w, "← %s %s: %s\n", e.Status, Clean(e.Call.Name, 64), Clean(out, 300))
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

// Indent prefixes every line of s with prefix.
func Indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// PrintSkills lists the skill catalogue, when it is not empty: the name the
// model loads, the server (or "(local)") and the start of the description.
func PrintSkills(w io.Writer, tools *mcp.Toolset) {
	skills := tools.Skills()
	if len(skills) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "skills:")
	for _, s := range skills {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", s.Name, s.Server, Clean(s.Skill.Description(), 60))
	}
	tw.Flush()
}

package render

import (
	"fmt"
	"io"

	"git.rickub.com/bots-garden/mini-me/agent"
)

// Transcript prints a stored conversation, part by part: "system:",
// "user:" and "model:" before the text of a message, a user's image or
// file as "[image image/png, 1234 bytes]", the model's reasoning apart
// from its answer, as "(thought: …)", or "(thought, hidden)" when the
// provider keeps its text, each call as "→ tool {arguments}" and each
// tool message as "← tool: output". Every text is cleaned (Clean) and cut
// to max runes per part (300 for max ≤ 0).
func Transcript(w io.Writer, msgs []agent.Message, max int) {
	if max <= 0 {
		max = 300
	}
	for _, m := range msgs {
		switch m.Role {
		case agent.RoleTool:
			fmt.Fprintf(w, "← %s: %s\n", Clean(m.Name, 64), Clean(m.Text(), max))
			continue
		case agent.RoleAssistant:
			fmt.Fprint(w, "model:")
		default:
			fmt.Fprintf(w, "%s:", Clean(string(m.Role), 20))
		}
		for _, p := range m.Parts {
			switch p.Kind {
			case agent.PartText:
				fmt.Fprintf(w, " %s", Clean(p.Text, max))
			case agent.PartReasoning:
				if p.Text == "" {
					fmt.Fprint(w, "\n  (thought, hidden)")
				} else {
					fmt.Fprintf(w, "\n  (thought: %s)", Clean(p.Text, max))
				}
			case agent.PartToolCall:
				fmt.Fprintf(w, "\n  → %s %s", Clean(p.Name, 64), Clean(p.Arguments, max))
			case agent.PartImage, agent.PartFile:
				size := fmt.Sprintf("%d bytes", len(p.Data))
				if p.URL != "" {
					size = Clean(p.URL, 100)
				}
				fmt.Fprintf(w, " [%s %s, %s]", p.Kind, Clean(p.MediaType, 60), size)
			}
		}
		fmt.Fprintln(w)
	}
}

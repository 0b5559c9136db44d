package demo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text returns a server of read-only text tools, speaking both protocol
// eras: count (words, characters, lines), transform (upper, lower, title
// case, reversed) and sort_lines.
func Text() *Server {
	transform := newTool("transform", "Transform text",
		`Rewrites a text: "upper" or "lower" case, "title" case, or "reverse" (characters in reverse order).`,
		reads, func(_ context.Context, in struct {
			Text string `json:"text" jsonschema:"the text to transform"`
			To   string `json:"to" jsonschema:"upper, lower, title or reverse"`
		}) (string, error) {
			switch in.To {
			case "upper":
				return strings.ToUpper(in.Text), nil
			case "lower":
				return strings.ToLower(in.Text), nil
			case "title":
				return titleCase(in.Text), nil
			case "reverse":
				r := []rune(in.Text)
				slices.Reverse(r)
				return string(r), nil
			}
			return "", fmt.Errorf("unknown transformation %q: use upper, lower, title or reverse", in.To)
		})
	transform.schema.Properties["to"].Enum = []any{"upper", "lower", "title", "reverse"}

	return &Server{
		Name:         "demo-text",
		Version:      "1.0.0",
		Instructions: "Text utilities. They work on the text given in their arguments and change nothing.",
		Versions:     []string{Modern, Legacy},
		tools: []tool{
			newTool("count", "Count words",
				"Counts the words, characters (Unicode code points) and lines of a text.",
				reads, func(_ context.Context, in struct {
					Text string `json:"text" jsonschema:"the text to count"`
				}) (string, error) {
					return count(in.Text), nil
				}),
			transform,
			newTool("sort_lines", "Sort lines",
				"Sorts the lines of a text alphabetically, optionally dropping duplicate lines.",
				reads, func(_ context.Context, in struct {
					Text   string `json:"text" jsonschema:"the lines to sort"`
					Unique bool   `json:"unique,omitempty" jsonschema:"drop duplicate lines"`
				}) (string, error) {
					if in.Text == "" {
						return "", errors.New("no text given")
					}
					lines := strings.Split(strings.TrimRight(in.Text, "\n"), "\n")
					slices.Sort(lines)
					if in.Unique {
						lines = slices.Compact(lines)
					}
					return strings.Join(lines, "\n"), nil
				}),
		},
	}
}

// count describes the size of text.
func count(text string) string {
	lines := 0
	if text != "" {
		lines = strings.Count(strings.TrimSuffix(text, "\n"), "\n") + 1
	}
	return plural(len(strings.Fields(text)), "word") + ", " + plural(utf8.RuneCountInString(text), "character") + ", " + plural(lines, "line")
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// titleCase upper-cases the first letter of each word.
func titleCase(text string) string {
	r := []rune(text)
	for i := range r {
		if i == 0 || unicode.IsSpace(r[i-1]) {
			r[i] = unicode.ToUpper(r[i])
		}
	}
	return string(r)
}

package permission

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// printable makes untrusted text safe to print on a terminal: every character
// that could move the cursor, change colours, hide text or reorder it (C0 and
// C1 controls, DEL, bidirectional controls, line and paragraph separators)
// and every byte that is not UTF-8 is replaced by a visible escape such as
// \x1b or \u202e. Tabs are kept; so are newlines when multiline is true.
func printable(s string, multiline bool) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\t' || r == '\n' && multiline:
			b.WriteRune(r)
		case unicode.IsControl(r): // C0, DEL and C1, all below U+0100
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029':
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// indentLines puts prefix before every line of s but the first.
func indentLines(s, prefix string) string {
	return strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// label makes a short untrusted string (a tool's title, a form field's
// name, title or type, a choice) printable on one line, cut at
// terminalLabelLimit bytes.
func label(s string) string {
	return printable(truncate(s, terminalLabelLimit), false)
}

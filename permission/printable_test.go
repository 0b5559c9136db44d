package permission

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestPrintable(t *testing.T) {
	tests := []struct {
		in, single, multi string
	}{
		{"plain text", "plain text", "plain text"},
		{"tab\tkept", "tab\tkept", "tab\tkept"},
		{"a\nb", `a\x0ab`, "a\nb"},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`, `\x1b[31mred\x1b[0m`},
		{"cr\roverwrite", `cr\x0doverwrite`, `cr\x0doverwrite`},
		{"del\x7f c1\u0085", `del\x7f c1\x85`, `del\x7f c1\x85`},
		{"rtl\u202eevil\u2066", `rtl\u202eevil\u2066`, `rtl\u202eevil\u2066`},
		{"line\u2028sep", `line\u2028sep`, `line\u2028sep`},
		{"bad\xffutf8", `bad\xffutf8`, `bad\xffutf8`},
		{"émoji 👍 kept", "émoji 👍 kept", "émoji 👍 kept"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.single, printable(tc.in, false), "%q single-line", tc.in)
		assert.Equal(t, tc.multi, printable(tc.in, true), "%q multi-line", tc.in)
	}
}

func FuzzPrintable(f *testing.F) {
	for _, s := range []string{"", "a\nb", "\x1b[2J", "\u202e", "\xff\xfe", "\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, multiline := range []bool{false, true} {
			out := printable(s, multiline)
			if !utf8.ValidString(out) {
				t.Fatalf("printable(%q) = %q: invalid UTF-8", s, out)
			}
			for _, r := range out {
				if r == '\t' || r == '\n' && multiline {
					continue
				}
				if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029' {
					t.Fatalf("printable(%q, %v) = %q keeps %U", s, multiline, out, r)
				}
			}
			if !multiline && strings.Contains(out, "\n") {
				t.Fatalf("printable(%q, false) keeps a newline", s)
			}
		}
	})
}

func FuzzArgumentsText(f *testing.F) {
	for _, s := range []string{"", `{"a":"b"}`, `[1,2,{"x":null}]`, `{"a":`, "\"é\u202e\"", `{"s":"` + strings.Repeat("x", 300) + `"}`} {
		f.Add(s, 50)
	}
	f.Fuzz(func(t *testing.T, args string, max int) {
		max %= 10000
		out := Request{Arguments: []byte(args)}.ArgumentsText(max)
		if utf8.ValidString(args) && !utf8.ValidString(out) {
			t.Fatalf("ArgumentsText(%q, %d) = %q: broke UTF-8", args, max, out)
		}
		if max > 0 {
			// Each line is cut to max/4 plus a note, then the whole to max plus a note.
			const note = len(" … [9999999999 more bytes]")
			if len(out) > max+note {
				t.Fatalf("ArgumentsText(%q, %d) is %d bytes long", args, max, len(out))
			}
		}
	})
}

package textclip

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzClip checks the cutting of server text quoted in errors: within n
// bytes plus the mark, on a character boundary.
func FuzzClip(f *testing.F) {
	f.Add("héllo wörld", 3)
	f.Add("  spaced  ", 3)
	f.Add("日本語のテキスト", 6)
	f.Add("", 0)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || n > 1<<16 {
			return
		}
		got := Clip(s, n)
		body, cut := strings.CutSuffix(got, "…")
		if len(body) > n || !cut && got != strings.TrimSpace(s) {
			t.Fatalf("clip(%q, %d) = %q", s, n, got)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("clip(%q, %d) = %q cuts a character", s, n, got)
		}
		if !strings.HasPrefix(strings.TrimSpace(s), body) {
			t.Fatalf("clip(%q, %d) = %q is not a prefix", s, n, got)
		}
	})
}

// Printable turns every control character into a space and keeps the rest.
func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"plain":            "plain",
		"a\nb\tc\x1b[31md": "a b c [31md",
		"é\u0085ü":         "é ü",
		"":                 "",
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}

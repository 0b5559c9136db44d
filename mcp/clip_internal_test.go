package mcp

import (
	"testing"
	"unicode/utf8"
)

// clip never cuts a UTF-8 sequence in half.
func TestClipKeepsRunesWhole(t *testing.T) {
	for n := 0; n < 12; n++ {
		got := clip("ééééé€€", n)
		if !utf8.ValidString(got) {
			t.Fatalf("clip(%d) = %q: invalid UTF-8", n, got)
		}
		if len(got) > n+len("…") {
			t.Fatalf("clip(%d) = %q: longer than %d bytes and the ellipsis", n, got, n)
		}
	}
}

// Package textclip shortens text quoted from a peer (a server's message,
// a URI, a name) for an error or a log line.
package textclip

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Clip shortens s to at most n bytes, after trimming spaces, and marks a
// cut with "…". It never cuts in the middle of a UTF-8 sequence.
func Clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// Printable replaces the control characters of s (a peer's message may
// hold anything, escape sequences included) with spaces.
func Printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

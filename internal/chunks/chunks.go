// Package chunks cuts text into the pieces a scripted model streams.
package chunks

import "unicode/utf8"

// Split cuts s into pieces of n bytes (n < 1 counts as 1), never inside a
// UTF-8 character: a piece that would end inside one ends after it.
func Split(s string, n int) []string {
	n = max(n, 1)
	var out []string
	for len(s) > 0 {
		end := min(n, len(s))
		for end < len(s) && !utf8.RuneStart(s[end]) {
			end++
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}

package openai

import "git.rickub.com/bots-garden/mini-me/internal/textclip"

// clip shortens s for an error message (see textclip.Clip).
func clip(s string, n int) string { return textclip.Clip(s, n) }

// printable replaces control characters with spaces (see
// textclip.Printable).
func printable(s string) string { return textclip.Printable(s) }

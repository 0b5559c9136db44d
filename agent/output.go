package agent

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"git.rickub.com/bots-garden/mini-me/internal/textclip"
)

// cutText is a tool output as the model sees it: the head and the tail of
// the full text, with what lies between cut out. Cutting it again keeps a
// prefix of the head and a suffix of the tail, so the count of bytes cut
// always refers to the full text.
type cutText struct {
	head, tail string
	size       int // bytes of the full text
}

func wholeText(s string) cutText { return cutText{head: s, size: len(s)} }

// cut returns how many bytes of the full text are left out.
func (c cutText) cut() int { return c.size - len(c.head) - len(c.tail) }

// shorten keeps at most limit bytes: two thirds from the head, where
// outputs usually put what matters, one third from the tail, where they
// put totals and errors. Cuts fall on line boundaries when one is near,
// and always on character boundaries. limit <= 0 means no limit.
func (c cutText) shorten(limit int) cutText {
	if limit <= 0 || len(c.head)+len(c.tail) <= limit {
		return c
	}
	h := limit * 2 / 3
	if c.cut() == 0 { // whole: the tail comes from the full text
		return cutText{head: headOf(c.head, h), tail: tailOf(c.head, limit-h), size: c.size}
	}
	return cutText{head: headOf(c.head, h), tail: tailOf(c.tail, limit-h), size: c.size}
}

func (c cutText) String() string {
	n := c.cut()
	if n == 0 {
		return c.head + c.tail
	}
	return c.head + "\n[… " + strconv.Itoa(n) + " bytes of this output were cut here to save space …]\n" + c.tail
}

// headOf returns at most n bytes from the start of s.
func headOf(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if i := strings.LastIndexByte(s[:n], '\n'); i >= n*3/4 {
		return s[:i+1]
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// tailOf returns at most n bytes from the end of s.
func tailOf(s string, n int) string {
	if len(s) <= n {
		return s
	}
	start := len(s) - n
	if i := strings.IndexByte(s[start:], '\n'); i >= 0 && i < n/4 {
		return s[start+i+1:]
	}
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	return s[start:]
}

// delimiter matches what could pass for our delimiters inside a tool's
// output.
var delimiter = regexp.MustCompile(`(?i)<(\s*/?\s*tool_output)`)

// framing is the opening and closing delimiter of a tool's output. The
// opening one names the server and the tool (see attribute), and says
// whether the tool reported an error.
func framing(server, tool string, isError bool) (open, close string) {
	var b strings.Builder
	b.Grow(len(`<tool_output server="" tool="" error="true">`) + len(server) + len(tool) + 1)
	b.WriteString("<tool_output server=")
	writeAttribute(&b, server)
	b.WriteString(" tool=")
	writeAttribute(&b, tool)
	if isError {
		b.WriteString(` error="true"`)
	}
	b.WriteString(">\n")
	return b.String(), "\n</tool_output>"
}

// writeAttribute writes attribute(v) to b, without a copy for the usual
// name of printable ASCII with nothing to escape.
func writeAttribute(b *strings.Builder, v string) {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' || c > '~' || c == '"' || c == '\\' || c == '&' || c == '<' || c == '>' {
			b.WriteString(attribute(v))
			return
		}
	}
	b.WriteByte('"')
	b.WriteString(v)
	b.WriteByte('"')
}

// attrEntities writes the characters that could end an opening
// delimiter, or open or close one, as entities.
var attrEntities = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// attribute quotes a server's name, a tool's name or a resource URI for
// the opening delimiter: '&', '<' and '>' become entities, so the value
// can neither end the tag nor hold a delimiter; quotes, control and format
// characters (bidi overrides) are escaped as Go escapes them.
func attribute(v string) string { return strconv.Quote(attrEntities.Replace(v)) }

// neutralise makes delimiters inside a tool's output harmless, so that an
// output cannot close its frame early and pass for the agent's own text. It
// keeps the byte count.
func neutralise(s string) string {
	if !strings.Contains(strings.ToLower(s), "tool_output") {
		return s
	}
	return delimiter.ReplaceAllString(s, "[$1")
}

// clip cuts s to about n bytes, on a character boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// printable replaces control characters (a server's message may hold
// anything) with spaces.
func printable(s string) string { return textclip.Printable(s) }

// estimateTokens is the token count assumed for n bytes of text: one per
// three bytes, more than English (about four) and about right for code and
// JSON, so the estimate errs on the safe side.
func estimateTokens(n int) int { return (n + 2) / 3 }

package toolset

import (
	"fmt"
	"regexp"
	"strings"

	"git.rickub.com/bots-garden/mini-me/internal/textclip"
)

// maxTemplateLength bounds a URI template the Toolset compiles.
const maxTemplateLength = 1024

// uriTemplate matches URIs against an RFC 6570 template: literal text
// must be equal, each expression matches what its operator can expand to.
// Values of simple ({var}) and label, path and parameter expressions never
// contain "/", "?" or "#", since expansion percent-encodes them; reserved
// ({+var}) and fragment ({#var}) ones may contain anything.
type uriTemplate struct {
	re   *regexp.Regexp
	vars []string
}

// compileTemplate compiles a URI template; an unclosed or nested brace, or
// an operator RFC 6570 does not define, is an error.
func compileTemplate(tmpl string) (*uriTemplate, error) {
	if len(tmpl) > maxTemplateLength {
		return nil, fmt.Errorf("uri template longer than %d bytes", maxTemplateLength)
	}
	var b strings.Builder
	var vars []string
	b.WriteString("^")
	rest := tmpl
	for rest != "" {
		i := strings.IndexAny(rest, "{}")
		if i < 0 {
			b.WriteString(regexp.QuoteMeta(rest))
			break
		}
		b.WriteString(regexp.QuoteMeta(rest[:i]))
		if rest[i] == '}' {
			return nil, fmt.Errorf("uri template %q: unopened }", textclip.Clip(tmpl, 80))
		}
		end := strings.IndexAny(rest[i+1:], "{}")
		if end < 0 || rest[i+1+end] != '}' {
			return nil, fmt.Errorf("uri template %q: unclosed {", textclip.Clip(tmpl, 80))
		}
		expr := rest[i+1 : i+1+end]
		rest = rest[i+2+end:]
		op := ""
		if expr != "" && strings.ContainsRune("+#./;?&", rune(expr[0])) {
			op, expr = expr[:1], expr[1:]
		}
		for _, v := range strings.Split(expr, ",") {
			name := strings.TrimSuffix(v, "*")
			if k := strings.IndexByte(name, ':'); k >= 0 {
				name = name[:k]
			}
			if name == "" {
				return nil, fmt.Errorf("uri template %q: empty variable", textclip.Clip(tmpl, 80))
			}
			vars = append(vars, name)
		}
		switch op {
		case "":
			b.WriteString(`[^/?#]*`)
		case "+":
			b.WriteString(`[^#]*`)
		case "#":
			b.WriteString(`(?:#.*)?`)
		case ".":
			b.WriteString(`(?:\.[^/?#]*)*`)
		case "/":
			b.WriteString(`(?:/[^/?#]*)*`)
		case ";":
			b.WriteString(`(?:;[^/?#]*)*`)
		case "?", "&":
			b.WriteString(`(?:[?&][^#]*)?`)
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, fmt.Errorf("uri template %q: %w", textclip.Clip(tmpl, 80), err)
	}
	return &uriTemplate{re: re, vars: vars}, nil
}

// match reports whether uri is one of the template's expansions.
func (t *uriTemplate) match(uri string) bool { return t.re.MatchString(uri) }

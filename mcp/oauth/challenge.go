package oauth

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Challenge is one challenge of a WWW-Authenticate header (RFC 9110
// §11.6.1): a scheme followed by either a token68 or auth-params.
type Challenge struct {
	// Scheme is the authentication scheme as sent, for example "Bearer".
	// Compare it with strings.EqualFold: schemes are case-insensitive.
	Scheme string
	// Token68 is the challenge's token68, when it has one instead of
	// parameters.
	Token68 string
	// Params maps each parameter's lower-case name to its value, quotes and
	// escapes removed. A name repeated keeps its first value.
	Params map[string]string
}

// Param returns the value of the named parameter (case-insensitive), or "".
func (c Challenge) Param(name string) string { return c.Params[strings.ToLower(name)] }

// String formats c as a challenge, parameter values quoted, names in
// sorted order.
func (c Challenge) String() string {
	var b strings.Builder
	b.WriteString(c.Scheme)
	if c.Token68 != "" {
		b.WriteString(" " + c.Token68)
		return b.String()
	}
	for i, k := range slices.Sorted(maps.Keys(c.Params)) {
		if i == 0 {
			b.WriteByte(' ')
		} else {
			b.WriteString(", ")
		}
		b.WriteString(k + "=" + quoteString(c.Params[k]))
	}
	return b.String()
}

// ErrChallengeSyntax wraps the syntax errors of ParseChallenges.
var ErrChallengeSyntax = errors.New("oauth: malformed WWW-Authenticate header")

// ParseChallenges parses the value of a WWW-Authenticate header: a
// comma-separated list of challenges whose parameters are tokens or quoted
// strings. Several header lines may be joined with ", " first. On a syntax
// error it returns the challenges read before it and an error wrapping
// ErrChallengeSyntax; it never panics and reads the input once.
func ParseChallenges(header string) ([]Challenge, error) {
	p := &challengeParser{s: header}
	var out []Challenge
	for {
		p.skipSeparators()
		if p.eof() {
			return out, nil
		}
		scheme := p.token()
		if scheme == "" {
			return out, p.fail("expected an auth scheme")
		}
		c := Challenge{Scheme: scheme}
		if p.skipSpace() && !p.eof() && p.peek() != ',' {
			if t, ok := p.token68(); ok {
				c.Token68 = t
			} else if err := p.params(&c); err != nil {
				return out, err
			}
		}
		out = append(out, c)
		p.skipSpace()
		if !p.eof() && p.peek() != ',' {
			return out, p.fail("expected a comma")
		}
	}
}

type challengeParser struct {
	s string
	i int
}

func (p *challengeParser) eof() bool  { return p.i >= len(p.s) }
func (p *challengeParser) peek() byte { return p.s[p.i] }

func (p *challengeParser) fail(msg string) error {
	return fmt.Errorf("%w: %s at offset %d", ErrChallengeSyntax, msg, p.i)
}

// skipSpace skips optional white space and reports whether there was some.
func (p *challengeParser) skipSpace() bool {
	start := p.i
	for !p.eof() && (p.peek() == ' ' || p.peek() == '\t') {
		p.i++
	}
	return p.i > start
}

// skipSeparators skips white space and empty list elements.
func (p *challengeParser) skipSeparators() {
	for !p.eof() && (p.peek() == ' ' || p.peek() == '\t' || p.peek() == ',') {
		p.i++
	}
}

func (p *challengeParser) token() string {
	start := p.i
	for !p.eof() && isTChar(p.peek()) {
		p.i++
	}
	return p.s[start:p.i]
}

// token68 reads a token68 when the text ahead is one, standing alone
// before a comma or the end; otherwise it reads nothing.
func (p *challengeParser) token68() (string, bool) {
	start := p.i
	for !p.eof() && isToken68Char(p.peek()) {
		p.i++
	}
	if p.i == start {
		return "", false
	}
	for !p.eof() && p.peek() == '=' {
		p.i++
	}
	end := p.i
	p.skipSpace()
	if p.eof() || p.peek() == ',' {
		return p.s[start:end], true
	}
	p.i = start
	return "", false
}

// params reads the auth-params of c, up to the next challenge.
func (p *challengeParser) params(c *Challenge) error {
	c.Params = map[string]string{}
	for {
		name := p.token()
		if name == "" {
			return p.fail("expected a parameter name")
		}
		p.skipSpace()
		if p.eof() || p.peek() != '=' {
			return p.fail("expected '=' after a parameter name")
		}
		p.i++
		p.skipSpace()
		var val string
		if !p.eof() && p.peek() == '"' {
			v, err := p.quoted()
			if err != nil {
				return err
			}
			val = v
		} else if val = p.token(); val == "" {
			return p.fail("expected a parameter value")
		}
		key := strings.ToLower(name)
		if _, dup := c.Params[key]; !dup {
			c.Params[key] = val
		}
		// Another parameter follows a comma when the next element is
		// "name=": otherwise the element starts a new challenge.
		save := p.i
		p.skipSpace()
		if p.eof() || p.peek() != ',' {
			p.i = save
			return nil
		}
		p.skipSeparators()
		if !p.paramAhead() {
			p.i = save
			return nil
		}
	}
}

// paramAhead reports whether the text ahead is "token BWS =" followed by a
// value, without consuming it.
func (p *challengeParser) paramAhead() bool {
	save := p.i
	defer func() { p.i = save }()
	if p.token() == "" {
		return false
	}
	p.skipSpace()
	if p.eof() || p.peek() != '=' {
		return false
	}
	p.i++
	p.skipSpace()
	return !p.eof() && (p.peek() == '"' || isTChar(p.peek()))
}

func (p *challengeParser) quoted() (string, error) {
	p.i++ // the opening quote
	var b strings.Builder
	for !p.eof() {
		c := p.peek()
		p.i++
		switch c {
		case '"':
			return b.String(), nil
		case '\\':
			if p.eof() {
				return "", p.fail("unterminated quoted string")
			}
			b.WriteByte(p.peek())
			p.i++
		default:
			b.WriteByte(c)
		}
	}
	return "", p.fail("unterminated quoted string")
}

func isTChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func isToken68Char(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		strings.IndexByte("-._~+/", c) >= 0
}

func quoteString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
	return b.String()
}

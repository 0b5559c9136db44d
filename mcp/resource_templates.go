package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// ResourceTemplate is a family of resources a server can read, named by an
// RFC 6570 URI template.
type ResourceTemplate struct {
	// URITemplate is the template, such as "file:///logs/{day}".
	URITemplate string `json:"uriTemplate"`
	// Name is the template's programmatic name.
	Name string `json:"name"`
	// Title is a human-readable name, for display.
	Title string `json:"title,omitempty"`
	// Description says what the resources are.
	Description string `json:"description,omitempty"`
	// MIMEType is the media type of every matching resource, if one.
	MIMEType string `json:"mimeType,omitempty"`
	// Annotations are the template's audience, priority and lastModified hints.
	Annotations json.RawMessage `json:"annotations,omitempty"`
	// Icons are images a client may show for the template.
	Icons []Icon `json:"icons,omitempty"`
	// Meta is the template's _meta object.
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// ListResourceTemplates lists every resource template of the server,
// following every page.
func (c *Client) ListResourceTemplates(ctx context.Context) ([]ResourceTemplate, error) {
	return listAll(ctx, c, "resources/templates/list", func(p *templatesPage) ([]ResourceTemplate, *string) {
		return p.ResourceTemplates, p.NextCursor
	})
}

type templatesPage struct {
	complete
	ResourceTemplates []ResourceTemplate `json:"resourceTemplates"`
	NextCursor        *string            `json:"nextCursor"`
}

// watchesPrompts reports a host that wants prompt list changes from a
// server that sends them.
func (c *Client) watchesPrompts(caps ServerCapabilities) bool {
	return c.opts.OnPromptsChanged != nil && caps.Prompts != nil && caps.Prompts.ListChanged
}

// listenFilter is the subscriptions/listen request that asks for the list
// changes the host watches.
func (c *Client) listenFilter(meta json.RawMessage) listenParams {
	caps := c.Capabilities()
	p := listenParams{Meta: meta}
	p.Notifications.ToolsListChanged = true
	p.Notifications.ResourcesListChanged = c.watchesResources(caps)
	p.Notifications.PromptsListChanged = c.watchesPrompts(caps)
	return p
}

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
			return nil, fmt.Errorf("uri template %q: unopened }", clip(tmpl, 80))
		}
		end := strings.IndexAny(rest[i+1:], "{}")
		if end < 0 || rest[i+1+end] != '}' {
			return nil, fmt.Errorf("uri template %q: unclosed {", clip(tmpl, 80))
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
				return nil, fmt.Errorf("uri template %q: empty variable", clip(tmpl, 80))
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
		return nil, fmt.Errorf("uri template %q: %w", clip(tmpl, 80), err)
	}
	return &uriTemplate{re: re, vars: vars}, nil
}

// match reports whether uri is one of the template's expansions.
func (t *uriTemplate) match(uri string) bool { return t.re.MatchString(uri) }

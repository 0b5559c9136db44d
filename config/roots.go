package config

import (
	"net/url"
	"path"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// roots decodes a list of roots, each an absolute path or a file:// URI of
// one, into file URIs; an empty list is kept (no roots), a duplicate
// refused.
func (d *decoder) roots(n *yaml.Node, field string) []string {
	out := []string{}
	seen := map[string]int{}
	d.list(n, field, func(v, at string, item *yaml.Node) {
		uri, msg := rootURI(v)
		switch line, dup := seen[uri]; {
		case msg != "":
			d.report(item, at, "%s", msg)
		case dup:
			d.report(item, at, "duplicate root %s (first listed at line %d)", quote(v), line)
		default:
			seen[uri] = item.Line
			out = append(out, uri)
		}
	})
	return out
}

// rootURI returns the file URI of the root v, or why v is none.
func rootURI(v string) (uri, problem string) {
	switch {
	case v == "":
		return "", "must not be empty"
	case hasNUL(v):
		return "", "must not contain a NUL byte"
	case strings.HasPrefix(strings.ToLower(v), "file:"):
		u, err := url.Parse(v)
		if err != nil || u.Scheme != "file" || u.Host != "" && u.Host != "localhost" || !path.IsAbs(u.Path) ||
			u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return "", "is not a file URI of an absolute path on this machine (file:///home/me/project)"
		}
		return (&url.URL{Scheme: "file", Path: path.Clean(u.Path)}).String(), ""
	case strings.Contains(v, "://"):
		return "", "is not a root: only folders of this machine are (an absolute path, or a file:// URI)"
	case !filepath.IsAbs(v):
		return "", "must be an absolute path or a file:// URI (relative to what would depend on where the host runs)"
	}
	p := filepath.ToSlash(filepath.Clean(v))
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // a Windows drive: file:///C:/...
	}
	return (&url.URL{Scheme: "file", Path: p}).String(), ""
}

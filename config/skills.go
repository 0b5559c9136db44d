package config

import "go.yaml.in/yaml/v3"

// skillFolders decodes the top-level list of local skill folders: non-empty
// paths, each once.
func (d *decoder) skillFolders(n *yaml.Node, field string) []string {
	folders := d.uniqueNames(n, field, "folder", "empty list; remove skills to use no local skills")
	for i, f := range folders {
		if hasNUL(f) {
			d.report(n.Content[i], field, "must not contain a NUL byte")
		}
	}
	return folders
}

// skillAllowlist decodes a server's skill allowlist, strict like tools.
func (d *decoder) skillAllowlist(n *yaml.Node, field string) []string {
	return d.uniqueNames(n, field, "skill", "empty allowlist; remove skills to allow every skill of the server")
}

// uniqueNames decodes a non-empty list of non-empty, distinct strings;
// what names the kind of item in errors.
func (d *decoder) uniqueNames(n *yaml.Node, field, what, empty string) []string {
	var out []string
	first := make(map[string]int, len(n.Content))
	ok := d.list(n, field, func(v, at string, item *yaml.Node) {
		if v == "" {
			d.report(item, at, "must not be empty")
		} else if line, dup := first[v]; dup {
			d.report(item, at, "duplicate %s %s (first listed at line %d)", what, quote(v), line)
		} else {
			first[v] = item.Line
		}
		out = append(out, v)
	})
	if ok && len(n.Content) == 0 {
		d.report(n, field, "%s", empty)
	}
	return out
}

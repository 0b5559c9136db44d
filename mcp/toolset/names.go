package toolset

import (
	"fmt"
	"hash/fnv"
	"strings"
)

// MaxToolNameLength is the longest name a Toolset gives a tool: the limit
// model APIs put on function names.
const MaxToolNameLength = 64

// hashLength is the length of the hexadecimal suffix that keeps a cut or
// colliding name unique.
const hashLength = 8

// ToolName returns the name a Toolset exposes for tool on server before
// collisions are resolved: "{server}_{tool}" in the characters model APIs
// accept in a function name, [A-Za-z0-9_-]: a lone "-" between letters or
// digits is kept, every other run of characters outside [A-Za-z0-9]
// becomes one "_", none leads or trails; when longer than
// MaxToolNameLength, the name is cut and ended with "_" and a stable hash
// of the original names. So "resolve-library-id" of server "context7" is
// "context7_resolve-library-id".
func ToolName(server, tool string) string {
	name := sanitizeName(server + "_" + tool)
	if name == "" {
		name = "tool"
	}
	if len(name) > MaxToolNameLength {
		name = withHash(name, nameHash(server, tool, 0))
	}
	return name
}

// sanitizeName maps s onto words of [A-Za-z0-9] joined by single
// separators: a lone "-" between two words stays, any other run of other
// characters becomes "_", and none leads or trails.
func sanitizeName(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	run, dash := 0, false // the separators since the last word character
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			if run > 0 && b.Len() > 0 {
				if run == 1 && dash {
					b.WriteByte('-')
				} else {
					b.WriteByte('_')
				}
			}
			b.WriteRune(r)
			run = 0
			continue
		}
		run++
		dash = r == '-'
	}
	return b.String()
}

// withHash cuts name so that "_" and h fit within MaxToolNameLength and
// appends them.
func withHash(name, h string) string {
	if keep := MaxToolNameLength - len(h) - 1; len(name) > keep {
		name = name[:keep]
	}
	return strings.TrimRight(name, "_-") + "_" + h
}

// nameHash is a short hash of a tool's original names; attempt > 0 gives
// the further candidates of a name that is already taken.
func nameHash(server, tool string, attempt int) string {
	h := fnv.New32a()
	_, _ = fmt.Fprintf(h, "%s\x00%s", server, tool)
	if attempt > 0 {
		_, _ = fmt.Fprintf(h, "\x00%d", attempt)
	}
	return fmt.Sprintf("%0*x", hashLength, h.Sum32())
}

// uniqueName returns ToolName(server, tool) when it is free, else the first
// free name among the hashed candidates; the answer depends only on the
// names and on what is taken, so it is deterministic.
func uniqueName(server, tool string, taken func(string) bool) string {
	base := ToolName(server, tool)
	name := base
	for attempt := 0; taken(name); attempt++ {
		name = withHash(base, nameHash(server, tool, attempt))
	}
	return name
}

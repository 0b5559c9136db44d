package mcp

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
// collisions are resolved: "{server}_{tool}" with every character outside
// [A-Za-z0-9_] replaced by "_", runs of "_" collapsed, leading and trailing
// "_" removed, and, when longer than MaxToolNameLength, cut and ended with
// "_" and a stable hash of the original names.
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

// sanitizeName maps s onto [A-Za-z0-9_] without repeated, leading or
// trailing underscores.
func sanitizeName(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	under := true // drops leading underscores
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			under = false
			continue
		}
		if !under {
			b.WriteByte('_')
			under = true
		}
	}
	return strings.TrimSuffix(b.String(), "_")
}

// withHash cuts name so that "_" and h fit within MaxToolNameLength and
// appends them.
func withHash(name, h string) string {
	if keep := MaxToolNameLength - len(h) - 1; len(name) > keep {
		name = name[:keep]
	}
	return strings.TrimRight(name, "_") + "_" + h
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

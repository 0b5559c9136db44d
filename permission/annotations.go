package permission

import "strings"

// Annotations are the hints an MCP server attaches to a tool
// (ToolAnnotations in the MCP schema). Each hint is a *bool because the
// specification gives an absent hint a default that is not always false:
// absent readOnlyHint means false, absent destructiveHint true, absent
// idempotentHint false, absent openWorldHint true. The methods apply those
// defaults; the fields keep what the server actually said.
//
// Annotations are hints from the server, not guarantees: the [Policy] uses
// them only to ask more often (a tool declared destructive is asked even in
// [ModeAuto]), never to ask less.
type Annotations struct {
	// ReadOnlyHint: the tool does not modify its environment.
	ReadOnlyHint *bool `json:"readOnlyHint,omitempty"`
	// DestructiveHint: the tool may destroy or overwrite, rather than only
	// add; meaningful only when the tool is not read-only.
	DestructiveHint *bool `json:"destructiveHint,omitempty"`
	// IdempotentHint: repeating a call with the same arguments has no
	// further effect; meaningful only when the tool is not read-only.
	IdempotentHint *bool `json:"idempotentHint,omitempty"`
	// OpenWorldHint: the tool reaches an open world of external entities.
	OpenWorldHint *bool `json:"openWorldHint,omitempty"`
}

// ReadOnly reports whether the tool claims not to modify its environment
// (default false).
func (a Annotations) ReadOnly() bool { return valueOr(a.ReadOnlyHint, false) }

// Destructive reports whether the tool may perform destructive updates. The
// hint is meaningful only for a tool that is not read-only, so a read-only
// tool is never destructive; otherwise the default is true.
func (a Annotations) Destructive() bool {
	return !a.ReadOnly() && valueOr(a.DestructiveHint, true)
}

// Idempotent reports whether calling the tool again with the same arguments
// has no further effect. A read-only tool has no effect at all, so it is
// idempotent; otherwise the default is false.
func (a Annotations) Idempotent() bool {
	return a.ReadOnly() || valueOr(a.IdempotentHint, false)
}

// OpenWorld reports whether the tool may interact with an open world of
// external entities, such as the web (default true).
func (a Annotations) OpenWorld() bool { return valueOr(a.OpenWorldHint, true) }

// declaredDestructive reports whether the server said, in so many words, that
// the tool is destructive: destructiveHint true on a tool not declared
// read-only. The Policy asks such a tool even in ModeAuto; it does not rely on
// the default, under which every unannotated tool would be destructive and
// ModeAuto would ask about everything.
func (a Annotations) declaredDestructive() bool {
	return !a.ReadOnly() && valueOr(a.DestructiveHint, false)
}

// String describes the hints for a person, in the order read-only,
// destructive, idempotent, open world; destructive and idempotent are left out
// for a read-only tool, for which they mean nothing. A hint the server did not
// declare, shown with its default, is marked with a '*'. For example
// "read-only, closed world" or "writes*, destructive*, not idempotent*, open
// world*" (no hints at all).
func (a Annotations) String() string {
	var b strings.Builder
	add := func(hint *bool, yes, no string, value bool) {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		if value {
			b.WriteString(yes)
		} else {
			b.WriteString(no)
		}
		if hint == nil {
			b.WriteByte('*')
		}
	}
	add(a.ReadOnlyHint, "read-only", "writes", a.ReadOnly())
	if !a.ReadOnly() {
		add(a.DestructiveHint, "destructive", "additive only", a.Destructive())
		add(a.IdempotentHint, "idempotent", "not idempotent", a.Idempotent())
	}
	add(a.OpenWorldHint, "open world", "closed world", a.OpenWorld())
	return b.String()
}

func valueOr(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}

package config

import (
	"strconv"
	"strings"
)

// Problem is one thing wrong with a configuration file.
//
// A Problem is plain data, safe for concurrent reads.
type Problem struct {
	// File is the name of the file, as in [Config.File].
	File string
	// Line and Column locate the problem, both starting at 1; they are 0
	// when the problem concerns the whole file (for example its size).
	Line, Column int
	// Field is the path of the key concerned, for example
	// mcp.servers[1].auth.type; it is empty for problems of the file as a
	// whole, such as malformed YAML.
	Field string
	// Message says what is wrong. It never contains the value of a secret,
	// a URL, an argument, an env value or a header value.
	Message string
}

// Error formats p as "file:line:column: field: message", leaving out the
// parts that are unknown.
func (p Problem) Error() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		b.WriteString(":" + strconv.Itoa(p.Line))
		if p.Column > 0 {
			b.WriteString(":" + strconv.Itoa(p.Column))
		}
	}
	b.WriteString(": ")
	if p.Field != "" {
		b.WriteString(p.Field + ": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// Error is returned by [Load], [Parse] and [Decode] when a file is not a
// valid configuration. It holds every problem found, sorted by position; get
// it with [errors.As].
//
// An Error is plain data, safe for concurrent reads.
type Error struct {
	// File is the name of the file, as in [Config.File].
	File string
	// Problems lists every problem of the file; it is never empty.
	Problems []Problem
}

// Error lists every problem, one per line, each prefixed with "config: ".
func (e *Error) Error() string {
	if len(e.Problems) == 0 {
		return "config: " + e.File + ": invalid configuration"
	}
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = "config: " + p.Error()
	}
	return strings.Join(lines, "\n")
}

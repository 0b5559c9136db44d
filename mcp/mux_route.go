package mcp

import (
	"bytes"

	"git.rickub.com/bots-garden/mini-me/internal/jsonlong"
)

// routeResponse finds, without decoding it, what the mux needs to hand a plain
// response to its caller: its integer id, and whether it has a result that
// is not null. It checks the message's outline only (one object, its
// members, strings and brackets matched, nothing after it), not the values
// inside: the caller decodes the message in full, once, and reports a
// malformed one as ErrProtocol. ok is false for anything else and for
// anything unusual, which the mux then decodes in full as before: a member
// named method or params, a name that is escaped, not ASCII or repeated
// (encoding/json matches names without regard to case, and keeps the last
// of repeated ones), an id that is not a plain integer, a jsonrpc that is
// not exactly "2.0".
func routeResponse(data []byte) (id int64, result, ok bool) {
	i := skipSpace(data, 0)
	if i == len(data) || data[i] != '{' {
		return 0, false, false
	}
	var seenID, seenVersion, seenResult, seenError bool
	for i++; ; i++ {
		i = skipSpace(data, i)
		if i == len(data) || data[i] != '"' {
			return 0, false, false
		}
		end := jsonlong.StringEnd(data, i)
		if end < 0 {
			return 0, false, false
		}
		name := data[i+1 : end-1]
		if i = skipSpace(data, end); i == len(data) || data[i] != ':' {
			return 0, false, false
		}
		start := skipSpace(data, i+1)
		if i = skipValue(data, start); i < 0 {
			return 0, false, false
		}
		value := data[start:i]
		var seen *bool
		switch {
		case bytes.ContainsAny(name, "\\") || !ascii(name):
			return 0, false, false
		case bytes.EqualFold(name, []byte("id")):
			seen = &seenID
			if id, ok = plainInt(value); !ok {
				return 0, false, false
			}
		case bytes.EqualFold(name, []byte("jsonrpc")):
			seen = &seenVersion
			if string(value) != `"2.0"` {
				return 0, false, false
			}
		case bytes.EqualFold(name, []byte("result")):
			seen, result = &seenResult, string(value) != "null"
		case bytes.EqualFold(name, []byte("error")):
			seen = &seenError
		case bytes.EqualFold(name, []byte("method")), bytes.EqualFold(name, []byte("params")):
			return 0, false, false
		}
		if seen != nil {
			if *seen {
				return 0, false, false
			}
			*seen = true
		}
		if i = skipSpace(data, i); i == len(data) {
			return 0, false, false
		}
		if data[i] == '}' {
			if !seenID || !seenVersion || skipSpace(data, i+1) != len(data) {
				return 0, false, false
			}
			return id, result, true
		}
		if data[i] != ',' {
			return 0, false, false
		}
	}
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the index just past the value that starts at i, -1 if
// its outline is broken. A scalar ends at the next delimiter.
func skipValue(data []byte, i int) int {
	if i == len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		return jsonlong.StringEnd(data, i)
	case '{', '[':
		depth := 0
		for i < len(data) {
			switch data[i] {
			case '"':
				if i = jsonlong.StringEnd(data, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	case ',', '}', ']', ':':
		return -1
	}
	for i < len(data) {
		switch data[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// plainInt parses an integer written as JSON writes one, with at most 18
// digits, so that it cannot overflow.
func plainInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 || (b[0] == '0' && len(b) > 1) {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// ascii reports whether b is all ASCII.
func ascii(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

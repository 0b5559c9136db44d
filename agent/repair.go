package agent

import (
	"bytes"
	"encoding/json"
	"strings"
)

// repairArgs repairs what small models commonly get wrong in the JSON of
// a call's arguments: an object in a Markdown code fence, an object sent
// as a JSON string, single-quoted strings and trailing commas. It returns
// args unchanged, with no repairs, when they are already a JSON object or
// when no repair makes them one; else the repaired object and what was
// repaired, in order. The caller still validates the result.
func repairArgs(args []byte) (fixed []byte, repairs []string) {
	if isObject(string(args)) {
		return args, nil
	}
	fixed = bytes.TrimSpace(args)
	if body, ok := unfence(fixed); ok {
		fixed, repairs = body, append(repairs, "code fence removed")
	}
	var inner string
	if json.Unmarshal(fixed, &inner) == nil && strings.HasPrefix(strings.TrimSpace(inner), "{") {
		fixed, repairs = bytes.TrimSpace([]byte(inner)), append(repairs, "stringified object decoded")
	}
	if !json.Valid(fixed) {
		var quotes, commas bool
		fixed, quotes, commas = requote(fixed)
		if quotes {
			repairs = append(repairs, "single quotes replaced by double quotes")
		}
		if commas {
			repairs = append(repairs, "trailing commas removed")
		}
	}
	if len(repairs) == 0 || !isObject(string(fixed)) {
		return args, nil
	}
	return fixed, repairs
}

// unfence returns the body of a Markdown code fence (```json ... ```).
func unfence(b []byte) ([]byte, bool) {
	if !bytes.HasPrefix(b, []byte("```")) || !bytes.HasSuffix(b, []byte("```")) || len(b) < 6 {
		return nil, false
	}
	body := b[3 : len(b)-3]
	if nl := bytes.IndexByte(body, '\n'); nl >= 0 && !bytes.ContainsAny(body[:nl], "{[\"'") {
		body = body[nl+1:] // the info string: json, JSON, ...
	}
	return bytes.TrimSpace(body), true
}

// requote rewrites single-quoted strings as JSON strings and drops commas
// before a closing bracket or brace, outside strings. It reports which of
// the two it did.
func requote(b []byte) (out []byte, quotes, commas bool) {
	out = make([]byte, 0, len(b)+8)
	var quote byte // the quote of the string we are in, or 0
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case quote == 0 && c == '\'':
			quote, quotes = c, true
			out = append(out, '"')
		case quote == 0 && c == '"':
			quote = c
			out = append(out, c)
		case quote == 0 && (c == '}' || c == ']'):
			if j := len(bytes.TrimRight(out, " \t\r\n")) - 1; j >= 0 && out[j] == ',' {
				out, commas = append(out[:j], out[j+1:]...), true
			}
			out = append(out, c)
		case quote == 0:
			out = append(out, c)
		case c == '\\' && i+1 < len(b):
			i++
			if quote == '\'' && b[i] == '\'' {
				out = append(out, '\'') // \' needs no escape in JSON
			} else {
				out = append(out, c, b[i])
			}
		case c == quote:
			quote = 0
			out = append(out, '"')
		case c == '"': // inside a single-quoted string
			out = append(out, '\\', '"')
		default:
			out = append(out, c)
		}
	}
	return out, quotes, commas
}

package mcp

import (
	"encoding/json"
	"strconv"
)

// encodeRequest encodes a JSON-RPC request. The params of the hot requests
// (tools/call, listings, discover) are written by hand: json.Marshal would
// re-validate and compact on every call the raw JSON they hold, the _meta
// block and the arguments, which are valid and compact already (ours, or
// compacted by marshalArgs). Other params go through json.Marshal.
func encodeRequest(id int64, method string, params any) ([]byte, error) {
	return appendRequest(make([]byte, 0, 128+requestSizeHint(params)), id, method, params)
}

// appendRequest appends the request that encodeRequest encodes to b.
func appendRequest(b []byte, id int64, method string, params any) ([]byte, error) {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"method":`...)
	b = appendString(b, method)
	if params != nil {
		b = append(b, `,"params":`...)
		if out, ok := appendParams(b, params); ok {
			b = out
		} else {
			p, err := json.Marshal(params)
			if err != nil {
				return nil, err
			}
			b = append(b, p...)
		}
	}
	return append(b, '}'), nil
}

func requestSizeHint(params any) int {
	switch p := params.(type) {
	case *callToolParams:
		return len(p.Meta) + len(p.Name) + len(p.Arguments)
	case *cursorParams:
		return len(p.Meta) + 64
	case *metaParams:
		return len(p.Meta)
	}
	return 256
}

// appendParams appends the params it knows how to write; ok is false for
// any other.
func appendParams(b []byte, params any) (_ []byte, ok bool) {
	switch p := params.(type) {
	case *metaParams:
		return append(appendMeta(append(b, '{'), p.Meta, false), '}'), true
	case *cursorParams:
		b = appendMeta(append(b, '{'), p.Meta, p.Cursor != nil)
		if p.Cursor != nil {
			b = appendString(append(b, `"cursor":`...), *p.Cursor)
		}
		return append(b, '}'), true
	case *callToolParams:
		if p.InputResponses != nil || p.RequestState != nil || p.Task != nil {
			return b, false // a retry with input, a task: rare, left to json.Marshal
		}
		b = appendMeta(append(b, '{'), p.Meta, true)
		b = appendString(append(b, `"name":`...), p.Name)
		if len(p.Arguments) > 0 {
			b = append(append(b, `,"arguments":`...), p.Arguments...)
		}
		return append(b, '}'), true
	}
	return b, false
}

// appendMeta appends the "_meta" member, if any, and the comma before the
// next member when more follow.
func appendMeta(b []byte, meta json.RawMessage, more bool) []byte {
	if len(meta) == 0 {
		return b
	}
	b = append(append(b, `"_meta":`...), meta...)
	if more {
		b = append(b, ',')
	}
	return b
}

// appendString appends s as a JSON string, as json.Marshal would.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // cannot fail: a string
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

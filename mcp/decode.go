package mcp

import (
	"encoding/json"
	"reflect"

	"git.rickub.com/bots-garden/mini-me/internal/jsonlong"
	"git.rickub.com/bots-garden/mini-me/internal/jsonrpc"
)

// A response of at least largeMessage bytes has its string values of at
// least longString bytes decoded by jsonlong, not by encoding/json, when
// they make at least half of it (a large tool result or resource is mostly
// one or a few long texts).
const (
	largeMessage = 64 << 10
	longString   = 4 << 10
)

// decodeMessage is json.Unmarshal(data, msg) for a msg whose one field
// set is its Result, a pointer to a zero value: the same outcome, the same
// errors, but a large message's long strings are read in one pass (see
// jsonlong).
func decodeMessage(data []byte, msg *jsonrpc.Message) error {
	return decodeMessageAbove(data, msg, largeMessage, longString, len(data)/2)
}

// decodeMessageAbove is decodeMessage with its thresholds given: the
// message's size, a long string's, and the long strings' total.
func decodeMessageAbove(data []byte, msg *jsonrpc.Message, minMessage, minString, minTotal int) error {
	if len(data) < minMessage {
		return json.Unmarshal(data, msg)
	}
	result := msg.Result
	res := reflect.ValueOf(result)
	if res.Kind() != reflect.Pointer || res.IsNil() ||
		!jsonlong.Plain(res.Type()) || !jsonlong.Plain(rpcErrorType) || !res.Elem().IsZero() {
		return json.Unmarshal(data, msg)
	}
	cut := jsonlong.New(data, minString, minTotal)
	if cut == nil {
		return json.Unmarshal(data, msg)
	}
	if json.Unmarshal(cut.Small, msg) == nil {
		// A long string in the envelope itself (its id, method or
		// params) is not put back: Done is false, as for one that went
		// nowhere.
		cut.Put(res)
		cut.Put(reflect.ValueOf(msg.Error))
		if cut.Done() {
			return nil
		}
	}
	res.Elem().SetZero()
	*msg = jsonrpc.Message{Result: result}
	return json.Unmarshal(data, msg)
}

var rpcErrorType = reflect.TypeFor[jsonrpc.Error]()

package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"git.rickub.com/bots-garden/mini-me/internal/jsonrpc"
)

// decodeSeeds are responses with long strings in every place a server may
// put them, valid and not; "L" stands for a long text (see expand).
var decodeSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"L"}],"isError":false}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"L\n\u00e9\ud83d\ude00\ud83d"}]}}`,
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"L\xff\xed\xa0\x80\"}]}}",
	`{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":{"a":"L","L":["L",1]},"_meta":{"m":"L"}}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"image","data":"L","mimeType":"image/png","_meta":{"x":"L"},"annotations":{"a":"L"}}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"resource","resource":{"uri":"u","text":"L","blob":"L"}}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"u","text":"L"},{"uri":"v","blob":"L"}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"messages":[{"role":"user","content":{"type":"text","text":"L"}}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"isError":"L","content":[{"type":"text","text":"L"}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":"L"}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"L","text":"short"}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"short","TEXT":"L"}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"unknown":"L","content":[]}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"L","data":"L"}}`,
	`{"jsonrpc":"2.0","id":"L","result":{"content":[{"type":"text","text":"L"}]}}`,
	`{"jsonrpc":"2.0","id":1,"method":"L","params":{"x":"L"},"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"result":null,"x":"L"}`,
	`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"a":{"method":"L","params":{"p":"L"}}},"requestState":"L"}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"resultType":"task","taskId":"L","status":"working","task":{"taskId":"L"}}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"L\x01"}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"L"}]}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"L"}]}} {}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text" "text":"L"}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"L\q"}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"L"}]},"result":{"content":[]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","description":"L","inputSchema":{"type":"object","description":"L"}}],"nextCursor":"L"}}`,
}

// expand replaces each L of a seed by a text of n bytes.
func expand(seed string, n int) []byte {
	return []byte(strings.ReplaceAll(seed, "L", strings.Repeat("0123456789abcdef", n/16+1)[:n]))
}

// decodeResults are the result types decoded through decodeMessage.
var decodeResults = []func() any{
	func() any { return new(callToolWire) },
	func() any { return new(readResourceWire) },
	func() any { return new(getPromptWire) },
	func() any { return new(toolsPage) },
	func() any { return new(json.RawMessage) },
}

// checkDecode decodes data with each result type, with the fast path and
// with encoding/json alone: the messages must be equal, and so must the
// errors, to their type and text.
func checkDecode(t *testing.T, data []byte, minMessage, minString int) {
	t.Helper()
	for _, newResult := range decodeResults {
		want := jsonrpc.Message{Result: newResult()}
		werr := json.Unmarshal(data, &want)
		got := jsonrpc.Message{Result: newResult()}
		gerr := decodeMessageAbove(data, &got, minMessage, minString, 0)
		require.Equal(t, fmt.Sprint(werr), fmt.Sprint(gerr), "%T: %.200q", want.Result, data)
		require.Equal(t, reflect.TypeOf(werr), reflect.TypeOf(gerr), "%T: %.200q", want.Result, data)
		require.True(t, reflect.DeepEqual(want, got), "%T: %.200q\nwant %+v\ngot  %+v", want.Result, data, want.Result, got.Result)
	}
}

// The fast path decodes a message as encoding/json does, errors included,
// whatever it holds and wherever a long string is.
func TestDecodeMessageMatchesEncodingJSON(t *testing.T) {
	for _, seed := range decodeSeeds {
		for _, n := range []int{longString - 1, longString, 3 * longString} {
			checkDecode(t, expand(seed, n), 0, longString)
			checkDecode(t, expand(seed, n), largeMessage, longString)
		}
	}
}

func FuzzDecodeMessage(f *testing.F) {
	for _, seed := range decodeSeeds {
		f.Add([]byte(seed), uint8(3))
	}
	f.Fuzz(func(t *testing.T, data []byte, n uint8) {
		checkDecode(t, data, 0, 1+int(n%8))
		checkDecode(t, expand(string(data), 1+int(n)), 0, 1+int(n))
	})
}

// A mistyped long string is the same *json.UnmarshalTypeError as before,
// which an SSE stream's decoding branches on (strayResult).
func TestDecodeMessageTypeError(t *testing.T) {
	data := expand(decodeSeeds[8], 2*longString)
	err := decodeMessageAbove(data, &jsonrpc.Message{Result: new(callToolWire)}, 0, longString, 0)
	var te, want *json.UnmarshalTypeError
	require.True(t, errors.As(err, &te), "%v", err)
	require.ErrorAs(t, json.Unmarshal(data, &jsonrpc.Message{Result: new(callToolWire)}), &want)
	assert.Equal(t, *want, *te) // Field names the embedded struct or not, by Go version
	assert.True(t, strayResult(err))
}

// A server's text that looks like a placeholder, or is the nonce of an
// earlier message, is text like any other.
func TestDecodeMessagePlaceholderLookalike(t *testing.T) {
	long := strings.Repeat("x", 2*longString)
	for _, text := range []string{"00000000000000000000000000000000" + "0", "0123456789abcdef0123456789abcdef1", `\"0123456789abcdef0123456789abcdef0\"`} {
		data := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + long + `"},{"type":"text","text":"` + text + `"}],"structuredContent":{"t":"` + text + `"}}}`)
		checkDecode(t, data, 0, longString)
		got := new(callToolWire)
		require.NoError(t, decodeMessage(data, &jsonrpc.Message{Result: got}))
		assert.Equal(t, long, got.Content[0].Text)
	}
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// A long text is copied once, into its string, when the message is large
// enough: encoding/json, which decodes an escaped text into a buffer
// before copying it into its string, allocates about twice as much, and
// does so for a message just under the threshold.
func TestDecodeMessageCopiesOnce(t *testing.T) {
	text := strings.Repeat(`0123456789\n\u00e9`, largeMessage/16)
	for _, tc := range []struct {
		size int
		fast bool
	}{{largeMessage - 1, false}, {largeMessage, true}, {4 * largeMessage, true}} {
		head := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"`
		tail := `"}]}}`
		body := strings.Repeat(text, tc.size/len(text)+1)[:tc.size-len(head)-len(tail)]
		body = strings.TrimRight(body, `\`+"u0123456789abcdef") // no escape cut in two
		body += strings.Repeat("x", tc.size-len(head)-len(tail)-len(body))
		data := []byte(head + body + tail)
		require.Len(t, data, tc.size)
		var decoded int
		n := allocated(func() {
			res := new(callToolWire)
			require.NoError(t, decodeMessage(data, &jsonrpc.Message{Result: res}))
			decoded = len(res.Content[0].Text)
		})
		if tc.fast {
			assert.Less(t, float64(n), 1.1*float64(decoded), "%d bytes: %d allocated for a text of %d", tc.size, n, decoded)
		} else {
			assert.Greater(t, float64(n), 1.5*float64(decoded), "%d bytes: %d allocated for a text of %d", tc.size, n, decoded)
		}
	}
}

// BenchmarkDecodeMessage decodes 1 MiB responses with decodeMessage and
// with encoding/json alone: one plain text, one text with an escape every
// 64 bytes, 256 texts of 4 KiB (the shortest string cut out), and 4096
// texts of 256 bytes (none cut out: what looking for them costs).
func BenchmarkDecodeMessage(b *testing.B) {
	block := func(text string) string { return `{"type":"text","text":"` + text + `"}` }
	blocks := func(n, size int, esc bool) []byte {
		unit := strings.Repeat("0123456789abcdef", 4)
		if esc {
			unit = unit[:62] + `\n`
		}
		text := strings.Repeat(unit, size/len(unit)+1)[:size]
		parts := make([]string, n)
		for i := range parts {
			parts[i] = block(text)
		}
		return []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[` + strings.Join(parts, ",") + `]}}`)
	}
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"1x1MiB", blocks(1, 1<<20, false)},
		{"1x1MiB-escaped", blocks(1, 1<<20, true)},
		{"256x4KiB", blocks(256, 4<<10, false)},
		{"4096x256B", blocks(4096, 256, false)},
	} {
		for _, path := range []string{"encoding-json", "decodeMessage"} {
			b.Run(tc.name+"/"+path, func(b *testing.B) {
				b.SetBytes(int64(len(tc.data)))
				b.ReportAllocs()
				for range b.N {
					msg := jsonrpc.Message{Result: new(callToolWire)}
					var err error
					if path == "decodeMessage" {
						err = decodeMessage(tc.data, &msg)
					} else {
						err = json.Unmarshal(tc.data, &msg)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

package jsonlong

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// literals are string contents, valid and not, that exercise every rule
// of encoding/json's strings: escapes, surrogates paired and alone, bytes
// that are not UTF-8, control characters, and the SWAR word boundaries.
var literals = []string{
	"", "a", "0123456789abcdef", `\"`, `\\`, `\/`, `\b\f\n\r\t`, `\u0041\u00e9\u20AC`,
	`\ud83d\ude00`, `\ud83d`, `\ude00`, `\ud83dx`, `\ud83d\u0041`, `\ude00\ud83d`, `\ud83d\ud83d\ude00`,
	"\xff", "a\xc3", "\xed\xa0\x80", "é€😀", "\xef\xbf\xbd", "1234567\xff89", "1234567é",
	`\x`, `\`, `abc\`, `\u12`, `\u12g4`, "a\x01b", "a\x1fb", "\x7f", `\'`, `a"b`, "12345678\t",
	strings.Repeat(`\\`, 9) + "x", strings.Repeat("é", 9) + `\n`,
}

// measure accepts exactly the contents encoding/json accepts, and
// unquote gives what encoding/json gives, of the size measure counted.
func TestUnquoteMatchesEncodingJSON(t *testing.T) {
	for _, s := range literals {
		checkUnquote(t, s)
	}
}

func FuzzUnquote(f *testing.F) {
	for _, s := range literals {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkUnquote(t, s) })
}

func checkUnquote(t *testing.T, s string) {
	lit := []byte(`"` + s + `"`)
	var want string
	err := json.Unmarshal(lit, &want)
	if StringEnd(lit, 0) != len(lit) {
		require.Error(t, err, "%q: a quote ends the literal early, or none ends it", s)
		return
	}
	size, plain, ok := measure([]byte(s))
	require.Equal(t, err == nil, ok, "%q: measure accepts it: %v, encoding/json: %v", s, ok, err)
	if !ok {
		return
	}
	require.Equal(t, len(want), size, "%q: decoded size", s)
	require.Equal(t, want == s, plain, "%q: plain", s)
	var b strings.Builder
	unquote(&b, []byte(s))
	require.Equal(t, want, b.String(), "%q", s)
}

// docs are messages, valid and not, with long strings in every place.
var docs = []string{
	`{"a":"0123456789"}`,
	`{"0123456789":"0123456789","k":["0123456789",{"x":"0123456789"}]}`,
	`["0123456789" , "01234\"6789" ,"\ud83d\ude00\u0041xyz"]`,
	`"0123456789"`,
	` { "a" : "0123456789" } `,
	`{"a":"0123456789\x01"}`,
	`{"a":"0123456789" "b":1}`,
	`{"a":"0123456789",}`,
	`{"a":"0123456789"`,
	`{"a":"01234567\\"}`,
	`{"a":"0123456789"}x`,
	`{"a":tru"0123456789"}`,
	`{"a":1"0123456789"}`,
	`{"a"  "0123456789"}`,
	`{"a":"0123456789\q"}`,
	`{"a":["0123456789"]]`,
	"{\"a\":\"0123456789\xff\"}",
	`{"a":"0123456789\\\\\"\\"}`,
}

// A copy with the long strings cut is valid exactly when the message is,
// and decoded into any, with the strings put back, it is what the message
// decodes to.
func TestCutKeepsValidity(t *testing.T) {
	for _, d := range docs {
		for _, min := range []int{0, 1, 5, 10, 20} {
			checkCut(t, []byte(d), min)
		}
	}
}

func FuzzCut(f *testing.F) {
	for _, d := range docs {
		f.Add([]byte(d), uint8(5))
	}
	f.Fuzz(func(t *testing.T, data []byte, min uint8) { checkCut(t, data, int(min%16)) })
}

func checkCut(t *testing.T, data []byte, min int) {
	c := New(data, min, 0)
	if c == nil {
		return
	}
	require.Equal(t, json.Valid(data), json.Valid(c.Small), "%q cut to %q", data, c.Small)
	var want, got any
	if json.Unmarshal(data, &want) != nil {
		return
	}
	require.NoError(t, json.Unmarshal(c.Small, &got))
	c.Put(reflect.ValueOf(&got))
	if c.Done() {
		require.Equal(t, want, got, "%q", data)
	}
}

func TestCutFindsValuesNotKeys(t *testing.T) {
	data := []byte(`{"0123456789":"0123456789", "x" :"abc", "y":["0123456789"]}`)
	c := New(data, 10, 0)
	require.NotNil(t, c)
	assert.Len(t, c.longs, 2)
	assert.True(t, json.Valid(c.Small))
	assert.Contains(t, string(c.Small), `{"0123456789":"`+string(c.nonce[:])+`0", "x" :"abc", "y":["`+string(c.nonce[:])+`1"]}`)
	assert.Nil(t, New(data, 11, 0), "nothing as long")
	assert.Nil(t, New([]byte(`{"a":"0123456789\q"}`), 5, 0), "an invalid long string is left to encoding/json")
}

// A placeholder is put back once at most: a second string equal to it
// (which a server cannot write, not knowing the nonce, but see the test)
// makes the Cut fail, as does a string that starts with the nonce.
func TestPlaceholderSeenTwice(t *testing.T) {
	data := []byte(`["0123456789","x"]`)
	// The nonce alone is no placeholder: left alone, and no failure.
	for suffix, done := range map[string]bool{"0": false, "00": false, "": true, "1": false, "x": false, "-0": false} {
		c := New(data, 10, 0)
		require.NotNil(t, c)
		got := []any{nil, nil}
		require.NoError(t, json.Unmarshal(c.Small, &got))
		got[1] = string(c.nonce[:]) + suffix
		c.Put(reflect.ValueOf(&got))
		assert.Equal(t, done, c.Done(), "second string: the nonce and %q", suffix)
		assert.Equal(t, "0123456789", got[0])
	}
}

type doc struct {
	Text  string          `json:"text"`
	Raw   json.RawMessage `json:"raw"`
	Named myString        `json:"named"`
	Any   any             `json:"any"`
	Map   map[string]item `json:"map"`
	Ptr   *item           `json:"ptr"`
	Items []item          `json:"items"`
	Arr   [1]string       `json:"arr"`
	embedded
}

type item struct {
	S string `json:"s"`
}

type embedded struct {
	E string `json:"e"`
}

type myString string

// Put finds the placeholders wherever encoding/json put them, and Done
// reports the ones it did not find.
func TestPutEverywhere(t *testing.T) {
	long := strings.Repeat("0123456789", 3)
	esc := `\u00e9` + long + `\ud83d`
	data := []byte(`{"text":"` + long + `","raw":{"k":["` + esc + `",1]},"named":"` + long + `","any":{"a":["` + long + `"]},` +
		`"map":{"m":{"s":"` + esc + `"}},"ptr":{"s":"` + long + `"},"items":[{"s":"x"},{"s":"` + long + `"}],"arr":["` + long + `"],"e":"` + long + `"}`)
	var want doc
	require.NoError(t, json.Unmarshal(data, &want))
	c := New(data, 20, 0)
	require.NotNil(t, c)
	require.Len(t, c.longs, 9)
	var got doc
	require.NoError(t, json.Unmarshal(c.Small, &got))
	c.Put(reflect.ValueOf(&got))
	assert.True(t, c.Done())
	assert.Equal(t, want, got)
	assert.True(t, bytes.Contains(got.Raw, []byte(esc)), "the raw literal is spliced back as sent")

	// A long string in a member the type does not have goes nowhere.
	c = New([]byte(`{"text":"x","other":"`+long+`"}`), 20, 0)
	require.NotNil(t, c)
	got = doc{}
	require.NoError(t, json.Unmarshal(c.Small, &got))
	c.Put(reflect.ValueOf(&got))
	assert.False(t, c.Done())

	// Nor does one whose member comes again.
	c = New([]byte(`{"text":"`+long+`","text":"x"}`), 20, 0)
	got = doc{}
	require.NoError(t, json.Unmarshal(c.Small, &got))
	c.Put(reflect.ValueOf(&got))
	assert.False(t, c.Done())
}

type custom struct{ S string }

func (c *custom) UnmarshalJSON(b []byte) error { return json.Unmarshal(b, &c.S) }

type text struct{ s string }

func (t *text) UnmarshalText(b []byte) error { t.s = string(b); return nil }

func TestPlain(t *testing.T) {
	type tree struct {
		Next *tree
		Kids []tree
		M    map[string]json.RawMessage
		A    any
	}
	assert.True(t, Plain(reflect.TypeFor[*doc]()))
	assert.True(t, Plain(reflect.TypeFor[*tree]()), "a recursive type")
	assert.False(t, Plain(reflect.TypeFor[*struct{ C []custom }]()))
	assert.False(t, Plain(reflect.TypeFor[*struct{ T map[string]*text }]()))
	assert.False(t, Plain(reflect.TypeFor[*struct{ K map[text]string }]()))
	assert.False(t, Plain(reflect.TypeFor[*struct{ I interface{ M() } }]()))
	assert.True(t, Plain(reflect.TypeFor[*struct{ c custom }]()), "an unexported field is not decoded")
}

// BenchmarkPutMap measures Put over a map of n entries and n strings cut,
// against encoding/json decoding the same message: Put's work grows with
// what it walks, not with the product of the two (a hostile message with
// many of both cost quadratic time before: put/decode about 15 at n=6000,
// now under 0.5).
func BenchmarkPutMap(b *testing.B) {
	const n = 6000
	var m strings.Builder
	m.WriteString(`{"map":{`)
	for i := range n {
		if i > 0 {
			m.WriteByte(',')
		}
		fmt.Fprintf(&m, `"%d":{}`, i)
	}
	m.WriteString(`},"items":[`)
	for i := range n {
		if i > 0 {
			m.WriteByte(',')
		}
		m.WriteString(`{"s":"ab"}`)
	}
	m.WriteString(`]}`)
	data := []byte(m.String())
	var decode, put time.Duration
	for range b.N {
		start := time.Now()
		require.NoError(b, json.Unmarshal(data, new(doc)))
		decode += time.Since(start)
		c := New(data, 2, 0)
		require.Len(b, c.longs, n)
		var got doc
		require.NoError(b, json.Unmarshal(c.Small, &got))
		start = time.Now()
		c.Put(reflect.ValueOf(&got))
		put += time.Since(start)
		require.True(b, c.Done())
	}
	b.ReportMetric(float64(put)/float64(decode), "put/decode")
}

// New cuts nothing when the long strings are less than minTotal bytes: a
// large message of short values and one long string is left whole.
func TestCutMinTotal(t *testing.T) {
	long := strings.Repeat("x", 100)
	data := []byte(`{"a":"` + long + `","b":[` + strings.Repeat(`1,`, 200) + `1]}`)
	assert.Nil(t, New(data, 50, len(data)/2), "100 bytes of %d", len(data))
	c := New(data, 50, 100)
	require.NotNil(t, c, "100 bytes, at least 100")
	assert.Len(t, c.longs, 1)
}

// A json.Number takes a string only if it holds a number, so a
// placeholder is not decoded like the string it stands for: with a nonce
// of digits alone (one in about 3 million messages) it is a number, and
// the string put back is not. Plain refuses the type.
func TestPlainRefusesNumber(t *testing.T) {
	type num struct {
		N json.Number `json:"n"`
	}
	data := []byte(`{"n":"0123456789abcdef"}`)
	werr := json.Unmarshal(data, new(num))
	require.Error(t, werr, "not a number")
	c := New(data, 10, 0)
	require.NotNil(t, c)
	digits := []byte("12345678901234567890123456789012")
	c.Small = bytes.ReplaceAll(c.Small, c.nonce[:], digits)
	copy(c.nonce[:], digits)
	var got num
	require.NoError(t, json.Unmarshal(c.Small, &got), "the placeholder is a number")
	c.Put(reflect.ValueOf(&got))
	require.True(t, c.Done(), "and the string is put back, where encoding/json fails: %v", werr)
	assert.False(t, Plain(reflect.TypeFor[*num]()))
	assert.False(t, Plain(reflect.TypeFor[*struct{ M map[string]json.Number }]()))
}

// A placeholder in a value Put cannot set stays, and Done says so.
func TestPutUnsettable(t *testing.T) {
	c := New([]byte(`{"text":"0123456789"}`), 10, 0)
	require.NotNil(t, c)
	var got doc
	require.NoError(t, json.Unmarshal(c.Small, &got))
	c.Put(reflect.ValueOf(got))
	assert.False(t, c.Done(), "a struct, not a pointer to it")

	c = New([]byte(`["0123456789"]`), 10, 0)
	require.NotNil(t, c)
	var arr [1]any
	require.NoError(t, json.Unmarshal(c.Small, &arr))
	c.Put(reflect.ValueOf(arr))
	assert.False(t, c.Done(), "an array of any, not a pointer to it")
}

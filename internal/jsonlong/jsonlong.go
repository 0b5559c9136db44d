// Package jsonlong has one job: to spare encoding/json the long strings of
// a large JSON message, which it would read three times, byte by byte
// (validating the message, finding each literal's end, unquoting it).
//
// New finds the long string values of a message (not its keys), checks
// each as encoding/json would, and returns a Cut: a copy of the message in
// which each of them is replaced by a short placeholder string, a nonce
// drawn from crypto/rand for this message and the string's index (see
// StringEnd for how a literal's end is found). The caller decodes the copy
// with encoding/json, into a value of a type that Plain
// accepts, then calls Put on it: each placeholder that landed in a string
// is replaced by the string it stands for, decoded here in one pass with
// encoding/json's semantics (escapes, surrogate pairs, and U+FFFD for a
// lone surrogate or a byte that is not UTF-8), and each that landed in a
// json.RawMessage by the original literal's bytes. Done then reports
// whether every placeholder was put back exactly once; when it was not (a
// long string went into a field of another type, an unknown member, a
// repeated one, ...), or when the copy did not decode, the caller decodes
// the original message with encoding/json instead, so that the outcome
// never depends on this package.
//
// A copy with its long strings replaced is valid JSON exactly when the
// message is: New replaces only a literal that is a valid string with
// another valid string, and finds literals as encoding/json does on any
// prefix that it accepts. So encoding/json's validation of the copy is
// the validation of the message.
package jsonlong

import (
	"bytes"
	"crypto/rand"
	"encoding"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// Cut is a message with its long strings cut out; see the package doc.
type Cut struct {
	// Small is the message with each long string value replaced by its
	// placeholder.
	Small []byte
	data  []byte // the original message, which must not change until Done
	nonce [nonceLen]byte
	longs []long
	first [4]long // longs' room, for a message with few
	put   int     // the placeholders put back
	bad   bool    // a placeholder was seen that is not one, or twice
}

// long is one string literal cut out.
type long struct {
	start, end int  // the literal's extent in data, quotes included
	size       int  // its decoded size in bytes
	plain      bool // decoded, it is its own bytes (no escape, valid UTF-8)
	seen       bool // its placeholder was put back
}

// nonceLen is the placeholder's nonce in hexadecimal digits (128 bits).
const nonceLen = 32

// New cuts data's string values of at least minLen bytes (between the
// quotes). It returns nil when there are none, when they add up to less
// than minTotal bytes as sent (a caller that wants a cut only where the
// long strings are most of the message: below that, copying the rest
// costs about what the strings save, and holds as much memory), or when
// one of them is not a valid JSON string (encoding/json then reports it).
// data must not change while the Cut is in use.
func New(data []byte, minLen, minTotal int) *Cut {
	c := &Cut{data: data}
	longs := c.first[:0]
	removed := 0
	for i := 0; ; {
		j := bytes.IndexByte(data[i:], '"')
		if j < 0 {
			break
		}
		start := i + j
		end := StringEnd(data, start)
		if end < 0 {
			break
		}
		i = end
		if end-start-2 < minLen || isKey(data, end) {
			continue
		}
		size, plain, ok := measure(data[start+1 : end-1])
		if !ok {
			return nil
		}
		longs = append(longs, long{start: start, end: end, size: size, plain: plain})
		removed += end - start
	}
	if len(longs) == 0 || removed < minTotal {
		return nil
	}
	var r [nonceLen / 2]byte
	if _, err := rand.Read(r[:]); err != nil {
		return nil // no nonce, no placeholders: encoding/json does it all
	}
	hex.Encode(c.nonce[:], r[:])
	c.longs = longs
	c.Small = make([]byte, 0, len(data)-removed+len(longs)*(nonceLen+2+20))
	last := 0
	for k, l := range longs {
		c.Small = append(c.Small, data[last:l.start]...)
		c.Small = c.placeholder(c.Small, k)
		last = l.end
	}
	c.Small = append(c.Small, data[last:]...)
	return c
}

// placeholder appends the quoted placeholder of the k-th string to b.
func (c *Cut) placeholder(b []byte, k int) []byte {
	b = append(b, '"')
	b = append(b, c.nonce[:]...)
	b = strconv.AppendInt(b, int64(k), 10)
	return append(b, '"')
}

// index returns the string whose placeholder s is, -1 if s is no
// placeholder; a string that starts with the nonce but is not one marks
// the Cut bad.
func (c *Cut) index(s string) int {
	if len(s) <= nonceLen || s[:nonceLen] != string(c.nonce[:]) {
		return -1
	}
	k, err := strconv.Atoi(s[nonceLen:])
	if err != nil || k < 0 || k >= len(c.longs) || strconv.Itoa(k) != s[nonceLen:] || c.longs[k].seen {
		c.bad = true
		return -1
	}
	c.longs[k].seen = true
	c.put++
	return k
}

// Done reports whether every placeholder was put back, exactly once.
func (c *Cut) Done() bool {
	return !c.bad && c.put == len(c.longs)
}

// Put replaces the placeholders found in v, a value decoded from Small:
// in its strings, and in its json.RawMessage bytes. It follows pointers,
// slices, arrays, struct fields that encoding/json sets, maps, and
// interfaces. A placeholder in a value that cannot be set (v not reached
// through a pointer) is not put back.
func (c *Cut) Put(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			c.Put(v.Elem())
		}
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		e := v.Elem()
		if e.Kind() == reflect.String {
			if v.CanSet() {
				if k := c.index(e.String()); k >= 0 {
					v.Set(reflect.ValueOf(c.decode(k)).Convert(e.Type()))
				}
			}
			return
		}
		c.Put(e)
	case reflect.String:
		if v.CanSet() {
			if k := c.index(v.String()); k >= 0 {
				v.SetString(c.decode(k))
			}
		}
	case reflect.Slice:
		if v.Type() == rawType {
			if v.CanSet() {
				v.SetBytes(c.splice(v.Bytes()))
			}
			return
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return // bytes, decoded from base64: no string in them
		}
		for i := range v.Len() {
			c.Put(v.Index(i))
		}
	case reflect.Array:
		for i := range v.Len() {
			c.Put(v.Index(i))
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() || f.Anonymous {
				c.Put(v.Field(i))
			}
		}
	case reflect.Map:
		if !v.CanInterface() {
			return // behind a field encoding/json does not set
		}
		// Map values are not addressable: each is copied into e, and
		// stored back (SetMapIndex copies it) if a placeholder in it was
		// replaced.
		e := reflect.New(v.Type().Elem()).Elem()
		for it := v.MapRange(); it.Next(); {
			e.Set(it.Value())
			before := c.put
			c.Put(e)
			if c.put != before {
				v.SetMapIndex(it.Key(), e)
			}
		}
	}
}

// splice returns raw with each placeholder replaced by the literal it
// stands for, raw itself when there is none.
func (c *Cut) splice(raw []byte) []byte {
	if !bytes.Contains(raw, c.nonce[:]) {
		return raw
	}
	var out []byte
	last := 0
	for i := 0; ; {
		j := bytes.Index(raw[i:], c.nonce[:])
		if j < 0 {
			break
		}
		at := i + j
		i = at + nonceLen
		if at == 0 || raw[at-1] != '"' {
			c.bad = true // no placeholder of ours: the nonce inside a string
			continue
		}
		q := bytes.IndexByte(raw[i:], '"')
		if q < 0 {
			c.bad = true
			break
		}
		k := c.index(string(raw[at : i+q]))
		if k < 0 {
			c.bad = true
			continue
		}
		l := c.longs[k]
		out = append(out, raw[last:at-1]...)
		out = append(out, c.data[l.start:l.end]...)
		i += q + 1
		last = i
	}
	return append(out, raw[last:]...)
}

// decode returns the k-th string, unquoted.
func (c *Cut) decode(k int) string {
	l := c.longs[k]
	s := c.data[l.start+1 : l.end-1]
	if l.plain {
		return string(s)
	}
	var b strings.Builder
	b.Grow(l.size)
	unquote(&b, s)
	return b.String()
}

var (
	rawType       = reflect.TypeFor[json.RawMessage]()
	unmarshaler   = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshal = reflect.TypeFor[encoding.TextUnmarshaler]()
	numberType    = reflect.TypeFor[json.Number]()
	plainTypes    sync.Map // reflect.Type → bool
)

// Plain reports whether encoding/json decodes into t without any
// UnmarshalJSON or UnmarshalText method in its tree (json.RawMessage
// aside), and without a json.Number (which takes a string only if it holds
// a number): a placeholder is then decoded like the string it stands for,
// whatever reads it, so that putting the string back gives what decoding
// it would have. A field of type any counts as plain: encoding/json fills
// an empty one with maps, slices and strings of its own.
func Plain(t reflect.Type) bool {
	if ok, found := plainTypes.Load(t); found {
		return ok.(bool)
	}
	ok := plain(t, map[reflect.Type]bool{})
	plainTypes.Store(t, ok)
	return ok
}

func plain(t reflect.Type, seen map[reflect.Type]bool) bool {
	if t == rawType || seen[t] {
		return true
	}
	seen[t] = true
	if t == numberType || t.Implements(unmarshaler) || t.Implements(textUnmarshal) ||
		reflect.PointerTo(t).Implements(unmarshaler) || reflect.PointerTo(t).Implements(textUnmarshal) {
		return false
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return plain(t.Elem(), seen)
	case reflect.Map:
		return plain(t.Key(), seen) && plain(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); (f.IsExported() || f.Anonymous) && !plain(f.Type, seen) {
				return false
			}
		}
		return true
	case reflect.Interface:
		return t.NumMethod() == 0
	case reflect.Chan, reflect.Func, reflect.Complex64, reflect.Complex128, reflect.UnsafePointer:
		return false
	}
	return true
}

// StringEnd returns the index just past the string literal that opens at
// i, -1 if it does not end. In a valid literal a quote is escaped exactly
// when an odd run of backslashes precedes it.
func StringEnd(data []byte, i int) int {
	for j := i + 1; ; {
		k := bytes.IndexByte(data[j:], '"')
		if k < 0 {
			return -1
		}
		q := j + k
		n := 0
		for q-n-1 > i && data[q-n-1] == '\\' {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
}

// isKey reports whether the literal that ends just before i is an
// object's member name: a colon follows it.
func isKey(data []byte, i int) bool {
	for ; i < len(data); i++ {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
		case ':':
			return true
		default:
			return false
		}
	}
	return false
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// classes reports whether s holds a control character, and whether it
// holds a byte that is not ASCII, reading it eight bytes at a time.
func classes(s []byte) (ctrl, high bool) {
	var c, h uint64
	// (x - 0x20…) &^ x has the high bit set in some byte of x exactly
	// when a byte of x is below 0x20 (not always in that byte: a borrow
	// may mark the bytes above it), which is all that is asked here.
	i := 0
	for ; i+32 <= len(s); i += 32 {
		x0 := binary.LittleEndian.Uint64(s[i:])
		x1 := binary.LittleEndian.Uint64(s[i+8:])
		x2 := binary.LittleEndian.Uint64(s[i+16:])
		x3 := binary.LittleEndian.Uint64(s[i+24:])
		h |= x0 | x1 | x2 | x3
		c |= (x0-0x20*ones)&^x0 | (x1-0x20*ones)&^x1 | (x2-0x20*ones)&^x2 | (x3-0x20*ones)&^x3
	}
	for ; i+8 <= len(s); i += 8 {
		x := binary.LittleEndian.Uint64(s[i:])
		h |= x
		c |= (x - 0x20*ones) &^ x
	}
	for ; i < len(s); i++ {
		h |= uint64(s[i])
		if s[i] < 0x20 {
			c |= highs
		}
	}
	return c&highs != 0, h&highs != 0
}

// measure checks the content of a string literal, between the quotes
// that StringEnd found, as encoding/json does, and returns its decoded
// size, and whether decoded it is its own bytes. The content is read in
// runs between backslashes: a run has no quote (the literal ends at the
// first quote that is not escaped), so it is valid when it has no control
// character, and its own decoding when it is valid UTF-8.
func measure(s []byte) (size int, plain, ok bool) {
	plain = true
	for i := 0; ; {
		k := bytes.IndexByte(s[i:], '\\')
		if k < 0 {
			k = len(s) - i
		}
		run := s[i : i+k]
		ctrl, high := classes(run)
		switch {
		case ctrl:
			return 0, false, false
		case high && !utf8.Valid(run):
			plain = false
			for j := 0; j < len(run); {
				r, n := utf8.DecodeRune(run[j:])
				j += n
				size += utf8.RuneLen(r) // U+FFFD for a byte that is not UTF-8
			}
		default:
			size += len(run)
		}
		if i += k; i == len(s) {
			return size, plain, true
		}
		plain = false
		n, r, ok := escape(s[i:])
		if !ok {
			return 0, false, false
		}
		i += n
		size += utf8.RuneLen(r)
	}
}

// escape reads the escape sequence at the start of s: its length and the
// rune it stands for, as encoding/json decodes it (a \u surrogate pair is
// one rune, a lone surrogate U+FFFD).
func escape(s []byte) (n int, r rune, ok bool) {
	if len(s) < 2 {
		return 0, 0, false
	}
	switch s[1] {
	case '"', '\\', '/':
		return 2, rune(s[1]), true
	case 'b':
		return 2, '\b', true
	case 'f':
		return 2, '\f', true
	case 'n':
		return 2, '\n', true
	case 'r':
		return 2, '\r', true
	case 't':
		return 2, '\t', true
	case 'u':
		r := hex4(s[2:])
		if r < 0 {
			return 0, 0, false
		}
		if !utf16.IsSurrogate(r) {
			return 6, r, true
		}
		if len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
			if r2 := hex4(s[8:]); r2 >= 0 {
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					return 12, d, true
				}
			}
		}
		return 6, utf8.RuneError, true
	}
	return 0, 0, false
}

// hex4 returns the value of the four hexadecimal digits at the start of
// s, -1 if there are not four.
func hex4(s []byte) rune {
	if len(s) < 4 {
		return -1
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// unquote writes the decoded content of a string literal that measure
// accepted.
func unquote(b *strings.Builder, s []byte) {
	for i := 0; ; {
		k := bytes.IndexByte(s[i:], '\\')
		if k < 0 {
			k = len(s) - i
		}
		run := s[i : i+k]
		if utf8.Valid(run) {
			b.Write(run)
		} else {
			for j := 0; j < len(run); {
				r, n := utf8.DecodeRune(run[j:]) // U+FFFD for a byte that is not UTF-8
				b.WriteRune(r)
				j += n
			}
		}
		if i += k; i == len(s) {
			return
		}
		n, r, _ := escape(s[i:])
		b.WriteRune(r)
		i += n
	}
}

package permission

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"hash"
	"io"
)

// fingerprint is a hash of a tool's definition: its title, description,
// input schema and annotations.
type fingerprint [sha256.Size]byte

// definition remembers the definition of a tool by two fingerprints: one of
// the fields exactly as written, cheap to compare on every call, and one
// with the input schema in canonical form, computed only when the first
// differs. Two definitions whose schemas differ only in white space or in
// the order of object keys are thus the same, and a server that
// re-serialises its schema does not make the Policy ask again.
type definition struct {
	written, canonical fingerprint
}

// definitionOf returns the definition of r, whose fingerprint as written is
// written.
func definitionOf(r *Request, written fingerprint) definition {
	return definition{written: written, canonical: fingerprintOf(r, canonicalJSON(r.InputSchema))}
}

// matches reports whether r, whose fingerprint as written is written, has
// definition d.
func (d definition) matches(r *Request, written fingerprint) bool {
	return d.written == written || d.canonical == fingerprintOf(r, canonicalJSON(r.InputSchema))
}

// fingerprintOf hashes r's definition, with schema standing for its input
// schema.
func fingerprintOf(r *Request, schema []byte) fingerprint {
	h := sha256.New()
	writeField(h, []byte(r.Title))
	writeField(h, []byte(r.Description))
	writeField(h, schema)
	a := r.Annotations
	h.Write([]byte{hintByte(a.ReadOnlyHint), hintByte(a.DestructiveHint), hintByte(a.IdempotentHint), hintByte(a.OpenWorldHint)})
	var f fingerprint
	h.Sum(f[:0])
	return f
}

// writeField writes b with its length first, so that no two different
// sequences of fields hash the same bytes.
func writeField(h hash.Hash, b []byte) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(b)))
	h.Write(n[:])
	h.Write(b)
}

func hintByte(p *bool) byte {
	switch {
	case p == nil:
		return 0
	case *p:
		return 1
	}
	return 2
}

// canonicalJSON re-encodes one JSON value with sorted object keys and no
// white space, keeping numbers as written. Anything that is not exactly one
// JSON value is returned as it is.
func canonicalJSON(raw []byte) []byte {
	if len(raw) == 0 {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return raw
	}
	if _, err := dec.Token(); err != io.EOF {
		return raw
	}
	out, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return out
}

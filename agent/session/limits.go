package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits every Store applies.
const (
	// MaxIDBytes is the longest conversation ID, in bytes.
	MaxIDBytes = 512
	// MaxValueBytes is the largest message, and the largest state, a
	// Store accepts: enough for a message with a few large images inlined
	// and for the state of a paused run of thousands of messages, small
	// enough that one value cannot exhaust a host's memory by accident.
	MaxValueBytes = 64 << 20
	// DefaultListLimit is the page size of List when ListOptions.Limit is
	// not positive.
	DefaultListLimit = 100
	// DefaultHistoryLimit is the page size of History when its limit is
	// not positive.
	DefaultHistoryLimit = 1000
)

// Errors a Store returns, wrapped; test them with errors.Is.
var (
	// ErrNotFound: there is no conversation with that ID.
	ErrNotFound = errors.New("session: no such conversation")
	// ErrConflict: Batch.IfRevision was not the conversation's revision.
	ErrConflict = errors.New("session: the conversation changed (revision mismatch)")
	// ErrInvalid: an ID or a Batch breaks a rule of this package.
	ErrInvalid = errors.New("session: invalid")
)

// CheckID returns an error wrapping ErrInvalid unless id is a valid
// conversation ID: not empty, valid UTF-8 without a NUL byte, at most
// MaxIDBytes long. Stores call it; a host may call it first.
func CheckID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w conversation ID: empty", ErrInvalid)
	case len(id) > MaxIDBytes:
		return fmt.Errorf("%w conversation ID: %d bytes, more than %d", ErrInvalid, len(id), MaxIDBytes)
	case !utf8.ValidString(id) || strings.IndexByte(id, 0) >= 0:
		return fmt.Errorf("%w conversation ID: not valid UTF-8 without NUL", ErrInvalid)
	}
	return nil
}

// Check returns an error wrapping ErrInvalid when b breaks a rule that
// does not depend on what is stored: a message or state that is not valid
// JSON in valid UTF-8 or is larger than MaxValueBytes, State set with
// ClearState, a negative Compaction.Through or IfRevision. Stores call it
// (then Precondition); the error names the value, never quotes it.
func (b *Batch) Check() error {
	if err := checkValues("message", b.Messages); err != nil {
		return err
	}
	if c := b.Compaction; c != nil {
		if c.Through < 0 {
			return fmt.Errorf("%w compaction: Through %d is negative", ErrInvalid, c.Through)
		}
		if err := checkValues("compaction message", c.Messages); err != nil {
			return err
		}
	}
	if b.State != nil {
		if b.ClearState {
			return fmt.Errorf("%w batch: both State and ClearState are set", ErrInvalid)
		}
		if err := checkValue("state", b.State); err != nil {
			return err
		}
	}
	if b.IfRevision < 0 {
		return fmt.Errorf("%w batch: IfRevision %d is negative", ErrInvalid, b.IfRevision)
	}
	return nil
}

// Precondition returns the error Append must return, if any, for b on a
// conversation at revision with last as its last sequence number (0 and
// 0 when it does not exist): ErrConflict for an IfRevision that is not
// revision, ErrInvalid for a Compaction.Through past the last message
// once b's messages are appended. Stores call it inside their
// transaction, after Check.
func (b *Batch) Precondition(revision, last int64) error {
	if b.IfRevision != 0 && b.IfRevision != revision {
		return fmt.Errorf("%w: revision %d, not %d", ErrConflict, revision, b.IfRevision)
	}
	if c := b.Compaction; c != nil {
		if end := last + int64(len(b.Messages)); c.Through > end {
			return fmt.Errorf("%w compaction: Through %d is past the last message, %d", ErrInvalid, c.Through, end)
		}
	}
	return nil
}

func checkValues(what string, vs []json.RawMessage) error {
	for i, v := range vs {
		if err := checkValue(fmt.Sprintf("%s %d", what, i), v); err != nil {
			return err
		}
	}
	return nil
}

func checkValue(what string, v json.RawMessage) error {
	switch {
	case len(v) > MaxValueBytes:
		return fmt.Errorf("%w %s: %d bytes, more than %d", ErrInvalid, what, len(v), MaxValueBytes)
	case !utf8.Valid(v) || !json.Valid(v):
		return fmt.Errorf("%w %s: not valid JSON in valid UTF-8", ErrInvalid, what)
	}
	return nil
}

package sse

import (
	"errors"
	"fmt"
	"io"
)

// ErrEventTooLarge ends a stream with an event larger than
// Options.MaxEventSize. Match it with errors.Is.
var ErrEventTooLarge = errors.New("sse: event too large")

// ErrIdleTimeout ends a stream that sent nothing for Options.IdleTimeout.
// Match it with errors.Is.
var ErrIdleTimeout = errors.New("sse: idle timeout")

// errIncomplete ends a stream that stops inside an event: after its first
// field or in the middle of a line, before the blank line that would
// dispatch it.
var errIncomplete = fmt.Errorf("sse: stream ended inside an event: %w", io.ErrUnexpectedEOF)

// Package sse decodes Server-Sent Events: the text/event-stream responses
// of the MCP Streamable HTTP transport and of streaming LLM APIs such as
// OpenAI's chat completions.
//
// A [Decoder] follows the WHATWG HTML standard's rules for interpreting an
// event stream: fields "event", "data", "id" and "retry"; one space after
// the colon stripped; data lines joined with "\n"; comments and unknown
// fields ignored; CR, LF and CRLF line endings; a leading byte order mark
// stripped. It is built on the Read iterator of github.com/tmaxmax/go-sse
// and adds what a client of a hostile or unreliable server needs:
//
//   - a maximum event size ([Options.MaxEventSize], 16 MiB by default), so
//     that a huge event ends the stream with [ErrEventTooLarge] instead of
//     growing memory;
//   - an idle timeout ([Options.IdleTimeout], off by default), so that a
//     stalled stream ends with [ErrIdleTimeout] instead of hanging;
//   - context cancellation that ends iteration promptly, closing the
//     stream if it is an [io.Closer] to unblock a pending read;
//   - the last event ID and the server's retry delay, which a client needs
//     to resume a broken stream ([Decoder.LastEventID], [Decoder.Retry]);
//   - WHATWG dispatch rules where go-sse's Read differs: a block without a
//     data field is not dispatched, and an event that the stream ends
//     without terminating is discarded and reported as
//     [io.ErrUnexpectedEOF] rather than delivered.
//
// Decoding costs go-sse's Read plus a vectorized pass over the bytes to
// find line ends and one copy of them, and no allocation per event beyond
// Read's own. The decoder reads the stream into pooled chunks and hands
// go-sse only whole events, so a large event arriving in many small network
// reads is parsed in linear time, where go-sse alone rescans it after every
// read; and it gives each go-sse Read a MaxEventSize about the size of the
// events seen, so that go-sse's scanner starts with a buffer that size (a
// short response then costs no 4 KiB buffer).
package sse

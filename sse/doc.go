// Package sse decodes Server-Sent Events: the text/event-stream responses
// of the MCP Streamable HTTP transport and of streaming LLM APIs such as
// OpenAI's chat completions.
//
// A [Decoder] follows the WHATWG HTML standard's rules for interpreting an
// event stream: fields "event", "data", "id" and "retry"; one space after
// the colon stripped; data lines joined with "\n"; comments and unknown
// fields ignored; CR, LF and CRLF line endings; a leading byte order mark
// stripped. It adds what a client of a hostile or unreliable server needs:
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
//   - an event that the stream ends without terminating is discarded and
//     reported as [io.ErrUnexpectedEOF] rather than delivered.
//
// Decoding is one vectorized pass over the bytes to find line ends, as they
// arrive, and one copy of each event's data: the stream is read into pooled
// 32 KiB chunks, each line is interpreted where it lies, and an event's data
// is copied out of the chunks once, when it is delivered, into a slice of
// its exact size ([Decoder.Events]) or into a buffer the decoder reuses
// ([Decoder.RawEvents], which then allocates nothing for an event's data
// once that buffer has grown to the largest event's size). A large
// event arriving in many small network reads is thus decoded in linear
// time, with no buffer grown by doubling. A short response costs no buffer
// once the process has decoded a few (the chunks are pooled; those of an
// event above 4 MiB are left to the collector, so that a large event is not
// held a second time by the pool while the caller decodes it).
//
// The tests check the decoder against a line-by-line reading of the WHATWG
// rules, on every stream the fuzzer finds and in every chunking.
package sse

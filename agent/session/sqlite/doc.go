// Package sqlite is a [session.Store] in an SQLite database file: the
// embedded default, for a host on one machine, with no set-up beyond the
// file's path ([Open] creates the file and its tables). Several processes
// may open the same file at once.
//
// It uses modernc.org/sqlite, SQLite compiled to pure Go, so that neither
// the host nor its users need a C toolchain (CGO_ENABLED=0 builds work,
// and cross-compiling stays `GOOS=... go build`); it is the most used
// pure-Go SQLite and follows SQLite's releases closely. The price is
// speed on heavy queries, which this store does not make (its README
// entry gives the measured latencies), and a larger binary.
//
// The database runs in WAL mode with synchronous=FULL: an Append that
// returned is on disk, and survives a crash of the process or of the
// machine; readers never wait for the writer. Writers take the database
// in turn: an Append waits for another process's Append up to
// [BusyTimeout]. WAL needs a local file system (not NFS or SMB), where
// SQLite's locks work.
//
// The tables, created by Open if they do not exist:
//
//	mini_me_sessions                 one row per conversation: id, revision,
//	                                 last, through, state, created, updated
//	mini_me_session_messages         (session, seq, body): every message
//	mini_me_session_compactions      (session, idx, body): the messages of
//	                                 the conversation's compaction
//
// Messages and states are stored as the JSON text they were given, in
// clear; times as Unix microseconds.
package sqlite

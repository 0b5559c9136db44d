// Package postgres is a [session.Store] in a PostgreSQL database, for
// hosts that run several workers, on one machine or many, over the same
// conversations. It uses github.com/jackc/pgx/v5 (pure Go, as the rest of
// mini-me's PostgreSQL support).
//
// Each Append is one transaction that locks its conversation's row: the
// Appends to one conversation take their turn, those to different
// conversations do not wait for each other. Load reads in one REPEATABLE
// READ transaction: a snapshot no concurrent Append changes. What
// PostgreSQL committed survives a crash of the worker (the server rolls
// back a transaction whose client is gone) and, with the server's default
// fsync and synchronous_commit, of the server.
//
// The tables, created by [Store.Setup] if they do not exist:
//
//	mini_me_sessions                 one row per conversation: id, revision,
//	                                 last, through, state, created, updated
//	mini_me_session_messages         (session, seq, body): every message
//	mini_me_session_compactions      (session, idx, body): the messages of
//	                                 the conversation's compaction
//
// Messages and states are stored as json (not jsonb: the text is kept as
// given, key order and spacing included), in clear; grant access to the
// tables as the conversations deserve. To keep the tables of several
// hosts apart in one database, give each its schema (search_path in the
// connection string).
package postgres

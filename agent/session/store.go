package session

import (
	"context"
	"encoding/json"
	"time"
)

// Store keeps conversations, each under an ID the host chooses. The
// messages of a conversation are numbered from 1 in the order they were
// appended (their sequence numbers), and never change once stored.
//
// Every method may be called concurrently, from any number of goroutines
// and, for a store on a shared database, from any number of processes
// holding it. Each method honours ctx: once ctx ends it returns an error
// that wraps ctx.Err(), unless it had already finished.
//
// The contract, method by method:
//
// Append applies b to the conversation id as one atomic step, creating
// the conversation if it does not exist: it appends b.Messages after the
// last message, in order and contiguously (the appends of two writers
// never interleave), then records b.Compaction, then replaces or clears
// the state; all of it or, on any error, none of it. Once Append has
// returned nil the batch is stored: a crash of the writer, or of another
// writer in the middle of its own Append, never loses it; a crash in the
// middle of an Append loses that batch whole, never part of it. Append
// returns the conversation's Info after the batch. It returns an error
// wrapping [ErrInvalid] for an invalid id or batch (see [CheckID] and
// [Batch.Check]) and [ErrConflict] when b.IfRevision is not zero and not
// the conversation's revision, and stores nothing then. An Append that
// fails stores nothing, with one exception no database can rule out: when
// ctx ends or the connection breaks while the database commits, the
// batch may have been stored; Append again with IfRevision set to the
// revision the first one expected to find out.
//
// Load returns the conversation as the model should see it (see
// [Session.Messages]), its state and its Info, as one consistent
// snapshot: never half of a concurrent Append. It returns an error
// wrapping [ErrNotFound] when there is no conversation id.
//
// History returns the stored messages whose sequence numbers are greater
// than after, at most limit of them (limit <= 0 means
// [DefaultHistoryLimit]), in order, compacted ones included: the original
// turns. It returns an error wrapping [ErrNotFound] when there is no
// conversation id; an empty slice when there is no message after after.
//
// List returns the Info of the conversations whose IDs begin with
// opts.Prefix and sort after opts.After, in the byte order of their IDs,
// at most opts.Limit of them (<= 0 means [DefaultListLimit]); a page
// shorter than the limit is the last. To read the next page, call List
// again with After set to the last ID of the page.
//
// Delete removes the conversation id, its messages and its state; a
// conversation that does not exist is not an error. An Append to id
// afterwards starts a new conversation, numbered from 1 again.
//
// A Store stores what it is given in clear: conversations hold what the
// user, the model and the tools said, and states hold the same; protect
// the database as the conversations deserve. It never puts a message or a
// state in an error or a log record.
type Store interface {
	Append(ctx context.Context, id string, b Batch) (Info, error)
	Load(ctx context.Context, id string) (*Session, error)
	History(ctx context.Context, id string, after int64, limit int) ([]Entry, error)
	List(ctx context.Context, opts ListOptions) ([]Info, error)
	Delete(ctx context.Context, id string) error
}

// Batch is what one [Store.Append] applies, atomically. Its zero value
// appends nothing and changes nothing but the revision (and creates the
// conversation if it does not exist).
type Batch struct {
	// Messages are appended in order, each the JSON encoding of one
	// message: valid JSON in valid UTF-8, at most MaxValueBytes.
	Messages []json.RawMessage
	// Compaction, when not nil, replaces the conversation's compaction,
	// after Messages are appended (so it may replace some of them).
	Compaction *Compaction
	// State, when not nil, replaces the stored state: typically an
	// agent.State as JSON, for a run paused for approvals. ClearState
	// removes it (when a paused run is resumed). Setting both is invalid;
	// setting neither leaves the state as it is.
	State      json.RawMessage
	ClearState bool
	// IfRevision, when not zero, makes the Append conditional: it applies
	// only if the conversation's revision is IfRevision, and otherwise
	// fails with ErrConflict (a conversation that does not exist has
	// revision 0, so it always fails then). Zero appends whatever the
	// revision.
	//
	// It is how a host makes sure that a paused run is resumed at most
	// once, by whichever process claims it first: Load the conversation,
	// Append{ClearState: true, IfRevision: s.Revision}, and resume the
	// loaded state only if that Append succeeded.
	IfRevision int64
}

// Compaction records that the conversation's messages 1 to Through are
// replaced, in what [Store.Load] returns, by Messages (a summary, say).
// The replaced messages stay in the store ([Store.History] reads them). A
// new compaction replaces the previous one whole: it says again what
// replaces messages 1 to its own Through, so a second summary includes
// what the first one said.
type Compaction struct {
	// Through is the sequence number of the last message replaced, from 0
	// (replace nothing: Messages come first) to the conversation's last
	// message once the batch's messages are appended.
	Through int64
	// Messages replace them, each as Batch.Messages.
	Messages []json.RawMessage
}

// Info describes a stored conversation.
type Info struct {
	// ID is the conversation's ID.
	ID string
	// Revision counts the Appends applied to the conversation, from 1.
	Revision int64
	// Last is the sequence number of its last message: the number of
	// messages appended to it, compacted ones included.
	Last int64
	// Through is the sequence number of the last message its compaction
	// replaces; 0 when there is no compaction.
	Through int64
	// HasState says that a state is stored with it.
	HasState bool
	// Created and Updated are when the conversation was created and
	// last appended to, by the clock of the writer (Memory, SQLite) or
	// of the database server (PostgreSQL), to the microsecond.
	Created, Updated time.Time
}

// Session is a conversation as [Store.Load] returns it.
type Session struct {
	Info
	// Messages is the conversation as the model should see it: the
	// compaction's messages (if any), then the messages after its
	// Through, in order.
	Messages []json.RawMessage
	// State is the stored state; nil when there is none.
	State json.RawMessage
}

// Entry is a stored message and its sequence number, as [Store.History]
// returns them.
type Entry struct {
	Seq     int64
	Message json.RawMessage
}

// ListOptions selects the conversations [Store.List] returns.
type ListOptions struct {
	// Prefix keeps only the IDs that begin with it ("user-42/", say);
	// empty keeps all.
	Prefix string
	// After keeps only the IDs that sort after it, byte by byte: the last
	// ID of the previous page.
	After string
	// Limit is the most conversations returned; <= 0 means
	// DefaultListLimit.
	Limit int
}

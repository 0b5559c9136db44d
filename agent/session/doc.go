// Package session keeps conversations for hosts whose conversations
// outlive a process: a [Store] appends a conversation's messages as they
// come, loads it back, lists and deletes conversations, and keeps beside
// each one the state of a run paused for approvals, so that a run paused
// in one process resumes in another.
//
// A Store knows nothing of what a message holds: each is the JSON
// encoding of one message of package agent ([Encode] and [Decode] convert
// a slice), stored and given back byte for byte. So a store written today
// reads tomorrow's messages, and package session does not import agent.
//
// Messages are never rewritten. A long conversation is shortened by a
// [Compaction]: a record, appended like messages, that says which leading
// messages a few new ones (a summary, say) replace in what [Store.Load]
// returns; the messages it replaced stay in the store, where
// [Store.History] reads them.
//
// Implementations: [Memory] here (one process, for tests and short-lived
// hosts); SQLite, the embedded default, in the nested module
// git.rickub.com/bots-garden/mini-me/agent/session/sqlite; PostgreSQL, for
// workers on several machines, in the nested module
// git.rickub.com/bots-garden/mini-me/agent/session/postgres. Package
// sessiontest holds the conformance suite every implementation passes.
package session

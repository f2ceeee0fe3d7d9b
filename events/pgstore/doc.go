// Package pgstore is the PostgreSQL event store: an events.Log over one
// PostgreSQL database, with the envelope, canonical encoding and hash chain
// of the SQLite store (events.Store), held to the same conformance suite
// (events/storetest).
//
// One database holds the logs of any number of projects, told apart by a
// project column: a row per project in awr_heads, and the project in the
// key of every event and idempotency record. Each appending transaction
// locks its project's head row (SELECT ... FOR UPDATE) and advances it, so
// a project's seqs are assigned without gaps and in commit order across
// every process and machine that writes to it; reads at a revision run in
// a REPEATABLE READ transaction capped at that revision. The schema is
// created and moved forward by numbered, embedded migrations recorded in
// awr_schema_migrations. Each commit that appends sends a NOTIFY on the
// channel awr_events ("PROJECT:SEQ"), a wake-up for followers that read
// the log by position.
//
// A cache's write commits in two round trips, the lock (with the head and
// the server's clock) and the commit; a warm cache's, in one
// (Reserve and CommitSealed, events.OneTrip): sealed on the cache's head,
// on a connection reserved before the cache's write lock, its statements
// go with the lock (NOWAIT: under the cache's lock it waits for no lock,
// and for no other beyond lock_timeout) and a guard (head_guard), as one
// implicit transaction (a batch ends with one Sync), and the guard fails,
// making the server skip the rest and roll back, unless the head is still
// the one sealed on, the log is not fenced and the server's clock is
// within the write's bound. Anything else is decided again under the
// lock.
package pgstore

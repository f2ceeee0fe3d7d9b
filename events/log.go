package events

import (
	"context"
	"time"
)

// Log is the contract every awr event store meets: the SQLite Store today,
// a PostgreSQL store later. It is stated over the envelope alone (events
// with their payload bytes), and package storetest holds an implementation
// to it.
//
// A Log is safe for concurrent use, and several Logs may be open on one
// database at once, as several processes are: writes are serialized, seqs
// are assigned at commit without gaps, and a writer waits for another's
// lock as long as its ctx allows rather than fail.
type Log interface {
	// Append runs fn in one serialized write transaction and commits the
	// events fn appends through tx, or nothing at all when fn or any check
	// fails. Before fn runs, it looks up opts.RequestID (a repeat with the
	// same Fingerprint returns the first result with Replayed set and
	// appends nothing) and checks opts.ExpectedRevision against
	// opts.Streams. The first event appended carries opts.RequestID; every
	// event's occurred_at is opts.Now, raised to the head event's when
	// earlier, so it never decreases with seq.
	//
	// Errors: RevisionConflict, with details expected, actual and
	// conflicts (a []Conflict naming each newer event), when a stream in
	// opts.Streams or passed to tx.Guard has an event after
	// opts.ExpectedRevision; InvalidInput when opts.RequestID was used
	// with another Fingerprint, when opts.ExpectedRevision is beyond the
	// head or negative, or when opts.Actor is empty; Internal without
	// opts.Now, opts.Entropy, or a Fingerprint for a RequestID; Storage
	// when the store cannot be written or ctx ends while waiting for the
	// write lock. An error fn returns comes back as is when it is coded,
	// wrapped as Storage otherwise; errors.Is finds it either way.
	Append(ctx context.Context, opts WriteOptions, fn func(tx Appender) (any, error)) (*WriteResult, error)

	// ReadAt runs fn on a consistent snapshot of the log as it stood at
	// revision rev, or at the head when rev is negative: whatever is
	// appended meanwhile, or was appended after rev, stays invisible to
	// it. The snapshot is valid only while fn runs.
	//
	// Errors: InvalidInput when rev is beyond the head; Storage when the
	// store cannot be read; an error fn returns as Append returns it.
	ReadAt(ctx context.Context, rev int64, fn func(s Snapshot) error) error

	// Scan calls fn for each event with from <= seq <= to, in seq order,
	// all read from one consistent snapshot. A range past the head yields
	// the events up to the head; an empty range yields none.
	//
	// Errors: Storage when the store cannot be read; an error fn returns
	// as Append returns it, ending the scan.
	Scan(ctx context.Context, from, to int64, fn func(e *Event) error) error

	// Head returns the latest event's revision, hash and time (Revision 0
	// for an empty log).
	//
	// Errors: Storage when the store cannot be read.
	Head(ctx context.Context) (Head, error)

	// Close releases the store's connections. Closing twice is a no-op;
	// other methods fail with Storage once the store is closed.
	Close() error
}

// Appender is the store-agnostic side of an open write transaction, as
// Log.Append hands it to its fn. *Tx, the SQLite store's transaction, is
// one.
type Appender interface {
	// Append appends one event of the kind ne.Payload.Kind() to the
	// transaction (see Tx.Append for its errors).
	Append(ne NewEvent) (*Event, error)
	// Head returns the project_revision inside the transaction, counting
	// the events appended so far.
	Head() int64
	// StartRevision returns the project_revision when the transaction
	// began.
	StartRevision() int64
	// Now returns the write's clock reading.
	Now() time.Time
	// NewID returns a fresh ULID from the write's clock and entropy.
	NewID() string
	// Guard checks the write's expected revision against more streams,
	// for a write that learns which streams it touches while deciding.
	// Errors: RevisionConflict as Log.Append reports it.
	Guard(streams ...string) error
}

// Snapshot is a consistent view of a log as it stood at one revision, as
// Log.ReadAt hands it to its fn. Its methods run under ReadAt's ctx.
type Snapshot interface {
	// Head returns the revision the snapshot shows, with the hash and
	// time of the event at that revision.
	Head() Head
	// Scan calls fn for each event with from <= seq <= to, in seq order,
	// with to capped at the snapshot's revision.
	// Errors: Storage when the store cannot be read; any error fn returns,
	// unchanged, ending the scan.
	Scan(from, to int64, fn func(e *Event) error) error
}

// Head is the latest event of a log, or of a snapshot of it.
type Head struct {
	// Revision is the latest event's seq, the project_revision; 0 for an
	// empty log.
	Revision int64
	// Hash is the latest event's hash; for an empty log, the 32 zero bytes
	// the first event chains from.
	Hash []byte
	// OccurredAt is the latest event's occurred_at in UTC milliseconds; 0
	// for an empty log.
	OccurredAt int64
}

// The SQLite store and its transaction are a Log and an Appender.
var (
	_ Log      = (*Store)(nil)
	_ Appender = (*Tx)(nil)
)

package events

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/awr-dev/awr/internal/fault"
	"zombiezen.com/go/sqlite"
)

// Upstream is a shared log that a Store caches: the project's one log,
// held elsewhere (PostgreSQL, package pgstore) and appended to from many
// machines. A Store opened with Options.Upstream holds a copy of the
// shared log's events, byte for byte and with the same seqs and hashes,
// and the projections folded from them. Before every read it catches up
// from the shared log by position (the events after its own head), and it
// commits every write to the shared log first, under the shared log's
// write lock and after catching up inside it: a write decides on the
// latest state of every machine's writes, so two machines never both win
// a claim. The cache is disposable: removed, the next command builds it
// again from the shared log.
type Upstream interface {
	// Head returns the shared log's head.
	Head(ctx context.Context) (Head, error)
	// Scan calls fn for the shared log's events from..to, as Log.Scan.
	Scan(ctx context.Context, from, to int64, fn func(e *Event) error) error
	// Locked runs fn holding the shared log's write lock (writers of every
	// machine queue on it, each as long as ctx allows). What fn commits
	// through w is the shared log's when Commit returns nil; anything
	// else (fn failing, or returning without a commit) rolls back.
	Locked(ctx context.Context, fn func(w LockedLog) error) error
	// Describe names the shared log for messages and reports, without
	// any credential: "postgres HOST:PORT/DB as USER, project KEY".
	Describe() string
	// Project is the project's key in the shared store.
	Project() string
	// Close releases the shared log's connections.
	Close() error
}

// RequestLocker is an Upstream that looks a write's request id up as it
// takes its write lock, in one step: LockedRequest is Locked, and
// LockedLog.Request(requestID) answers from what was read with the lock.
// A write with a request id uses it when the Upstream has it.
type RequestLocker interface {
	LockedRequest(ctx context.Context, requestID string, fn func(w LockedLog) error) error
}

// OneTrip is an Upstream that commits a write sealed on the cache's head
// before taking its write lock, in one round trip: the lock, a check that
// the write may stand as sealed, the write and the commit sent together.
// A warm server's write uses it when the cache is at the head the store
// last saw; whenever the check refuses, the write is decided again under
// the lock (Locked), as every write was before.
//
// Lock order (Store.mu): the connection is reserved before the cache's
// write lock is taken, as a writer under Locked holds its connection and
// the shared log's lock before it; under the cache's write lock, the
// sealed write only tries the shared log's lock, and waits for nothing
// another writer may hold.
type OneTrip interface {
	// Warmth returns what the store knows of the shared log without
	// asking it.
	Warmth() Warmth
	// Reserve takes a connection to the shared log for one sealed write,
	// waiting for one as Locked would. The caller takes the cache's write
	// lock only after, and releases the reservation (Reserved.Release)
	// once that lock is released. Errors: those of Locked's wait for a
	// connection; the write is then decided under the lock.
	Reserve(ctx context.Context) (Reserved, error)
}

// Reserved is a connection to the shared log reserved for one write
// sealed before the lock (OneTrip.Reserve).
type Reserved interface {
	// CommitSealed takes the shared log's write lock, only if it is free,
	// and, only when w may stand as sealed, appends w.Events with
	// w.Request, advances the head and commits, all in one round trip on
	// the reserved connection. It waits for no lock another transaction
	// holds (beyond a moment, see the store), nor for a connection. It
	// may stand when the shared log's head is still w.On, the log is not
	// fenced (LockedLog.Moved), neither an event's id nor the request id
	// is in the log already, and, when w.Clocked, the time a write under
	// the lock would take (the shared clock at the lock, or the log's
	// last event's time when that is later: time runs forward) is not
	// before w.At nor more than w.Within after it.
	//
	// It returns true when the write is committed (acknowledged); false
	// with a nil error when nothing was written (the lock was held, the
	// check refused, a statement failed, or nothing reached the server):
	// the caller decides the write again under the lock. Errors: Storage,
	// saying the write may have been committed, when the connection was
	// lost after the batch was sent and before its answer came: Settle
	// answers it once the cache's write lock is released.
	CommitSealed(ctx context.Context, w SealedWrite) (bool, error)
	// Release gives the connection back. It is called once, after the
	// cache's write lock is released.
	Release()
	// Settle, after Release, answers a CommitSealed whose answer was
	// lost, when the shared log can tell: true when the write was
	// committed, false with a nil error when it was not (the caller
	// decides it again under the lock). It may wait for a connection.
	// Errors: CommitSealed's, when the shared log cannot tell yet.
	Settle(ctx context.Context) (bool, error)
}

// Warmth is what a OneTrip store knows of the shared log without asking
// it.
type Warmth struct {
	// Warm is set once the store has held the write lock: it has read
	// the shared clock.
	Warm bool
	// Seen is the highest revision of the shared log the store has seen:
	// a cache below it is behind.
	Seen int64
	// Clocked is set when writes take their time from the shared clock
	// (LockedLog.Clock), and Now is then that clock's time as the store
	// last read it, carried forward by this machine's clock.
	Clocked bool
	Now     time.Time
}

// SealedWrite is a write sealed on the cache's head before the shared
// log's lock (Reserved.CommitSealed).
type SealedWrite struct {
	// On is the head the events continue: the cache's when it sealed them.
	On Head
	// Clocked says whether the shared clock must agree with At.
	Clocked bool
	// At is the write's time: every event's occurred_at, and the time its
	// leases were judged at.
	At time.Time
	// Within bounds how far the shared clock may have run past At when
	// the lock is granted.
	Within time.Duration
	// Events are the write's events, sealed to continue On.
	Events []*Event
	// Request is the write's idempotency record, or nil.
	Request *RequestRecord
}

// LockedLog is the shared log while its write lock is held (Upstream.Locked).
type LockedLog interface {
	// Head is the shared log's head when the lock was granted: every
	// write committed before it is visible to Scan.
	Head() Head
	// Scan calls fn for the events from..to as this transaction sees them.
	Scan(from, to int64, fn func(e *Event) error) error
	// Request returns the idempotency record of request id, if the shared
	// log has one: a request is idempotent across machines.
	Request(id string) (RequestRecord, bool, error)
	// Append inserts evs, sealed to continue Head and the events appended
	// before them, without committing (a copy of a whole log, in steps).
	Append(evs []*Event) error
	// Commit appends evs, sealed by the cache to continue Head, with rec
	// (when not nil) the idempotency record of the write, advances the
	// head and commits. When it returns nil the write is acknowledged;
	// an error that says the write may have been committed leaves the
	// answer to the next catch-up.
	Commit(evs []*Event, rec *RequestRecord) error
	// Requests returns every idempotency record of the shared log (a
	// migration back to a file of its own keeps them).
	Requests() ([]RequestRecord, error)
	// CopyRequests stores recs in this transaction, leaving any request
	// id the shared log holds already as it is (a migration keeps the
	// file's records, so a retry after it is answered as before).
	CopyRequests(recs []RequestRecord) error
	// Moved returns nil, or, when the shared log moved away (awr migrate
	// --to sqlite) and is fenced, the refusal of every write: coded,
	// naming where the log went, with the command that points this
	// checkout at a log it may write.
	Moved() error
	// Fence records that the log moved to where (a description without
	// credentials) and commits: from then on the shared log refuses every
	// append, from every machine. A log fenced already keeps its record.
	Fence(where string, at time.Time) error
	// Clock returns the shared store's clock when the lock was granted,
	// and whether writes take their time from it (one clock for every
	// machine) instead of the caller's.
	Clock() (time.Time, bool)
}

// RequestRecord is what a write with a request id leaves for its repeats:
// the fingerprint of the request, its seqs and its result.
type RequestRecord struct {
	ID          string
	Fingerprint string
	FirstSeq    int64
	LastSeq     int64
	Result      json.RawMessage
}

// Upstream returns the shared log the store caches, or nil for a project
// whose log is this SQLite file.
func (s *Store) Upstream() Upstream { return s.up }

// catchUpBatch is how many events one catch-up transaction appends to the
// cache: a machine joining a long log commits its copy in steps, and a
// step cut short is taken up again by the next command.
const catchUpBatch = 4096

// CatchUp brings the cache up to the shared log's head, when the store has
// an Upstream (a no-op otherwise), and returns the revision it reached.
// Every event is checked as an import checks it (it continues the cache's
// chain, its hash recomputes, its stream version follows) and folded into
// the projections.
//
// Errors: Storage when the shared log cannot be read (naming it, with the
// hint of its driver); VerifyFailed when the shared log does not continue
// the cache (an event the cache holds differs from the shared log's, the
// cache is ahead of it, or an event's hash does not recompute): the
// shared log was rewritten, or the cache is another log's.
func (s *Store) CatchUp(ctx context.Context) (int64, error) {
	if s.up == nil {
		return s.localHead(ctx)
	}
	h, err := s.up.Head(ctx)
	if err != nil {
		return 0, err
	}
	if err := s.joinInBulk(ctx, h); err != nil {
		return 0, err
	}
	err = s.catchUpTo(ctx, h, func(from, to int64, fn func(e *Event) error) error {
		return s.up.Scan(ctx, from, to, fn)
	}, func() (Head, error) {
		var err error
		h, err = s.up.Head(ctx)
		return h, err
	})
	return h.Revision, err
}

// snapshotReader is an Upstream that reads one snapshot of the shared
// log on a connection it holds for the whole read (Log.ReadAt).
type snapshotReader interface {
	ReadAt(ctx context.Context, rev int64, fn func(snap Snapshot) error) error
}

// joinInBulk fills an empty cache up to h (bulkCatchUp) when h is past
// the bulk threshold, reading the shared log on a connection taken
// before the cache's write lock (the lock order at Store.mu): a scan
// under the lock that waited for a connection of the pool could wait
// for a writer that holds one and waits for the lock. A cache not
// empty, or an Upstream without snapshots, is left to catchUpTo.
func (s *Store) joinInBulk(ctx context.Context, h Head) error {
	sr, ok := s.up.(snapshotReader)
	if !ok || h.Revision <= bulkCatchUp || len(s.projectors) == 0 {
		return nil
	}
	local, err := s.localHeadFull(ctx)
	if err != nil || local.Revision != 0 {
		return err
	}
	return sr.ReadAt(ctx, h.Revision, func(snap Snapshot) error {
		return s.bulkCatchUp(ctx, h, snap.Scan)
	})
}

// localHead is the cache's own head, read without catching up.
func (s *Store) localHead(ctx context.Context) (int64, error) {
	h, err := s.localHeadFull(ctx)
	return h.Revision, err
}

func (s *Store) localHeadFull(ctx context.Context) (h Head, err error) {
	defer s.catchFault("read head", &err, armFault())
	conn, err := s.take(ctx)
	if err != nil {
		return Head{}, err
	}
	defer s.pool.Put(conn)
	seq, hash, t, err := headOf(conn)
	if err != nil {
		return Head{}, mapErr("read head", err)
	}
	return Head{Revision: seq, Hash: hash, OccurredAt: t}, nil
}

// bulkCatchUp is the gap from an empty cache above which a catch-up
// appends the events unfolded and rebuilds the projections once
// (bulkCatchUp, a machine joining a long log), as a replay does, instead
// of folding each event as it comes.
const bulkCatchUp = 2048

// catchUpTo appends to the cache the shared log's events after the
// cache's head up to h, read with scan, in batches.
//
// A cache ahead of h is not in itself a divergence when h was read
// without the shared log's lock (refresh is not nil): another process of
// this machine may have committed a write to the shared log and then to
// the cache after h was read (or while this one waited for the cache's
// write lock to catch up). Since a write reaches the cache only after the
// shared log committed it, a head read after the cache's is at least the
// cache's: refresh reads it again, and only a cache still ahead of it is
// one the shared log does not continue. Under the shared log's lock
// (refresh nil) no write can commit meanwhile, and a cache ahead of the
// locked head is divergent.
func (s *Store) catchUpTo(ctx context.Context, h Head, scan func(from, to int64, fn func(e *Event) error) error, refresh func() (Head, error)) error {
	for {
		local, err := s.localHeadFull(ctx)
		if err != nil {
			return err
		}
		if local.Revision > h.Revision && refresh != nil {
			if h, err = refresh(); err != nil {
				return err
			}
		}
		switch {
		case local.Revision > h.Revision:
			return s.diverged("holds %d events, more than the shared log's %d", local.Revision, h.Revision)
		case local.Revision == h.Revision:
			if !bytesEqual(local.Hash, h.Hash) {
				return s.diverged("has event %d with hash %x, the shared log has %x", local.Revision, local.Hash, h.Hash)
			}
			return nil
		case local.Revision == 0 && h.Revision > bulkCatchUp && len(s.projectors) > 0:
			if err := s.bulkCatchUp(ctx, h, scan); err != nil {
				return err
			}
			continue
		}
		var batch []*Event
		to := min(h.Revision, local.Revision+catchUpBatch)
		if err := scan(local.Revision+1, to, func(e *Event) error {
			batch = append(batch, e)
			return nil
		}); err != nil {
			return err
		}
		if len(batch) == 0 {
			return fault.New(fault.Storage, "catch up from %s: the shared log's head is %d but it gives no event after %d", s.up.Describe(), h.Revision, local.Revision).
				WithHint("awr verify")
		}
		opts := WriteOptions{Now: time.Now(), Entropy: rand.Reader, Actor: "catch-up"}
		if _, err := s.writeLocal(ctx, opts, func(tx *Tx) (any, error) {
			for _, e := range batch {
				if e.Seq <= tx.head {
					continue // another process of this machine caught up meanwhile
				}
				if err := tx.AppendRaw(e); err != nil {
					if fault.Is(err, fault.InvalidInput) {
						return nil, s.diverged("does not continue into the shared log's event %d: %v", e.Seq, err)
					}
					return nil, err
				}
			}
			return nil, nil
		}, nil); err != nil {
			return err
		}
	}
}

// bulkCatchUp fills an empty cache with the shared log's events up to h
// in one write transaction: the events appended unfolded, then every
// projection rebuilt once from them (as a replay does), and the whole
// committed at once, so no reader or writer of this machine ever sees
// events the projections do not hold.
func (s *Store) bulkCatchUp(ctx context.Context, h Head, scan func(from, to int64, fn func(e *Event) error) error) error {
	opts := WriteOptions{Now: time.Now(), Entropy: rand.Reader, Actor: "catch-up", unfolded: true}
	_, err := s.writeLocal(ctx, opts, func(tx *Tx) (any, error) {
		if tx.head != 0 {
			return nil, nil // another process of this machine filled it meanwhile
		}
		for from := int64(1); from <= h.Revision; from += catchUpBatch {
			if err := scan(from, min(from+catchUpBatch-1, h.Revision), func(e *Event) error {
				if err := tx.AppendRaw(e); err != nil {
					if fault.Is(err, fault.InvalidInput) {
						return s.diverged("does not continue into the shared log's event %d: %v", e.Seq, err)
					}
					return err
				}
				return nil
			}); err != nil {
				return nil, err
			}
		}
		if tx.head != h.Revision {
			return nil, fault.New(fault.Storage, "catch up from %s: the shared log's head is %d but it gave events up to %d", s.up.Describe(), h.Revision, tx.head).
				WithHint("awr verify")
		}
		return nil, RebuildOn(tx.Conn, s.projectors, tx.head, s.progress)
	}, nil)
	return err
}

// diverged is the VerifyFailed of a cache the shared log does not continue.
func (s *Store) diverged(format string, args ...any) error {
	return fault.New(fault.VerifyFailed, "the local cache %s of %s "+format+": the two logs differ (the shared log was rewritten, or the cache belongs to another log); nothing was written; moving the cache aside (mv %[1]s %[1]s.diverged) keeps it whole, with any event the shared log lacks, and the next command builds a new cache holding only what the shared log holds", append([]any{s.path, s.up.Describe()}, args...)...).
		With("path", s.path).With("store", s.up.Describe())
}

// writeThrough is Write for a store with an Upstream: under the shared
// log's lock, a request id is looked up in the shared log, the cache
// catches up to the shared log's head, and the write runs on the cache as
// on any SQLite log; just before the cache commits, its events go to the
// shared log, which commits first. A write the shared log refuses leaves
// the cache as it was; a cache commit that fails after the shared log's
// is the next catch-up's to repair, and the write is acknowledged.
func (s *Store) writeThrough(ctx context.Context, opts WriteOptions, fn func(tx *Tx) (any, error)) (*WriteResult, error) {
	if ot, ok := s.up.(OneTrip); ok {
		if res, done, err := s.writeOneTrip(ctx, ot, opts, fn); done {
			return res, err
		}
	}
	var res *WriteResult
	// A write that finds the cache not continuing the locked head asks
	// whether it lost the lock (lockLost) once the lock's connection and
	// the cache's write lock are both given back: the question waits for
	// a connection (the lock order at Store.mu).
	var locked Head
	var lockDoubt error
	lock := s.up.Locked
	if rl, ok := s.up.(RequestLocker); ok && opts.RequestID != "" {
		lock = func(ctx context.Context, fn func(w LockedLog) error) error {
			return rl.LockedRequest(ctx, opts.RequestID, fn)
		}
	}
	err := lock(ctx, func(w LockedLog) error {
		h := w.Head()
		locked = h
		if err := w.Moved(); err != nil {
			return err
		}
		if opts.RequestID != "" {
			rec, found, err := w.Request(opts.RequestID)
			if err != nil {
				return err
			}
			if found {
				if rec.Fingerprint != opts.Fingerprint {
					return RequestIDUsed(opts.RequestID, rec.FirstSeq, true)
				}
				res = &WriteResult{Result: rec.Result, Replayed: true, Revision: h.Revision}
				return s.catchUpTo(ctx, h, w.Scan, nil)
			}
		}
		if err := s.catchUpTo(ctx, h, w.Scan, nil); err != nil {
			lockDoubt = err
			return err
		}
		if now, ok := w.Clock(); ok {
			// Leases are judged, and events timed, by the shared store's
			// clock: one clock for every machine.
			opts.Now = now
		}
		var pushed *WriteResult
		r, err := s.writeLocal(ctx, opts, func(tx *Tx) (any, error) {
			if tx.head != h.Revision {
				// While the lock is held, only this write can take the
				// cache past the locked head.
				lockDoubt = errPastTheLock
				return nil, errPastTheLock
			}
			if err := s.stillWhere(tx); err != nil {
				return nil, err
			}
			if err := plannedReads(ctx).check(tx, false); err != nil {
				return nil, err
			}
			return fn(tx)
		}, func(tx *Tx, r *WriteResult) error {
			if tx.raw > 0 {
				return fault.New(fault.Internal, "write: events with their hashes (an import) cannot be appended to the shared log %s this way", s.up.Describe())
			}
			if r.Replayed || (len(r.Events) == 0 && opts.RequestID == "") {
				return nil
			}
			var rec *RequestRecord
			if opts.RequestID != "" {
				rec = &RequestRecord{ID: opts.RequestID, Fingerprint: opts.Fingerprint, Result: r.Result}
				if n := len(r.Events); n > 0 {
					rec.FirstSeq, rec.LastSeq = r.Events[0].Seq, r.Events[n-1].Seq
				}
			}
			if err := w.Commit(r.Events, rec); err != nil {
				return err
			}
			pushed = r
			return nil
		})
		if err != nil && pushed != nil {
			// The shared log holds the write: acknowledged. The cache
			// catches up at the next read.
			r, err = pushed, nil
		}
		res = r
		return err
	})
	switch {
	case errors.Is(lockDoubt, errPastTheLock):
		return nil, s.lockLost(ctx, locked, nil)
	case fault.Is(lockDoubt, fault.VerifyFailed):
		return nil, s.lockLost(ctx, locked, lockDoubt)
	case err != nil:
		return nil, err
	}
	return res, nil
}

// errPastTheLock rolls back the cache's transaction of a write under the
// shared log's lock that finds the cache past the locked head.
var errPastTheLock = errors.New("the cache is past the shared log's locked head")

// oneTripSkew bounds how far the shared clock may have run past the time
// a write took before the lock (the shared clock as last read, carried
// forward by this machine's) when the lock is granted: its leases were
// judged at most this long before the shared clock's time at the commit.
// A write the lock finds later is decided again under the lock.
const oneTripSkew = time.Second

// errUnderTheLock rolls back the cache's transaction of a write sealed
// before the lock that must be decided under it instead.
var errUnderTheLock = errors.New("decide the write under the shared log's lock")

// writeOneTrip is writeThrough's common case, one round trip: when the
// store is warm and the cache is at the shared head it last saw, the
// write runs on the cache as it is, its time the shared clock as last
// read (never before the log's last event, as every write's), and its
// events go to the shared log with the lock, checked there
// (Reserved.CommitSealed): the shared head is still the one they were
// sealed on, so the cache held every event of the shared log and the
// write was decided on the log as the lock finds it. The connection is
// reserved before the cache's write lock, and the shared log's lock only
// tried under it (the lock order at Store.mu). done is false when the
// write is to be decided under the lock instead, nothing written: a cold
// store, no connection, a cache behind, the shared log's lock held by
// another writer, a refusal of the check, a batch whose lost answer the
// shared log settles as not committed, and any answer the write would
// give without committing (an error, a repeat, nothing to append), since
// it was decided on a cache that may be behind. The door's planned reads
// are checked and kept for that attempt.
func (s *Store) writeOneTrip(ctx context.Context, ot OneTrip, opts WriteOptions, fn func(tx *Tx) (any, error)) (*WriteResult, bool, error) {
	warm := ot.Warmth()
	if !warm.Warm {
		return nil, false, nil
	}
	if warm.Clocked {
		opts.Now = warm.Now
	}
	reserved, err := ot.Reserve(ctx)
	if err != nil {
		return nil, false, nil
	}
	plan := plannedReads(ctx)
	var sealed, pushed *WriteResult
	var lost error
	var on Head
	_, _ = s.writeLocal(ctx, opts, func(tx *Tx) (any, error) {
		if tx.head < warm.Seen {
			return nil, errUnderTheLock
		}
		if err := s.stillWhere(tx); err != nil {
			return nil, err
		}
		if err := plan.check(tx, true); err != nil {
			return nil, err
		}
		on = Head{Revision: tx.head, Hash: tx.lastHash, OccurredAt: tx.lastTime}
		return fn(tx)
	}, func(tx *Tx, r *WriteResult) error {
		if tx.raw > 0 || len(r.Events) == 0 {
			return errUnderTheLock
		}
		at := tx.opts.Now
		if last := r.Events[len(r.Events)-1].OccurredAt; last > at.UnixMilli() {
			at = time.UnixMilli(last).UTC()
		}
		var rec *RequestRecord
		if opts.RequestID != "" {
			rec = &RequestRecord{ID: opts.RequestID, Fingerprint: opts.Fingerprint, Result: r.Result,
				FirstSeq: r.Events[0].Seq, LastSeq: r.Events[len(r.Events)-1].Seq}
		}
		sealed = r
		committed, err := reserved.CommitSealed(ctx, SealedWrite{On: on, Clocked: warm.Clocked, At: at, Within: oneTripSkew, Events: r.Events, Request: rec})
		if err != nil {
			lost = err
			return err
		}
		if !committed {
			return errUnderTheLock
		}
		pushed = r
		return nil
	})
	// The cache's write lock is released: what is left may wait.
	reserved.Release()
	if lost != nil {
		committed, err := reserved.Settle(ctx)
		switch {
		case err != nil:
			// The write may have been committed: deciding it again
			// could write it twice.
			return nil, true, err
		case committed:
			// The cache rolled it back: the next catch-up brings it.
			pushed = sealed
		}
	}
	if pushed == nil {
		return nil, false, nil
	}
	// The shared log holds the write: acknowledged, whatever the cache's
	// commit said (the next catch-up repairs it).
	plan.take()
	return pushed, true, nil
}

// lockLost tells a write that lost the shared log's lock from one whose
// cache the shared log does not continue (err, from the catch-up under
// the lock, or nil when the cache moved past the locked head h): while
// the lock is held, the shared log's head stays at h and no write of
// this machine can take the cache past it. A lock whose connection the
// server ended is gone before its holder learns it, and another writer
// may have committed meanwhile, here as well. When the shared log's head
// read anew is past h, the lock was lost, and the write fails with
// nothing written (its commit would have failed on the ended
// connection); otherwise err stands. It is asked once the lock's
// connection and the cache's write lock are given back: reading the
// head waits for a connection (the lock order at Store.mu).
// Errors: Storage, nothing written; err; those of Upstream.Head.
func (s *Store) lockLost(ctx context.Context, h Head, err error) error {
	if err != nil && !fault.Is(err, fault.VerifyFailed) {
		return err
	}
	now, herr := s.up.Head(ctx)
	switch {
	case herr != nil && err == nil:
		return herr
	case herr == nil && now.Revision > h.Revision:
		return fault.New(fault.Storage, "write: lost the write lock of %s (its connection ended) while another writer committed; nothing was written; run the command again", s.up.Describe()).
			With("store", s.up.Describe()).WithHint("awr status")
	case err == nil:
		return fault.New(fault.Internal, "write: the cache moved past %d while the shared log's lock was held there", h.Revision)
	}
	return err
}

// SharedMark is what a cache records of the shared log it copies: the
// project's key there and where the store is (for messages).
type SharedMark struct {
	Project string `json:"project"`
	Store   string `json:"store"`
}

// SharedOf returns the mark of a database that caches a shared log, or nil
// for a project's own log.
func SharedOf(conn *sqlite.Conn) (*SharedMark, error) {
	st := prep(conn, "shared_get")
	defer st.Reset()
	row, err := st.Step()
	if err != nil || !row {
		return nil, err
	}
	return &SharedMark{Project: st.GetText("project"), Store: st.GetText("store")}, nil
}

// markShared records, once, that the store's database is the cache of its
// Upstream for project (a no-op when it says so already).
// Errors: VerifyFailed when the database is a project's own log with
// events (its log would be left behind: `awr migrate` moves it) or the
// cache of another project; Storage.
func (s *Store) markShared(ctx context.Context) error {
	if s.up == nil {
		return fault.New(fault.Internal, "mark shared: the store has no upstream")
	}
	project := s.up.Project()
	_, err := s.writeLocal(ctx, WriteOptions{Now: time.Now(), Entropy: rand.Reader, Actor: "awr"}, func(tx *Tx) (any, error) {
		mark, err := SharedOf(tx.Conn)
		if err != nil {
			return nil, err
		}
		switch {
		case mark != nil && mark.Project != project:
			return nil, fault.New(fault.VerifyFailed, "open project: %s is the cache of project %s (%s), not of project %s: nothing was written; move the cache aside (mv %s %s.other) and the next command builds it again from the shared log", s.path, mark.Project, mark.Store, project, s.path, s.path).
				With("path", s.path).With("cached_project", mark.Project).With("project", project)
		case mark != nil:
			return nil, nil
		case tx.Head() > 0:
			return nil, fault.New(fault.VerifyFailed, "open project: %s is this project's own log (%d events), but the manifest names the shared store %s: its events are not there; nothing was written; move them there with awr migrate --to URL (the url of the manifest's [store] table)", s.path, tx.Head(), s.up.Describe()).
				With("path", s.path).With("project_revision", tx.Head()).
				WithHint("awr migrate --help")
		}
		st := prep(tx.Conn, "shared_put")
		st.SetText(":project", project)
		st.SetText(":store", s.up.Describe())
		_, err = st.Step()
		st.Reset()
		return nil, err
	}, nil)
	return err
}

// Mark returns the database's SharedMark, or nil for a project's own log,
// read without catching up.
// Errors: Storage.
func (s *Store) Mark(ctx context.Context) (m *SharedMark, err error) {
	defer s.catchFault("read the shared mark", &err, armFault())
	conn, err := s.take(ctx)
	if err != nil {
		return nil, err
	}
	defer s.pool.Put(conn)
	m, err = SharedOf(conn)
	return m, mapErr("read the shared mark", err)
}

// SetShared records mark in the write transaction (nil removes it): a
// migration makes a project's own log the cache of the shared log it was
// copied to, or the cache a log of its own.
func (tx *Tx) SetShared(mark *SharedMark) error {
	if mark == nil {
		st := prep(tx.Conn, "shared_delete")
		_, err := st.Step()
		st.Reset()
		return err
	}
	st := prep(tx.Conn, "shared_put")
	st.SetText(":project", mark.Project)
	st.SetText(":store", mark.Store)
	_, err := st.Step()
	st.Reset()
	return err
}

// AttachResult reports Attach.
type AttachResult struct {
	// Head is the log's head, the same in both places.
	Head Head
	// Copied is the number of events copied (0 when up already held
	// exactly this log, from an attach cut short before its end).
	Copied int64
	// Requests is the number of idempotency records the file holds, all
	// of them in up afterwards.
	Requests int64
}

// Attach copies this project's own log whole into up, an empty shared
// log, and makes the file up's cache: inside one write transaction of the
// file (nothing is appended here meanwhile) the events go to up under its
// write lock, in batches, and commit there at once; then, with the copy
// committed, check runs (it verifies the copy and switches the manifest)
// and the file is marked as up's cache and commits. A shared log that
// already holds exactly this log (an attach cut short) is not copied
// again. The store keeps no upstream: the caller opens the project anew.
//
// Errors: InvalidTransition when the file is already a cache, or is an
// imported replica that was not forked; SourceConflict when up holds
// another log; those of up and check (after a failed check the shared log
// holds the copy, and the file is unchanged: the same attach resumes).
func (s *Store) Attach(ctx context.Context, up Upstream, check func(tx *Tx, h Head) error, progress func(done, total int64)) (*AttachResult, error) {
	if s.up != nil {
		return nil, fault.New(fault.InvalidTransition, "migrate: %s is already the cache of %s", s.path, s.up.Describe())
	}
	res := &AttachResult{}
	_, err := s.writeLocal(ctx, WriteOptions{Now: time.Now(), Entropy: rand.Reader, Actor: "awr"}, func(tx *Tx) (any, error) {
		mark, err := SharedOf(tx.Conn)
		if err != nil {
			return nil, err
		}
		if mark != nil {
			return nil, fault.New(fault.InvalidTransition, "migrate: %s is already the cache of %s (project %s)", s.path, mark.Store, mark.Project).
				With("path", s.path).WithHint("awr status")
		}
		if err := checkReplica(tx.Conn, false); fault.Is(err, fault.ReadOnlyReplica) {
			return nil, fault.New(fault.InvalidTransition, "migrate: %s is an imported replica; a replica is not moved, its fork is", s.path).
				With("path", s.path).WithHint("awr fork --accept")
		} else if err != nil {
			return nil, err
		}
		res.Head = Head{Revision: tx.head, Hash: tx.lastHash, OccurredAt: tx.lastTime}
		if err := up.Locked(ctx, func(w LockedLog) error {
			h := w.Head()
			if err := w.Moved(); err != nil {
				return fault.New(fault.SourceConflict, "migrate: the shared store (%s) holds, fenced, a log of this project that moved out at project_revision %d: its key takes no more events (%v); nothing was copied; give another --key", up.Describe(), h.Revision, err).
					With("store", up.Describe()).With("project_revision", h.Revision).
					WithHint("awr migrate --help")
			}
			switch {
			case h.Revision == res.Head.Revision && bytesEqual(h.Hash, res.Head.Hash):
				return nil // copied already
			case h.Revision > 0:
				return fault.New(fault.SourceConflict, "migrate: the shared store (%s) already holds another log for this project (project_revision %d, head %x); nothing was copied", up.Describe(), h.Revision, h.Hash).
					With("store", up.Describe()).With("project_revision", h.Revision).
					WithHint("awr migrate --help")
			}
			for from := int64(1); from <= res.Head.Revision; from += catchUpBatch {
				var batch []*Event
				if err := ScanEvents(tx.Conn, from, min(from+catchUpBatch-1, res.Head.Revision), func(e *Event) error {
					batch = append(batch, e)
					return nil
				}); err != nil {
					return err
				}
				if err := w.Append(batch); err != nil {
					return err
				}
				res.Copied += int64(len(batch))
				if progress != nil {
					progress(res.Copied, res.Head.Revision)
				}
			}
			recs, err := localRequests(tx.Conn)
			if err != nil {
				return err
			}
			for from := 0; from < len(recs); from += catchUpBatch {
				if err := w.CopyRequests(recs[from:min(from+catchUpBatch, len(recs))]); err != nil {
					return err
				}
			}
			res.Requests = int64(len(recs))
			return w.Commit(nil, nil)
		}); err != nil {
			return nil, err
		}
		if err := check(tx, res.Head); err != nil {
			return nil, err
		}
		return nil, tx.SetShared(&SharedMark{Project: up.Project(), Store: up.Describe()})
	}, nil)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// Detach makes this cache a project's own log: under the shared log's
// write lock (no machine appends meanwhile) the file catches up to the
// shared log's head, and in one write transaction its mark goes, the
// shared log's idempotency records come in (those of every machine) and
// then runs (it switches the manifest). The shared log is left as it is.
//
// Errors: InvalidTransition when the store caches no shared log; those
// of CatchUp and then.
func (s *Store) Detach(ctx context.Context, then func(tx *Tx, h Head) error) (*AttachResult, error) {
	if s.up == nil {
		return nil, fault.New(fault.InvalidTransition, "migrate: %s is the project's own log already", s.path).
			With("path", s.path).WithHint("awr status")
	}
	res := &AttachResult{}
	err := s.up.Locked(ctx, func(w LockedLog) error {
		h := w.Head()
		if err := s.catchUpTo(ctx, h, w.Scan, nil); err != nil {
			return err
		}
		res.Head = h
		_, err := s.writeLocal(ctx, WriteOptions{Now: time.Now(), Entropy: rand.Reader, Actor: "awr"}, func(tx *Tx) (any, error) {
			if tx.head != h.Revision {
				return nil, fault.New(fault.Internal, "migrate: the cache moved to %d while the shared log's lock was held at %d", tx.head, h.Revision)
			}
			if err := tx.SetShared(nil); err != nil {
				return nil, err
			}
			// The records of writes made on other machines come too, so
			// their retries are answered here as they were there.
			recs, err := w.Requests()
			if err != nil {
				return nil, err
			}
			for _, rec := range recs {
				if err := putRequest(tx.Conn, "request_put_missing", rec); err != nil {
					return nil, err
				}
			}
			res.Requests = int64(len(recs))
			return nil, then(tx, h)
		}, func(tx *Tx, _ *WriteResult) error {
			// The shared log is fenced before the file becomes the log:
			// from the moment this checkout may write alone, no machine
			// can write there.
			return w.Fence(s.movedTo(), time.Now())
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// movedTo names this file as the place a shared log moved to, for the
// messages of the machines still pointing at it.
func (s *Store) movedTo() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "an unnamed host"
	}
	return fmt.Sprintf("the SQLite file %s on %s", s.path, host)
}

// Waker is a shared log that can wake a follower (`awr log --follow`)
// when its head may have passed a revision, instead of a poll: a wake-up
// only; the follower reads the events by position, as every read does.
type Waker interface {
	// Wait returns once the head may have passed after, after max, or
	// when ctx is done. Errors: Storage (the follower then polls).
	Wait(ctx context.Context, after int64, max time.Duration) error
}

// localRequests returns every idempotency record of the file, by first
// seq.
func localRequests(conn *sqlite.Conn) ([]RequestRecord, error) {
	st := prep(conn, "requests_all")
	var out []RequestRecord
	if err := eachRow(st, func() bool {
		out = append(out, RequestRecord{ID: st.GetText("request_id"), Fingerprint: st.GetText("fingerprint"),
			FirstSeq: st.GetInt64("first_seq"), LastSeq: st.GetInt64("last_seq"), Result: json.RawMessage(st.GetText("result"))})
		return true
	}); err != nil {
		return nil, fault.Wrap(fault.Storage, err, "read the request records")
	}
	return out, nil
}

// putRequest stores rec with statement (request_put or
// request_put_missing).
func putRequest(conn *sqlite.Conn, statement string, rec RequestRecord) error {
	st := prep(conn, statement)
	st.SetText(":request_id", rec.ID)
	st.SetText(":fingerprint", rec.Fingerprint)
	st.SetInt64(":first_seq", rec.FirstSeq)
	st.SetInt64(":last_seq", rec.LastSeq)
	st.SetText(":result", string(rec.Result))
	_, err := st.Step()
	st.Reset()
	if err != nil {
		return fault.Wrap(fault.Storage, err, "store request record %s", rec.ID)
	}
	return nil
}

// LocalHead returns the head of the store's own file, read without
// catching up: for a cache, how far it had copied the shared log (awr
// doctor reports the lag). Errors: Storage.
func (s *Store) LocalHead(ctx context.Context) (Head, error) { return s.localHeadFull(ctx) }

// A write's door often reads before it writes (a checkpoint reads its
// session's working directory, a claim checks its sources are fresh) and
// the write decides on what was read. On a shared log's cache such a read
// would catch up first, one round trip to the shared log, and the write
// catches up again under the lock. PlanReads lets those reads take the
// cache as it is instead, and makes the write check, under the shared
// log's lock and after its catch-up, that no event after what each read
// saw touches what it read: a write is never decided on state the locked
// log contradicts. When one does, nothing is written and the write
// answers ReadMoved; the door runs it again, its reads taking the cache
// as the refused write's catch-up left it (at the locked head).

// readPlan records the reads a write's door made through ReadForWrite in
// one context (PlanReads): for each, the cache's revision it saw and what
// events would change its answer.
type readPlan struct {
	catchUp bool // every read catches up first (PlanReads)
	mu      sync.Mutex
	reads   []plannedRead
}

// plannedRead is one read of a readPlan.
type plannedRead struct {
	rev     int64
	touches func(e *Event) bool
}

type readPlanKey struct{}

// PlanReads returns ctx in which the door's reads before a write
// (ReadForWrite) are recorded, and the write through a shared log's cache
// checks them under the lock. Without catchUp they take the cache as it
// is (no round trip: a warm server's cache holds what it wrote); with it
// they catch up first, as Read does (a process that runs one command
// reads the head as it opens, and its first catch-up costs no round
// trip). For a project's own log it changes nothing: its reads are Read.
func PlanReads(ctx context.Context, catchUp bool) context.Context {
	return context.WithValue(ctx, readPlanKey{}, &readPlan{catchUp: catchUp})
}

// caughtUp records the stores a command's reads caught up in one context
// (CatchUpOnce).
type caughtUp struct {
	mu     sync.Mutex
	stores map[*Store]bool
}

type caughtUpKey struct{}

// CatchUpOnce returns ctx in which a shared log's cache catches up at the
// first Read of a store and not again: a command that reads several
// times (a packet's sources, its repository, the packet) pays one round
// trip, and every read still reflects each write committed to the shared
// log before the command began (later reads see the cache as it is, at
// or after the first read's head). For a project's own log it changes
// nothing. A ctx that already is one is returned as it is.
func CatchUpOnce(ctx context.Context) context.Context {
	if c, _ := ctx.Value(caughtUpKey{}).(*caughtUp); c != nil {
		return ctx
	}
	return context.WithValue(ctx, caughtUpKey{}, &caughtUp{stores: map[*Store]bool{}})
}

// caughtUpIn says whether a read of s in ctx (CatchUpOnce) already caught
// up.
func (s *Store) caughtUpIn(ctx context.Context) bool {
	c, _ := ctx.Value(caughtUpKey{}).(*caughtUp)
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stores[s]
}

// markCaughtUp records that a read of s in ctx (CatchUpOnce) caught up.
func (s *Store) markCaughtUp(ctx context.Context) {
	if c, _ := ctx.Value(caughtUpKey{}).(*caughtUp); c != nil {
		c.mu.Lock()
		c.stores[s] = true
		c.mu.Unlock()
	}
}

// plannedReads is ctx's readPlan, or nil.
func plannedReads(ctx context.Context) *readPlan {
	p, _ := ctx.Value(readPlanKey{}).(*readPlan)
	return p
}

// errReadMoved marks the refusal of a write decided on a read the locked
// log contradicts (ReadMoved).
var errReadMoved = errors.New("a read the write decided on moved")

// ReadMoved says whether err is a write's refusal because an event after
// a read it decided on (ReadForWrite) touches what was read: nothing was
// written, and the same write, its reads caught up, may succeed.
func ReadMoved(err error) bool { return errors.Is(err, errReadMoved) }

// ReadForWrite runs fn as Read does, for a read a write in the same ctx
// decides on. In a context of PlanReads on a shared log's cache, it reads
// the cache as it is unless catchUp or the plan says to catch up first,
// and records the revision fn saw with touches, which says whether an
// event could change fn's answer: the write refuses (ReadMoved) when one
// came after it. Elsewhere it is Read.
// Errors: those of Read.
func (s *Store) ReadForWrite(ctx context.Context, catchUp bool, touches func(e *Event) bool, fn func(r *Reader) error) error {
	plan := plannedReads(ctx)
	if s.up == nil || plan == nil {
		return s.Read(ctx, fn)
	}
	return s.read(ctx, catchUp || plan.catchUp, func(r *Reader) error {
		plan.mu.Lock()
		plan.reads = append(plan.reads, plannedRead{rev: r.Head, touches: touches})
		plan.mu.Unlock()
		return fn(r)
	}, false)
}

// ReadsCache says whether ReadForWrite in ctx reads the cache without
// catching up (a read that finds nothing there may need to catch up).
func (s *Store) ReadsCache(ctx context.Context) bool {
	plan := plannedReads(ctx)
	return s.up != nil && plan != nil && !plan.catchUp
}

// check refuses, inside the write's transaction on the caught-up cache,
// a write whose planned reads an event after them touches. The first
// write through the plan takes its reads (unless keep: a write sealed
// before the lock takes them only once committed, take): a later write
// in the same context is not checked against them, so a refusal (and the door's
// attempt again) only ever comes before anything was written. A nil
// plan checks nothing.
// Errors: RevisionConflict (ReadMoved), naming the event; Storage.
func (p *readPlan) check(tx *Tx, keep bool) error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	reads := p.reads
	if !keep {
		p.reads = nil
	}
	p.mu.Unlock()
	if len(reads) == 0 {
		return nil
	}
	from := reads[0].rev
	for _, r := range reads[1:] {
		from = min(from, r.rev)
	}
	if from >= tx.head {
		return nil
	}
	return ScanEvents(tx.Conn, from+1, tx.head, func(e *Event) error {
		for _, r := range reads {
			if e.Seq > r.rev && r.touches(e) {
				return fault.Wrap(fault.RevisionConflict, errReadMoved, "write: event %d (%s, %s) came after the state this write read at project_revision %d; nothing was written", e.Seq, e.Kind, e.Stream, r.rev).
					With("seq", e.Seq).With("read_at", r.rev)
			}
		}
		return nil
	})
}

// take drops the plan's reads: a write decided on them committed.
func (p *readPlan) take() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.reads = nil
	p.mu.Unlock()
}

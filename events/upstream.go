package events

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"time"

	"github.com/awr-dev/awr/fault"
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
	// any credential: "postgres HOST:PORT/DB project KEY".
	Describe() string
	// Close releases the shared log's connections.
	Close() error
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
	// Commit appends evs, sealed by the cache to continue Head, with rec
	// (when not nil) the idempotency record of the write, advances the
	// head and commits. When it returns nil the write is acknowledged;
	// an error that says the write may have been committed leaves the
	// answer to the next catch-up.
	Commit(evs []*Event, rec *RequestRecord) error
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
	return h.Revision, s.catchUpTo(ctx, h, func(from, to int64, fn func(e *Event) error) error {
		return s.up.Scan(ctx, from, to, fn)
	})
}

// localHead is the cache's own head, read without catching up.
func (s *Store) localHead(ctx context.Context) (int64, error) {
	h, err := s.localHeadFull(ctx)
	return h.Revision, err
}

func (s *Store) localHeadFull(ctx context.Context) (h Head, err error) {
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

// catchUpTo appends to the cache the shared log's events after the
// cache's head up to h, read with scan, in batches.
func (s *Store) catchUpTo(ctx context.Context, h Head, scan func(from, to int64, fn func(e *Event) error) error) error {
	for {
		local, err := s.localHeadFull(ctx)
		if err != nil {
			return err
		}
		switch {
		case local.Revision > h.Revision:
			return s.diverged("holds %d events, more than the shared log's %d", local.Revision, h.Revision)
		case local.Revision == h.Revision:
			if !bytesEqual(local.Hash, h.Hash) {
				return s.diverged("has event %d with hash %x, the shared log has %x", local.Revision, local.Hash, h.Hash)
			}
			return nil
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

// diverged is the VerifyFailed of a cache the shared log does not continue.
func (s *Store) diverged(format string, args ...any) error {
	return fault.New(fault.VerifyFailed, "the local cache %s of %s "+format+": the two logs differ (the shared log was rewritten, or the cache belongs to another log); nothing was written", append([]any{s.path, s.up.Describe()}, args...)...).
		With("path", s.path).With("store", s.up.Describe()).
		WithHint("move the cache aside and let the next command build it again from the shared log: mv %s %s.diverged && awr status", s.path, s.path)
}

// writeThrough is Write for a store with an Upstream: under the shared
// log's lock, a request id is looked up in the shared log, the cache
// catches up to the shared log's head, and the write runs on the cache as
// on any SQLite log; just before the cache commits, its events go to the
// shared log, which commits first. A write the shared log refuses leaves
// the cache as it was; a cache commit that fails after the shared log's
// is the next catch-up's to repair, and the write is acknowledged.
func (s *Store) writeThrough(ctx context.Context, opts WriteOptions, fn func(tx *Tx) (any, error)) (*WriteResult, error) {
	var res *WriteResult
	err := s.up.Locked(ctx, func(w LockedLog) error {
		h := w.Head()
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
				return s.catchUpTo(ctx, h, w.Scan)
			}
		}
		if err := s.catchUpTo(ctx, h, w.Scan); err != nil {
			return err
		}
		var pushed *WriteResult
		r, err := s.writeLocal(ctx, opts, fn, func(tx *Tx, r *WriteResult) error {
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
	if err != nil {
		return nil, err
	}
	return res, nil
}

package pgstore

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// sharedSeen is what a store has learnt of the shared log as it worked:
// the shared clock's offset from this machine's (the last reading) and
// the highest revision seen.
type sharedSeen struct {
	warm   atomic.Bool
	offset atomic.Int64 // the server's clock minus this machine's, ms
	head   atomic.Int64
}

// clock records a reading of the server's clock, taken before now (the
// answer's arrival): the offset it gives is at most the true one, so a
// time carried forward from it is not ahead of the server's clock (but
// for this machine's clock jumping forward, which the write's check
// catches).
func (c *sharedSeen) clock(server time.Time) {
	c.offset.Store(server.UnixMilli() - time.Now().UnixMilli())
	c.warm.Store(true)
}

// saw records that the shared log's head reached rev.
func (c *sharedSeen) saw(rev int64) {
	for {
		cur := c.head.Load()
		if rev <= cur || c.head.CompareAndSwap(cur, rev) {
			return
		}
	}
}

// Warmth returns what the store knows of the shared log without asking
// it, as events.OneTrip specifies: warm once it has read the server's
// clock with the lock, the highest head it has seen, and the server's
// clock now as last read, carried forward by this machine's.
func (s *Store) Warmth() events.Warmth {
	w := events.Warmth{Warm: s.seen.warm.Load(), Seen: s.seen.head.Load(), Clocked: s.serverClock}
	if w.Clocked {
		w.Now = time.UnixMilli(time.Now().UnixMilli() + s.seen.offset.Load()).UTC()
	}
	return w
}

// CommitSealed commits w, sealed on the head w.On before the lock, in one
// round trip, as events.OneTrip specifies: the head row's lock
// (with the head and the server's clock, which the store records; taken
// only if free: the caller holds its cache's write lock, and a writer of
// this machine under the shared log's lock may be waiting for it), the
// guard (head_guard: it fails, and the server skips everything after it
// and rolls back, unless the head is still w.On, the log is not fenced
// and, when w.Clocked, the server's clock, or the head's time when later
// (as a write under the lock would take it), is within [w.At,
// w.At+w.Within]),
// the inserts, the head's advance, the notification and the request
// record, sent together as one implicit transaction (committed when the
// batch ends without an error). An event or request id already in the log
// fails its insert, and the fenced log's trigger its inserts, in the
// same way.
//
// It returns false and no error when nothing was written: a statement
// failed (the server answered with an error, so it skipped the rest), or
// nothing was sent. Errors: Storage, saying the write may have been
// committed, when the batch was sent and the connection went (or ctx
// ended) before COMMIT's answer came.
func (s *Store) CommitSealed(ctx context.Context, w events.SealedWrite) (bool, error) {
	const op = "append events"
	if len(w.Events) == 0 || s.checkOpen(op) != nil {
		return false, nil
	}
	pending, err := continues(op, w.On, w.Events)
	if err != nil {
		return false, nil
	}
	s.takeOpened()
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return false, nil
	}
	// No BEGIN nor COMMIT: a batch is sent with one Sync, and the server
	// runs its statements as one implicit transaction, committed at the
	// Sync when every statement succeeded and rolled back at once when one
	// failed, the connection left idle (no ROLLBACK to wait for before the
	// write is decided again). Under any isolation level the lock is
	// NOWAIT and the guard reads the locked head.
	b := &pgx.Batch{}
	b.Queue(q("head_lock_nowait"), pgx.NamedArgs{"project": s.project, "idle_limit": s.idleLimitArg(ctx)})
	b.Queue(q("head_guard"), pgx.NamedArgs{"project": s.project, "seq": w.On.Revision, "hash": w.On.Hash,
		"clocked": w.Clocked, "at": w.At.UnixMilli(), "within": w.Within.Milliseconds()})
	n := s.queueWrite(b, w.On, pending, w.Events, w.Request)
	pid := conn.Conn().PgConn().PID()
	br := conn.SendBatch(ctx, b)
	var l locked
	if l, err = s.scanLock(br.QueryRow(), op); err == nil {
		s.seen.saw(l.head.Revision)
	}
	if err == nil {
		var sealed int32
		err = br.QueryRow().Scan(&sealed)
	}
	for i := 0; err == nil && i < n; i++ {
		_, err = br.Exec()
	}
	// An error from the server in place of a statement's answer (even a
	// FATAL: the server sends its answers in order, those it had before
	// the error first) means that statement did not complete, so the
	// implicit transaction never reached the Sync, where it commits.
	var pe *pgconn.PgError
	beforeSync := errors.As(err, &pe)
	// Close reads up to the Sync's answer: the implicit transaction's
	// end.
	cerr := br.Close()
	if err == nil {
		err = cerr
	}
	idle := conn.Conn().PgConn().TxStatus() == 'I' && !conn.Conn().IsClosed()
	switch {
	case err == nil && idle:
		conn.Release()
		s.seen.saw(pending.Revision)
		return true, nil
	case err == nil:
		// Every statement answered, but the transaction did not end
		// (cannot happen without a BEGIN): nothing is committed yet.
		s.abandon(ctx, conn)
		return false, nil
	}
	s.abandon(ctx, conn)
	if beforeSync || statementFailed(cerr) || pgconn.SafeToRetry(err) {
		// A statement failed or was cut short (the server skipped the
		// rest and rolled the transaction back), the commit at the Sync
		// failed, or nothing was sent.
		return false, nil
	}
	return s.settle(ctx, op, pid, w, err)
}

// statementFailed says whether err is a statement's own failure (an
// ERROR): in a batch, the server then skips every statement up to its
// end, COMMIT included. A FATAL or PANIC ends the connection instead, and
// may come after the batch's COMMIT ran (the server sends its answers
// when the batch ends, and a backend ended meanwhile sends only the
// FATAL): it says nothing of what was committed.
func statementFailed(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Severity != "FATAL" && pe.Severity != "PANIC"
}

// settle answers whether a batch of CommitSealed whose answer was lost
// (err) was committed, when the shared log can tell: once the backend
// that ran it (pid) is gone, its transaction is over, and the log holds
// the write's first event, or never will. A connection the server had
// ended before the batch (a pooled one, after a restart or a
// pg_terminate_backend) is the common case: the write was not committed,
// and is decided again. While the backend lives, or when the question
// cannot be asked, the answer is the lost commit's error.
func (s *Store) settle(ctx context.Context, op string, pid uint32, w events.SealedWrite, lost error) (bool, error) {
	var gone bool
	var hash []byte
	err := s.retry(ctx, op, func() error {
		b := &pgx.Batch{}
		b.Queue(q("backend_gone"), pgx.NamedArgs{"pid": int64(pid)})
		b.Queue(q("event_at"), pgx.NamedArgs{"project": s.project, "seq": w.Events[0].Seq})
		br := s.pool.SendBatch(ctx, b)
		defer br.Close()
		if err := br.QueryRow().Scan(&gone); err != nil {
			return err
		}
		var seq, at int64
		hash = nil
		if err := br.QueryRow().Scan(&seq, &hash, &at); err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		return nil
	})
	switch {
	case err != nil || !gone:
		return false, s.lostCommit(op, lost)
	case string(hash) == string(w.Events[0].Hash):
		s.seen.saw(w.Events[len(w.Events)-1].Seq)
		return true, nil
	}
	return false, nil
}

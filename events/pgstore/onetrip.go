package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
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

// Reserve takes a connection of the pool for one write sealed before the
// lock, as events.OneTrip specifies: the caller holds no lock of its
// cache yet, so it may wait for one here. Errors: Storage, when the store
// is closed or no connection came (the caller decides the write under
// the lock, which says why).
func (s *Store) Reserve(ctx context.Context) (events.Reserved, error) {
	const op = "append events"
	if err := s.checkOpen(op); err != nil {
		return nil, err
	}
	s.takeOpened()
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, s.mapErrNote(op, err, nothingWritten)
	}
	return &reserved{store: s, conn: conn}, nil
}

// reserved is a connection of the pool reserved for one sealed write
// (events.Reserved).
type reserved struct {
	store *Store
	conn  *pgxpool.Conn
	// pid is the backend that ran the batch, w its write and lost the
	// error of a batch whose answer was lost (settle's question), or nil.
	pid  uint32
	w    events.SealedWrite
	lost error
}

// sealedLockWait bounds how long a sealed write waits for a lock another
// transaction holds (lock_timeout): its caller holds its cache's write
// lock, so it never waits for the head row (NOWAIT), and waits only a
// moment for the rest (a table's lock queued behind a migration's, the
// notification queue's at the commit), a wait that never lasts unless a
// writer of this machine, waiting for the cache's lock, is behind it.
const sealedLockWait = 500 * time.Millisecond

// sealedStatements are the statements CommitSealed sends: a store that
// keeps its statements (Options.KeepStatements) prepares them on each
// connection as it connects (prepareSealed), and pgx then sends each as
// Bind and Execute of the prepared statement, in the same one batch: the
// server neither parses nor plans them again on every write.
var sealedStatements = []string{"lock_wait", "head_lock_nowait", "head_guard", "insert_event_strict", "head_advance", "notify", "request_put"}

// prepareSealed prepares sealedStatements on conn, each under its own
// text as a batch sends it (named parameters made positional), where a
// batch finds it (pgx looks a statement sent whole up among those the
// connection prepared). A statement the server refuses (its schema not
// there yet, on a new database) is left to be sent whole; the store
// prepares it again once the schema is (Store.connect). It costs a
// round trip per statement not prepared yet, none once they are.
// Errors: the connection's, when it fails or the server ends it.
func prepareSealed(ctx context.Context, conn *pgx.Conn) error {
	for _, name := range sealedStatements {
		sql, _, err := pgx.NamedArgs{}.RewriteQuery(ctx, conn, q(name), nil)
		if err != nil {
			return err
		}
		if _, err := conn.Prepare(ctx, sql, sql); err != nil {
			if statementFailed(err) {
				return nil
			}
			return err
		}
	}
	return nil
}

// stalePrepared reports whether err says a prepared statement no longer
// fits the server: its result's type changed under it (a migration that
// altered a column it returns) or it is gone. The connection is then
// dropped, and the next one prepares afresh.
func stalePrepared(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "0A000" && strings.Contains(pe.Message, "cached plan") || pe.Code == "26000")
}

// CommitSealed commits w, sealed on the head w.On before the lock, in one
// round trip on the reserved connection, as events.Reserved specifies: a
// lock_timeout of sealedLockWait for the rest of the batch, the head
// row's lock (with the head and the server's clock, which the store
// records; taken only if free: the caller holds its cache's write lock,
// and a writer of this machine under the shared log's lock may be
// waiting for it), the guard (head_guard: it fails, and the server skips
// everything after it and rolls back, unless the head is still w.On, the
// log is not fenced and, when w.Clocked, the server's clock, or the
// head's time when later (as a write under the lock would take it), is
// within [w.At, w.At+w.Within]), the inserts, the head's advance, the
// notification and the request record, sent together as one implicit
// transaction (committed when the batch ends without an error). An event
// or request id already in the log fails its insert, and the fenced
// log's trigger its inserts, in the same way.
//
// It returns false and no error when nothing was written: a statement
// failed (the server answered with an error, so it skipped the rest), or
// nothing was sent. Errors: Storage, saying the write may have been
// committed, when the batch was sent and the connection went (or ctx
// ended) before the Sync's answer came: Settle answers it.
func (r *reserved) CommitSealed(ctx context.Context, w events.SealedWrite) (bool, error) {
	const op = "append events"
	s := r.store
	if len(w.Events) == 0 || s.checkOpen(op) != nil {
		return false, nil
	}
	pending, err := continues(op, w.On, w.Events)
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
	b.Queue(q("lock_wait"), pgx.NamedArgs{"wait": fmt.Sprintf("%dms", sealedLockWait.Milliseconds())})
	b.Queue(q("head_lock_nowait"), pgx.NamedArgs{"project": s.project, "idle_limit": s.idleLimitArg(ctx)})
	b.Queue(q("head_guard"), pgx.NamedArgs{"project": s.project, "seq": w.On.Revision, "hash": w.On.Hash,
		"clocked": w.Clocked, "at": w.At.UnixMilli(), "within": w.Within.Milliseconds()})
	n := s.queueWrite(b, w.On, pending, w.Events, w.Request)
	pid := r.conn.Conn().PgConn().PID()
	br := r.conn.SendBatch(ctx, b)
	_, err = br.Exec()
	if err == nil {
		// scanLock records the head and the server's clock it read.
		_, err = s.scanLock(br.QueryRow(), op)
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
	idle := r.conn.Conn().PgConn().TxStatus() == 'I' && !r.conn.Conn().IsClosed()
	switch {
	case err == nil && idle:
		s.seen.saw(pending.Revision)
		return true, nil
	case err == nil:
		// Every statement answered, but the transaction did not end
		// (cannot happen without a BEGIN): nothing is committed yet
		// (Release rolls it back).
		return false, nil
	}
	if stalePrepared(err) {
		// Nothing was written (the statement failed); the connection's
		// prepared statements are stale: dropped with it on Release.
		r.conn.Conn().Close(context.WithoutCancel(ctx))
		return false, nil
	}
	if beforeSync || statementFailed(cerr) || pgconn.SafeToRetry(err) {
		// A statement failed or was cut short (the server skipped the
		// rest and rolled the transaction back), the commit at the Sync
		// failed, or nothing was sent.
		return false, nil
	}
	r.pid, r.w, r.lost = pid, w, s.lostCommit(op, err)
	return false, r.lost
}

// Release gives the reserved connection back to the pool, rolling back
// a transaction left open (the pool drops a broken connection).
func (r *reserved) Release() {
	r.store.abandon(context.Background(), r.conn)
}

// Settle answers whether the batch of CommitSealed whose answer was lost
// was committed, when the shared log can tell: once the backend that ran
// it is gone, its transaction is over, and the log holds the write's
// first event, or never will. A connection the server had ended before
// the batch (a pooled one, after a restart or a pg_terminate_backend) is
// the common case: the write was not committed, and is decided again.
// While the backend lives, or when the question cannot be asked, the
// answer is the lost commit's error. It asks on a connection of the
// pool: the caller holds no lock of its cache.
func (r *reserved) Settle(ctx context.Context) (bool, error) {
	if r.lost == nil {
		return false, nil
	}
	s, w := r.store, r.w
	var gone bool
	var hash []byte
	err := s.retry(ctx, "append events", func() error {
		b := &pgx.Batch{}
		b.Queue(q("backend_gone"), pgx.NamedArgs{"pid": int64(r.pid)})
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
		return false, r.lost
	case string(hash) == string(w.Events[0].Hash):
		s.seen.saw(w.Events[len(w.Events)-1].Seq)
		return true, nil
	}
	return false, nil
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

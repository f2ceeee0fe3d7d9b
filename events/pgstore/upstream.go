package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The PostgreSQL store is the shared log a project's SQLite cache catches
// up from and writes through (events.Options.Upstream).
var _ events.Upstream = (*Store)(nil)

// It looks a write's request id up with its lock (events.RequestLocker).
var _ events.RequestLocker = (*Store)(nil)

// It commits a write sealed before its lock in one round trip
// (events.OneTrip).
var _ events.OneTrip = (*Store)(nil)

// Describe names the store for messages and reports, without the
// password: "postgres HOST:PORT/DB as USER, project KEY".
func (s *Store) Describe() string {
	return fmt.Sprintf("postgres %s, project %s", s.server, s.project)
}

// Locked runs fn in one transaction that holds the project's head row
// lock, as events.Upstream.Locked specifies: fn sees the head at the lock
// and every event committed before it, and what it commits through the
// LockedLog is committed with the head advanced; anything else rolls back.
//
// Errors: Storage when the server cannot be reached, ends the connection
// or fails the commit (when the connection is lost during the commit
// itself, the message says the write may have been committed); InvalidInput
// when an event's id or request id is already in the log; an error fn
// returns, coded, or wrapped as Storage.
func (s *Store) Locked(ctx context.Context, fn func(w events.LockedLog) error) error {
	return s.locked(ctx, "", fn)
}

// LockedRequest is Locked for a write with request id requestID, whose
// record is looked up with the lock, in the same round trip, as
// events.RequestLocker specifies. Errors: those of Locked.
func (s *Store) LockedRequest(ctx context.Context, requestID string, fn func(w events.LockedLog) error) error {
	return s.locked(ctx, requestID, fn)
}

func (s *Store) locked(ctx context.Context, requestID string, fn func(w events.LockedLog) error) (err error) {
	const op = "append events"
	if err := s.checkOpen(op); err != nil {
		return err
	}
	s.takeOpened()
	lw := &lockedLog{ctx: ctx, store: s}
	defer func() {
		if err != nil && !lw.committed && !lw.unknown {
			err = s.mapErrNote(op, err, nothingWritten)
		}
	}()
	conn, l, err := s.acquireLocked(ctx, op, requestID)
	if err != nil {
		return err
	}
	defer func() {
		if !lw.committed {
			s.abandon(ctx, conn)
			return
		}
		conn.Release()
	}()
	lw.tx, lw.head, lw.moved, lw.serverNow, lw.request = conn, l.head, l.moved, l.serverNow, l.request
	lw.pending = lw.head
	return fn(lw)
}

// acquireLocked takes a connection from the pool, begins a READ COMMITTED
// transaction on it and locks the project's head row (and, when
// requestID is not empty, looks its record up under the lock), the
// statements sent together (one round trip), retrying for a passing failure
// (Options.RetryFor): nothing is written before the lock. The transaction
// is the connection's until Commit (a COMMIT sent with the write's
// statements) or abandon.
func (s *Store) acquireLocked(ctx context.Context, op, requestID string) (*pgxpool.Conn, locked, error) {
	var conn *pgxpool.Conn
	var l locked
	err := s.retry(ctx, op, func() error {
		c, err := s.pool.Acquire(ctx)
		if err != nil {
			return err
		}
		b := &pgx.Batch{}
		b.Queue(q("begin_locked"))
		b.Queue(q("head_lock"), pgx.NamedArgs{"project": s.project, "idle_limit": s.idleLimitArg(ctx)})
		if requestID != "" {
			b.Queue(q("request_get"), pgx.NamedArgs{"project": s.project, "request_id": requestID})
		}
		br := c.SendBatch(ctx, b)
		_, err = br.Exec()
		if err == nil {
			l, err = s.scanLock(br.QueryRow(), op)
		}
		if err == nil && requestID != "" {
			p := prefetched{id: requestID}
			p.rec, p.found, err = scanRequest(br.QueryRow(), requestID)
			l.request = &p
		}
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			s.abandon(ctx, c)
			return err
		}
		conn = c
		return nil
	})
	return conn, l, err
}

// abandon rolls back the transaction conn holds, if any, and gives the
// connection back to the pool (which drops one that is broken or still
// in a transaction).
func (s *Store) abandon(ctx context.Context, conn *pgxpool.Conn) {
	if st := conn.Conn().PgConn().TxStatus(); st != 'I' && !conn.Conn().IsClosed() {
		conn.Exec(context.WithoutCancel(ctx), q("rollback"))
	}
	conn.Release()
}

// lockedLog is the PostgreSQL store's events.LockedLog.
type lockedLog struct {
	ctx       context.Context
	store     *Store
	tx        *pgxpool.Conn // in the transaction that holds the lock
	head      events.Head   // at the lock
	pending   events.Head   // after the events appended so far
	moved     *Moved        // where the log went, when it is fenced
	serverNow time.Time     // the server's clock at the lock
	committed bool
	// unknown is set when the connection was lost after the COMMIT was
	// sent: the error says the write may have been committed.
	unknown bool
	// request is the record of the write's request id, looked up with
	// the lock (LockedRequest), or nil.
	request *prefetched
}

// prefetched is a request record looked up with the lock: under it, no
// other writer can store one.
type prefetched struct {
	id    string
	rec   events.RequestRecord
	found bool
}

// Clock returns the server's clock when the lock was granted, and true
// when the store judges a write's time by it (Options.ServerClock).
func (w *lockedLog) Clock() (time.Time, bool) { return w.serverNow, w.store.serverClock }

// Moved returns the refusal of every write when the log moved away (awr
// migrate) and is fenced, nil otherwise.
func (w *lockedLog) Moved() error {
	if w.moved == nil {
		return nil
	}
	return w.store.movedErr("write", w.moved)
}

// Fence records that the log moved to where (a description, without
// credentials) and commits: from then on the log refuses every append,
// here and in the database. A log fenced already keeps its first record.
func (w *lockedLog) Fence(where string, at time.Time) error {
	const op = "fence the shared log"
	if w.committed {
		return fault.New(fault.Internal, "%s: the transaction was already committed", op)
	}
	if w.pending.Revision != w.head.Revision {
		return fault.New(fault.Internal, "%s: events were appended in the fencing transaction", op)
	}
	b := &pgx.Batch{}
	b.Queue(q("head_move"), pgx.NamedArgs{"project": w.store.project, "moved_to": where, "moved_at": at.UnixMilli()})
	if err := w.sendCommit(op, b, func(br pgx.BatchResults) error {
		_, err := br.Exec()
		return err
	}); err != nil {
		return err
	}
	if w.moved == nil {
		w.moved = &Moved{To: where, At: at.UTC(), Revision: w.head.Revision}
	}
	return nil
}

func (w *lockedLog) Head() events.Head { return w.head }

func (w *lockedLog) Scan(from, to int64, fn func(e *events.Event) error) error {
	return w.store.scanUpTo(w.ctx, w.tx, from, min(to, w.head.Revision), fn, "catch up", nothingWritten)
}

func (w *lockedLog) Request(id string) (events.RequestRecord, bool, error) {
	if p := w.request; p != nil && p.id == id {
		return p.rec, p.found, nil
	}
	rec, found, err := w.store.request(w.ctx, w.tx, id)
	if err != nil {
		return rec, false, w.store.mapErrNote("look up request", err, nothingWritten)
	}
	return rec, found, nil
}

// Append inserts evs, which must continue the events appended so far (the
// locked head at first).
func (w *lockedLog) Append(evs []*events.Event) error {
	const op = "append events"
	if w.committed {
		return fault.New(fault.Internal, "%s: the transaction was already committed", op)
	}
	if len(evs) == 0 {
		return nil
	}
	if w.moved != nil {
		return w.store.movedErr(op, w.moved)
	}
	prev, err := continues(op, w.pending, evs)
	if err != nil {
		return err
	}
	if err := w.store.insertAll(w.ctx, w.tx, evs); err != nil {
		return err
	}
	w.pending = prev
	return nil
}

// Commit appends evs, stores rec and commits: the head advances from the
// locked one to the last event appended. The inserts, the head's advance,
// the notification, the request record and the COMMIT go to the server
// together, in one round trip: a statement that fails makes the server
// skip the rest, COMMIT included, and nothing is written.
func (w *lockedLog) Commit(evs []*events.Event, rec *events.RequestRecord) error {
	const op = "append events"
	if w.committed {
		return fault.New(fault.Internal, "%s: the transaction was already committed", op)
	}
	if w.moved != nil {
		return w.store.movedErr(op, w.moved)
	}
	pending, err := continues(op, w.pending, evs)
	if err != nil {
		return err
	}
	s := w.store
	b := &pgx.Batch{}
	s.queueWrite(b, w.head, pending, evs, rec)
	advance := pending.Revision != w.head.Revision
	err = w.sendCommit(op, b, func(br pgx.BatchResults) error {
		for _, e := range evs {
			if _, err := br.Exec(); err != nil {
				var pe *pgconn.PgError
				if errors.As(err, &pe) && pe.Code == "23505" { // unique_violation
					return fault.New(fault.InvalidInput, "append event: seq %d: id %s or request id %q is already in the log; nothing was written", e.Seq, e.ID, e.RequestID)
				}
				return err
			}
		}
		if advance {
			tag, err := br.Exec()
			if err != nil {
				return err
			}
			if tag.RowsAffected() != 1 {
				// Cannot happen: the head row is locked by this
				// transaction since its seq was read. Were it to, the
				// COMMIT sent after it has run all the same.
				return fault.New(fault.Internal, "%s: the head of project %s moved while its lock was held; the write may have been committed: check the shared log with awr verify", op, s.project).WithHint("awr verify")
			}
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		if rec != nil {
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	w.pending = pending
	w.head = pending
	s.seen.saw(pending.Revision)
	return nil
}

// queueWrite queues on b the statements of a write that appends evs
// after head, up to pending, with rec: the inserts, the head's advance
// with its notification (when events were appended) and the request
// record (when not nil). It returns how many it queued.
func (s *Store) queueWrite(b *pgx.Batch, head, pending events.Head, evs []*events.Event, rec *events.RequestRecord) int {
	n := b.Len()
	for _, e := range evs {
		b.Queue(q("insert_event_strict"), insertArgs(s.project, e))
	}
	if pending.Revision != head.Revision {
		b.Queue(q("head_advance"), pgx.NamedArgs{"project": s.project, "seq": pending.Revision,
			"hash": pending.Hash, "occurred_at": pending.OccurredAt, "start_seq": head.Revision})
		b.Queue(q("notify"), pgx.NamedArgs{"project": s.project, "seq": pending.Revision})
	}
	if rec != nil {
		b.Queue(q("request_put"), pgx.NamedArgs{"project": s.project, "request_id": rec.ID,
			"fingerprint": rec.Fingerprint, "first_seq": rec.FirstSeq, "last_seq": rec.LastSeq, "result": string(rec.Result)})
	}
	return b.Len() - n
}

// sendCommit sends b's statements and then COMMIT in one batch, reads the
// statements' results with results, and then the COMMIT's. Errors: those
// of results and of the statements, mapped, with nothing written: the
// server skips what follows a failed statement, COMMIT included; Storage
// saying the write may have been committed when the connection is lost
// after the batch was sent and before COMMIT's answer came.
func (w *lockedLog) sendCommit(op string, b *pgx.Batch, results func(br pgx.BatchResults) error) error {
	s := w.store
	b.Queue(q("commit"))
	br := w.tx.SendBatch(w.ctx, b)
	err := results(br)
	var tag pgconn.CommandTag
	if err == nil {
		tag, err = br.Exec()
	}
	cerr := br.Close()
	if err == nil {
		err = cerr
	}
	switch {
	case err == nil && tag.String() != "COMMIT":
		// The server answered COMMIT with a rollback.
		return fault.New(fault.Storage, "%s: the server rolled the transaction back; nothing was written", op)
	case err == nil:
		w.committed = true
		return nil
	}
	if commitNotApplied(err) {
		return s.mapErrNote(op, err, nothingWritten)
	}
	// The batch, COMMIT included, was sent, and the connection went (or
	// ctx ended) before the answer came: whether the server applied it
	// is unknown.
	w.unknown = true
	return s.lostCommit(op, err)
}

// commitNotApplied reports whether err, the failure of a batch that ends
// in COMMIT, says the server applied none of it: a coded error (awr's
// own, raised before or by a statement), a statement's ERROR (the server
// skipped the rest and rolled back), or nothing sent. A FATAL or PANIC
// (the backend ended) and a connection lost after the send may come
// after COMMIT ran: unknown. (fault.As would take any error for a coded
// one: it wraps the uncoded as Internal.)
func commitNotApplied(err error) bool {
	var fe *fault.Error
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return statementFailed(err)
	}
	return errors.As(err, &fe) || pgconn.SafeToRetry(err)
}

func (w *lockedLog) Requests() ([]events.RequestRecord, error) {
	rows, err := w.tx.Query(w.ctx, q("requests_all"), pgx.NamedArgs{"project": w.store.project})
	if err != nil {
		return nil, w.store.mapErrNote("read the request records", err, nothingWritten)
	}
	var out []events.RequestRecord
	for rows.Next() {
		var rec events.RequestRecord
		var result string
		if err := rows.Scan(&rec.ID, &rec.Fingerprint, &rec.FirstSeq, &rec.LastSeq, &result); err != nil {
			rows.Close()
			return nil, w.store.mapErrNote("read the request records", err, nothingWritten)
		}
		rec.Result = json.RawMessage(result)
		out = append(out, rec)
	}
	if err := rows.Err(); err != nil {
		return nil, w.store.mapErrNote("read the request records", err, nothingWritten)
	}
	return out, nil
}

func (w *lockedLog) CopyRequests(recs []events.RequestRecord) error {
	if w.committed {
		return fault.New(fault.Internal, "copy request records: the transaction was already committed")
	}
	if w.moved != nil {
		return w.store.movedErr("copy request records", w.moved)
	}
	b := &pgx.Batch{}
	for _, rec := range recs {
		b.Queue(q("request_copy"), pgx.NamedArgs{"project": w.store.project, "request_id": rec.ID, "fingerprint": rec.Fingerprint,
			"first_seq": rec.FirstSeq, "last_seq": rec.LastSeq, "result": string(rec.Result)})
	}
	if err := w.tx.SendBatch(w.ctx, b).Close(); err != nil {
		return w.store.mapErrNote("copy request records", err, nothingWritten)
	}
	return nil
}

// continues checks that evs continue the chain from head, each event the
// next seq with the previous hash, and returns the head after them.
// Errors: Internal, naming op, for an event that does not continue.
func continues(op string, head events.Head, evs []*events.Event) (events.Head, error) {
	for _, e := range evs {
		if e.Seq != head.Revision+1 || string(e.PrevHash) != string(head.Hash) {
			return head, fault.New(fault.Internal, "%s: event %d does not continue the shared log's head %d", op, e.Seq, head.Revision)
		}
		head = events.Head{Revision: e.Seq, Hash: e.Hash, OccurredAt: e.OccurredAt}
	}
	return head, nil
}

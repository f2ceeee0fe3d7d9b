package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/jackc/pgx/v5"
)

// The PostgreSQL store is the shared log a project's SQLite cache catches
// up from and writes through (events.Options.Upstream).
var _ events.Upstream = (*Store)(nil)

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
func (s *Store) Locked(ctx context.Context, fn func(w events.LockedLog) error) (err error) {
	const op = "append events"
	if err := s.checkOpen(op); err != nil {
		return err
	}
	lw := &lockedLog{ctx: ctx, store: s}
	defer func() {
		if err != nil && !lw.committed {
			err = s.mapErrNote(op, err, nothingWritten)
		}
	}()
	ptx, l, err := s.beginLocked(ctx, op)
	if err != nil {
		return err
	}
	defer func() {
		if !lw.committed {
			ptx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	lw.tx, lw.head, lw.moved, lw.serverNow = ptx, l.head, l.moved, l.serverNow
	lw.pending = lw.head
	return fn(lw)
}

// lockedLog is the PostgreSQL store's events.LockedLog.
type lockedLog struct {
	ctx       context.Context
	store     *Store
	tx        pgx.Tx
	head      events.Head // at the lock
	pending   events.Head // after the events appended so far
	moved     *Moved      // where the log went, when it is fenced
	serverNow time.Time   // the server's clock at the lock
	committed bool
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
	if _, err := w.tx.Exec(w.ctx, q("head_move"), pgx.NamedArgs{"project": w.store.project, "moved_to": where, "moved_at": at.UnixMilli()}); err != nil {
		return w.store.mapErrNote(op, err, nothingWritten)
	}
	if err := w.store.commit(w.ctx, w.tx, op); err != nil {
		return w.store.mapErrNote(op, err, nothingWritten)
	}
	w.committed = true
	if w.moved == nil {
		w.moved = &Moved{To: where, At: at.UTC(), Revision: w.head.Revision}
	}
	return nil
}

func (w *lockedLog) Head() events.Head { return w.head }

func (w *lockedLog) Scan(from, to int64, fn func(e *events.Event) error) error {
	var fnErr error
	err := w.store.scan(w.ctx, w.tx, from, min(to, w.head.Revision), func(e *events.Event) error {
		fnErr = fn(e)
		return fnErr
	})
	if err != nil && fnErr == nil {
		return w.store.mapErrNote("catch up", err, nothingWritten)
	}
	return err
}

func (w *lockedLog) Request(id string) (events.RequestRecord, bool, error) {
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
	prev := w.pending
	for _, e := range evs {
		if e.Seq != prev.Revision+1 || string(e.PrevHash) != string(prev.Hash) {
			return fault.New(fault.Internal, "%s: event %d does not continue the shared log's head %d", op, e.Seq, prev.Revision)
		}
		prev = events.Head{Revision: e.Seq, Hash: e.Hash, OccurredAt: e.OccurredAt}
	}
	if err := w.store.insertAll(w.ctx, w.tx, evs); err != nil {
		return err
	}
	w.pending = prev
	return nil
}

// Commit appends evs, stores rec and commits: the head advances from the
// locked one to the last event appended.
func (w *lockedLog) Commit(evs []*events.Event, rec *events.RequestRecord) error {
	const op = "append events"
	if w.moved != nil {
		return w.store.movedErr(op, w.moved)
	}
	if err := w.Append(evs); err != nil {
		return err
	}
	if err := w.store.finish(w.ctx, w.tx, op, w.head.Revision, w.pending, rec); err != nil {
		return w.store.mapErrNote(op, err, nothingWritten)
	}
	if err := w.store.commit(w.ctx, w.tx, op); err != nil {
		return w.store.mapErrNote(op, err, nothingWritten)
	}
	w.committed = true
	w.head = w.pending
	return nil
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

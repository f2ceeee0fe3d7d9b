package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Tx is an open write transaction of the PostgreSQL store, as Append hands
// it to its fn: an events.Appender. Its events are visible to statements
// on Tx.Tx at once, and to everyone else at commit.
type Tx struct {
	// Tx is the PostgreSQL transaction, for code that writes beside the
	// log in the same transaction (projections).
	Tx pgx.Tx

	ctx       context.Context
	store     *Store
	opts      events.WriteOptions
	head      events.Head
	startHead int64
	versions  map[string]int64
	appended  []*events.Event
}

// Head returns the project_revision inside the transaction, counting the
// events appended so far.
func (tx *Tx) Head() int64 { return tx.head.Revision }

// StartRevision returns the project_revision when the transaction began.
func (tx *Tx) StartRevision() int64 { return tx.startHead }

// Now returns the write's clock reading.
func (tx *Tx) Now() time.Time { return tx.opts.Now }

// NewID returns a fresh ULID from the write's clock and entropy.
func (tx *Tx) NewID() string { return events.NewEventID(tx.opts.Now, tx.opts.Entropy) }

// Guard checks the write's expected revision against more streams, as
// events.Appender.Guard specifies; the write's own events never conflict
// with it. Errors: RevisionConflict as Append reports it.
func (tx *Tx) Guard(streams ...string) error {
	if tx.opts.ExpectedRevision == nil {
		return nil
	}
	return tx.store.checkRevision(tx.ctx, tx.Tx, *tx.opts.ExpectedRevision, tx.startHead, streams)
}

// Append seals ne as the next event (events.Seal) and inserts it.
//
// Errors: Internal when the payload is missing, of an unknown kind or does
// not encode as a JSON object, or the stream is empty; InvalidInput when
// ne.ID (or the write's request id) is already in the log; Storage when
// the database cannot be written.
func (tx *Tx) Append(ne events.NewEvent) (*events.Event, error) {
	e, err := events.Seal(ne, tx.opts, tx.head, len(tx.appended) == 0, tx.streamVersion)
	if err != nil {
		return nil, err
	}
	if err := tx.store.insert(tx.ctx, tx.Tx, e); err != nil {
		return nil, err
	}
	tx.head = events.Head{Revision: e.Seq, Hash: e.Hash, OccurredAt: e.OccurredAt}
	tx.versions[e.Stream] = e.StreamVersion
	tx.appended = append(tx.appended, e)
	return e, nil
}

func (tx *Tx) streamVersion(stream string) (int64, error) {
	if sv, ok := tx.versions[stream]; ok {
		return sv, nil
	}
	var sv int64
	err := tx.Tx.QueryRow(tx.ctx, q("stream_last"), pgx.NamedArgs{"project": tx.store.project, "stream": stream}).Scan(&sv)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return 0, tx.store.mapErrNote("append event", err, nothingWritten)
	}
	return sv, nil
}

func (s *Store) checkRevision(ctx context.Context, tx querier, expected, actual int64, streams []string) error {
	return events.CheckRevision(expected, actual, streams, func(stream string, after int64) ([]events.Conflict, error) {
		rows, err := tx.Query(ctx, q("stream_after"), pgx.NamedArgs{"project": s.project, "stream": stream, "after": after, "actual": actual})
		if err != nil {
			return nil, s.mapErrNote("check revision", err, nothingWritten)
		}
		found, err := pgx.CollectRows(rows, pgx.RowToStructByName[conflictRow])
		if err != nil {
			return nil, s.mapErrNote("check revision", err, nothingWritten)
		}
		newer := make([]events.Conflict, len(found))
		for i, c := range found {
			newer[i] = events.Conflict{Seq: c.Seq, Kind: events.Kind(c.Kind), Stream: c.Stream}
		}
		return newer, nil
	})
}

// conflictRow is a row of stream_after, its columns read by name.
type conflictRow struct {
	Seq    int64  `db:"seq"`
	Kind   string `db:"kind"`
	Stream string `db:"stream"`
}

// Append runs fn in one transaction that holds the project's head row
// lock, as events.Log.Append specifies: it checks the request id and the
// scoped expected revision, lets fn append, advances the head, stores the
// idempotency record and commits, or does nothing at all if any step
// fails. Writers of every process and machine queue on the head row, each
// as long as its ctx allows.
//
// Errors: as events.Log.Append; Storage when the server cannot be
// reached, ends the connection, or fails the commit (when the connection
// is lost during the commit itself, the message says the write may have
// been committed: a retry with the same request id is safe).
func (s *Store) Append(ctx context.Context, opts events.WriteOptions, fn func(tx events.Appender) (any, error)) (res *events.WriteResult, err error) {
	const op = "append events"
	if err := events.CheckWriteOptions(opts); err != nil {
		return nil, err
	}
	if err := s.checkOpen(op); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			// Every error but the commit's own comes before the commit:
			// the transaction rolls back whole.
			res, err = nil, s.mapErrNote(op, err, nothingWritten)
		}
	}()
	ptx, l, err := s.beginLocked(ctx, op)
	if err != nil {
		return nil, err
	}
	head, moved := l.head, l.moved
	committed := false
	defer func() {
		if !committed {
			ptx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	if moved != nil {
		return nil, s.movedErr(op, moved)
	}
	if s.serverClock {
		opts.Now = l.serverNow
	}
	opts.Now = events.ClampNow(opts.Now, head.OccurredAt)
	if opts.RequestID != "" {
		prior, found, err := s.request(ctx, ptx, opts.RequestID)
		switch {
		case err != nil:
			return nil, err
		case found && prior.Fingerprint != opts.Fingerprint:
			return nil, events.RequestIDUsed(opts.RequestID, prior.FirstSeq, true)
		case found:
			return &events.WriteResult{Result: prior.Result, Replayed: true, Revision: head.Revision}, nil
		}
		// An imported log carries request ids without their records.
		var seq int64
		err = ptx.QueryRow(ctx, q("request_seq"), pgx.NamedArgs{"project": s.project, "request_id": opts.RequestID}).Scan(&seq)
		if err == nil {
			return nil, events.RequestIDUsed(opts.RequestID, seq, false)
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return nil, err
		}
	}
	if opts.ExpectedRevision != nil {
		if err := s.checkRevision(ctx, ptx, *opts.ExpectedRevision, head.Revision, opts.Streams); err != nil {
			return nil, err
		}
	}
	tx := &Tx{Tx: ptx, ctx: ctx, store: s, opts: opts, head: head, startHead: head.Revision, versions: map[string]int64{}}
	value, err := fn(tx)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(value)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "%s: encode result", op)
	}
	var rec *events.RequestRecord
	if opts.RequestID != "" {
		rec = &events.RequestRecord{ID: opts.RequestID, Fingerprint: opts.Fingerprint, Result: raw}
		if n := len(tx.appended); n > 0 {
			rec.FirstSeq, rec.LastSeq = tx.appended[0].Seq, tx.appended[n-1].Seq
		}
	}
	if err := s.finish(ctx, ptx, op, tx.startHead, tx.head, rec); err != nil {
		return nil, err
	}
	if err := s.commit(ctx, ptx, op); err != nil {
		return nil, err
	}
	committed = true
	return &events.WriteResult{Result: raw, Events: tx.appended, Revision: tx.head.Revision}, nil
}

// beginLocked begins a READ COMMITTED transaction and locks the project's
// head row in it (lockHead), retrying both for a passing failure
// (Options.RetryFor): nothing is written before the lock.
func (s *Store) beginLocked(ctx context.Context, op string) (pgx.Tx, locked, error) {
	var ptx pgx.Tx
	var l locked
	err := s.retry(ctx, op, func() error {
		t, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
		if err != nil {
			return err
		}
		got, err := s.scanLock(t.QueryRow(ctx, q("head_lock"), pgx.NamedArgs{"project": s.project, "idle_limit": s.idleLimitArg(ctx)}), op)
		if err != nil {
			t.Rollback(context.WithoutCancel(ctx))
			return err
		}
		ptx, l = t, got
		return nil
	})
	return ptx, l, err
}

// locked is what taking the head row's lock learns: the head, where the
// log moved (nil unless fenced), and the server's clock at the lock.
type locked struct {
	head      events.Head
	moved     *Moved
	serverNow time.Time
	request   *prefetched // LockedRequest's record, or nil
}

// scanLock reads the answer of head_lock, which locks the project's head
// row (and sets the transaction's IdleLimit): the head, where the log
// moved when it is fenced (nil otherwise) and the server's clock. Every later statement of the READ COMMITTED
// transaction sees every write committed before the lock was granted.
func (s *Store) scanLock(row pgx.Row, op string) (locked, error) {
	var l locked
	var to *string
	var at, now int64
	var limit string
	if err := row.Scan(&l.head.Revision, &l.head.Hash, &l.head.OccurredAt, &to, &at, &now, &limit); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return l, fault.New(fault.Storage, "%s: project %s has no head row in %s", op, s.project, s.server).WithHint("awr verify")
		}
		return l, err
	}
	l.serverNow = time.UnixMilli(now).UTC()
	s.seen.clock(l.serverNow)
	s.seen.saw(l.head.Revision)
	if to != nil {
		l.moved = &Moved{To: *to, At: time.UnixMilli(at).UTC(), Revision: l.head.Revision}
	}
	return l, nil
}

// request returns the idempotency record of request id, if any.
func (s *Store) request(ctx context.Context, ptx querier, id string) (events.RequestRecord, bool, error) {
	return scanRequest(ptx.QueryRow(ctx, q("request_get"), pgx.NamedArgs{"project": s.project, "request_id": id}), id)
}

// scanRequest reads the answer of request_get for request id.
func scanRequest(row pgx.Row, id string) (events.RequestRecord, bool, error) {
	rec := events.RequestRecord{ID: id}
	var result string
	err := row.Scan(&rec.Fingerprint, &rec.FirstSeq, &result)
	if errors.Is(err, pgx.ErrNoRows) {
		return events.RequestRecord{}, false, nil
	}
	if err != nil {
		return events.RequestRecord{}, false, err
	}
	rec.Result = json.RawMessage(result)
	return rec, true, nil
}

// insertAll inserts the sealed events evs in ptx in one round trip (a
// pipelined batch), as insert does each.
func (s *Store) insertAll(ctx context.Context, ptx querier, evs []*events.Event) error {
	if len(evs) == 1 {
		return s.insert(ctx, ptx, evs[0])
	}
	b := &pgx.Batch{}
	for _, e := range evs {
		b.Queue(q("insert_event"), insertArgs(s.project, e))
	}
	br := ptx.SendBatch(ctx, b)
	for _, e := range evs {
		tag, err := br.Exec()
		if err != nil {
			br.Close()
			return s.mapErrNote("append event", err, nothingWritten)
		}
		if tag.RowsAffected() != 1 {
			br.Close()
			return fault.New(fault.InvalidInput, "append event: seq %d: id %s or request id %q is already in the log", e.Seq, e.ID, e.RequestID)
		}
	}
	if err := br.Close(); err != nil {
		return s.mapErrNote("append event", err, nothingWritten)
	}
	return nil
}

// insertArgs are the insert_event arguments of e.
func insertArgs(project string, e *events.Event) pgx.NamedArgs {
	var requestID *string
	if e.RequestID != "" {
		requestID = &e.RequestID
	}
	return pgx.NamedArgs{
		"project": project, "seq": e.Seq, "id": e.ID, "kind": string(e.Kind), "stream": e.Stream,
		"stream_version": e.StreamVersion, "occurred_at": e.OccurredAt, "actor": e.Actor, "request_id": requestID,
		"payload": e.Payload, "prev_hash": e.PrevHash, "hash": e.Hash,
	}
}

// insert inserts the sealed event e in ptx.
// Errors: InvalidInput when its id or request id is already in the log;
// Storage.
func (s *Store) insert(ctx context.Context, ptx querier, e *events.Event) error {
	tag, err := ptx.Exec(ctx, q("insert_event"), insertArgs(s.project, e))
	if err != nil {
		return s.mapErrNote("append event", err, nothingWritten)
	}
	if tag.RowsAffected() != 1 {
		// ON CONFLICT DO NOTHING keeps the transaction usable; under the
		// head lock only an id or a request id can collide.
		return fault.New(fault.InvalidInput, "append event: seq %d: id %s or request id %q is already in the log", e.Seq, e.ID, e.RequestID)
	}
	return nil
}

// finish advances the head from start to head (when events were
// appended), wakes the listeners, and stores rec, the write's
// idempotency record, when not nil.
func (s *Store) finish(ctx context.Context, ptx querier, op string, start int64, head events.Head, rec *events.RequestRecord) error {
	if head.Revision != start {
		tag, err := ptx.Exec(ctx, q("head_advance"), pgx.NamedArgs{"project": s.project, "seq": head.Revision,
			"hash": head.Hash, "occurred_at": head.OccurredAt, "start_seq": start})
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 {
			return fault.New(fault.Internal, "%s: the head of project %s moved while its lock was held", op, s.project)
		}
		if _, err := ptx.Exec(ctx, q("notify"), pgx.NamedArgs{"project": s.project, "seq": head.Revision}); err != nil {
			return err
		}
	}
	if rec != nil {
		if _, err := ptx.Exec(ctx, q("request_put"), pgx.NamedArgs{"project": s.project, "request_id": rec.ID,
			"fingerprint": rec.Fingerprint, "first_seq": rec.FirstSeq, "last_seq": rec.LastSeq, "result": string(rec.Result)}); err != nil {
			return err
		}
	}
	return nil
}

// commit commits ptx. Errors: Storage; when the connection is lost during
// the commit itself, the message says the write may have been committed.
func (s *Store) commit(ctx context.Context, ptx pgx.Tx, op string) error {
	err := ptx.Commit(ctx)
	if err == nil {
		return nil
	}
	var pe *pgconn.PgError
	if errors.Is(err, pgx.ErrTxCommitRollback) {
		return fault.New(fault.Storage, "%s: an earlier statement failed, so the server rolled the transaction back; nothing was written", op)
	}
	if !errors.As(err, &pe) && !pgconn.SafeToRetry(err) {
		// The commit was sent, and the connection went (or ctx ended)
		// before the answer came: whether the server applied it is
		// unknown. pgx says SafeToRetry only when nothing was sent, the
		// one case that is "nothing was written".
		return s.lostCommit(op, err)
	}
	return err
}

// lostCommit is the error of a commit sent whose answer was lost (err):
// the write may have been committed.
func (s *Store) lostCommit(op string, err error) error {
	return fault.New(fault.Storage, "%s: lost the connection to the PostgreSQL server at %s during the commit (%v); the write may have been committed: check the head, or retry with the same request id", op, s.server, err).
		With("server", s.server).WithHint("awr status")
}

package events

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"time"

	"github.com/awr-dev/awr/internal/fault"
	"zombiezen.com/go/sqlite"
)

// NewEvent is an event to append: its kind is its payload's Kind, and the
// store assigns seq, id, stream_version, occurred_at, request_id and the
// hashes.
type NewEvent struct {
	Stream string
	// Payload is the event's payload struct, e.g. SessionStarted or
	// *SessionStarted.
	Payload Payload
	// ID, if set, is the event's id (from Tx.NewID), for events whose
	// payload names themselves, such as a checkpoint's id.
	ID string
}

// WriteOptions scopes a write.
type WriteOptions struct {
	// Now is the write's clock reading; every event's occurred_at and id
	// timestamp come from it. A reading earlier than the head event's
	// occurred_at is raised to it, so occurred_at never decreases with
	// seq. Required.
	Now time.Time
	// Entropy feeds ULID generation. Required.
	Entropy io.Reader
	// Actor labels who wrote the events. Required.
	Actor string
	// ExpectedRevision, if set, makes the write fail with RevisionConflict
	// when any stream in Streams has an event with seq greater than it.
	ExpectedRevision *int64
	// Streams are the streams the write's decision depends on.
	Streams []string
	// RequestID makes the write idempotent: a repeat with the same
	// Fingerprint returns the first result and appends nothing.
	RequestID string
	// Fingerprint identifies the request's content (e.g. a hash of its
	// canonical arguments); required with RequestID.
	Fingerprint string
	// Fork marks the write that forks a replica (appends project_forked):
	// the one write a replica accepts before it is forked.
	Fork bool
	// Bulk marks a write that appends or reads much of the log (an
	// import, a batch of a generated history): its connection is a bulk
	// connection (ReadBulk), so the process's memory does not grow with
	// the log.
	Bulk bool
	// unfolded appends without applying the projectors or marking them
	// (a cache's bulk catch-up, which rebuilds them in the same
	// transaction).
	unfolded bool
}

// WriteResult reports a committed write.
type WriteResult struct {
	// Result is the JSON encoding of the value fn returned (or, for a
	// repeated request, of the first result).
	Result json.RawMessage
	// Replayed is true when the request id was seen before and nothing was
	// appended.
	Replayed bool
	// Events are the events appended (none when Replayed).
	Events []*Event
	// Revision is the project_revision after the write.
	Revision int64
}

// Tx is an open write transaction. Appends are visible to reads on Conn
// immediately, projections included.
type Tx struct {
	Conn     *sqlite.Conn
	store    *Store
	opts     WriteOptions
	head     int64
	lastHash []byte
	lastTime int64 // occurred_at of the head event
	// versions caches the streams' versions the transaction appended
	// to (the table's own is read on a miss), up to txVersionsMax.
	versions  map[string]int64
	appended  []*Event
	startHead int64
	// replicaChecked is set once the first Append checked that the log
	// is not a replica that refuses writes.
	replicaChecked bool
	// raw counts the events appended with AppendRaw.
	raw int
}

// Head returns the current project_revision inside the transaction.
func (tx *Tx) Head() int64 { return tx.head }

// StartRevision returns the project_revision when the transaction began.
func (tx *Tx) StartRevision() int64 { return tx.startHead }

// Now returns the write's clock reading.
func (tx *Tx) Now() time.Time { return tx.opts.Now }

// NewID returns a fresh ULID from the write's clock and entropy.
func (tx *Tx) NewID() string { return NewEventID(tx.opts.Now, tx.opts.Entropy) }

// SetActor changes the actor stamped on subsequent appends and returns the
// previous one (batches run several agents' commands in one transaction).
func (tx *Tx) SetActor(actor string) string {
	prev := tx.opts.Actor
	if actor != "" {
		tx.opts.Actor = actor
	}
	return prev
}

// Appended returns the events appended so far with Append (imported
// events are not retained).
func (tx *Tx) Appended() []*Event { return tx.appended }

// Guard checks the write's expected revision against more streams, for
// writes that learn which streams they touch while deciding; the write's
// own events never conflict with it. Errors: RevisionConflict as Write
// reports it.
func (tx *Tx) Guard(streams ...string) error {
	if tx.opts.ExpectedRevision == nil {
		return nil
	}
	return checkConflicts(tx.Conn, *tx.opts.ExpectedRevision, tx.startHead, streams)
}

// Append validates and appends one event, then applies every projector to
// it. The event's kind is ne.Payload.Kind().
//
// Errors: ReadOnlyReplica (details.origin, hint `awr fork --accept`) when
// the log is an imported replica that was not forked and the write is not
// the fork (WriteOptions.Fork); Internal when the payload is missing, of an unknown kind or does
// not encode as a JSON object, or the stream is empty; InvalidInput when
// ne.ID is already in the log; any error a projector returns.
func (tx *Tx) Append(ne NewEvent) (*Event, error) {
	e, err := Seal(ne, tx.opts, Head{Revision: tx.head, Hash: tx.lastHash, OccurredAt: tx.lastTime}, len(tx.appended) == 0, tx.streamVersion)
	if err != nil {
		return nil, err
	}
	if err := tx.insertTyped(e, ne.Payload); err != nil {
		return nil, err
	}
	return e, nil
}

// streamVersion is Seal's look-up of a stream's latest version, after the
// replica check.
func (tx *Tx) streamVersion(stream string) (int64, error) {
	if !tx.replicaChecked {
		// A replica refuses every event but its fork: the one place
		// every write of every front end goes through.
		if err := checkReplica(tx.Conn, tx.opts.Fork); err != nil {
			return 0, err
		}
		tx.replicaChecked = true
	}
	return tx.lastStreamVersion(stream)
}

// lastStreamVersion is stream's latest version: the one this transaction
// wrote, or else the log's (0 for a new stream).
func (tx *Tx) lastStreamVersion(stream string) (int64, error) {
	if sv, ok := tx.versions[stream]; ok {
		return sv, nil
	}
	st := prep(tx.Conn, "stream_last")
	st.SetText(":stream", stream)
	defer st.Reset()
	row, err := st.Step()
	if err != nil || !row {
		return 0, err
	}
	return st.GetInt64("stream_version"), nil
}

// AppendRaw appends an event whose envelope and hashes are already set (an
// import). It checks that the event continues the chain: seq is head+1,
// prev_hash is the head's hash, the hash recomputes and stream_version is
// the stream's next; then it applies the projectors.
func (tx *Tx) AppendRaw(e *Event) error {
	if e.Seq != tx.head+1 {
		return fault.New(fault.InvalidInput, "append event: seq %d does not follow project_revision %d", e.Seq, tx.head)
	}
	if !bytesEqual(e.PrevHash, tx.lastHash) {
		return fault.New(fault.InvalidInput, "append event: seq %d: prev_hash does not match the hash of seq %d", e.Seq, tx.head)
	}
	if got := ComputeHash(e.PrevHash, e); !bytesEqual(got, e.Hash) {
		return fault.New(fault.InvalidInput, "append event: seq %d: hash does not match its content", e.Seq)
	}
	sv, err := tx.lastStreamVersion(e.Stream)
	if err != nil {
		return err
	}
	if e.StreamVersion != sv+1 {
		return fault.New(fault.InvalidInput, "append event: seq %d: stream %s version %d does not follow %d", e.Seq, e.Stream, e.StreamVersion, sv)
	}
	if err := checkSize(e); err != nil {
		return err
	}
	tx.raw++
	return tx.insert(e, false)
}

// insertTyped inserts e, an event Append built from the payload struct
// given, and hands the projectors that struct rather than a decode of the
// bytes just encoded, when the two are the same value: the struct is of the
// kind's payload type (a value is copied into a fresh pointer, as Decode
// returns), and its encoding holds no U+FFFD, the one character
// encoding/json writes in place of what it cannot encode (invalid UTF-8),
// so decoding the bytes gives the same struct back. Otherwise, and always
// when the tests' check that the two agree is on (SetVerifyPayloads), it
// decodes the stored bytes.
func (tx *Tx) insertTyped(e *Event, given Payload) error {
	var typed Payload
	if len(tx.store.projectors) > 0 && !replaced(e.Payload) {
		typed = asPointer(e.Kind, given)
	}
	if typed != nil && verifyPayloadsOn() {
		decoded, err := Decode(e)
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(decoded, typed) {
			return fault.New(fault.Internal, "append event: seq %d: the %s payload given and its stored encoding decode to different values", e.Seq, e.Kind).
				With("seq", e.Seq).With("kind", e.Kind)
		}
	}
	return tx.insertWith(e, true, typed)
}

// replaced reports whether an encoded payload holds U+FFFD, raw or as
// the escape encoding/json writes for invalid UTF-8.
func replaced(raw []byte) bool {
	return bytes.Contains(raw, []byte("\uFFFD")) || bytes.Contains(raw, []byte(`\ufffd`))
}

// asPointer returns p as the pointer type DecodePayload makes for kind (a
// struct value copied into a new pointer), or nil when p is of another
// type.
func asPointer(kind Kind, p Payload) Payload {
	mk, ok := payloadTypes[kind]
	if !ok {
		return nil
	}
	want := reflect.TypeOf(mk())
	v := reflect.ValueOf(p)
	switch {
	case v.Type() == want:
		if v.IsNil() {
			return nil
		}
		return p
	case reflect.PointerTo(v.Type()) == want:
		ptr := reflect.New(v.Type())
		ptr.Elem().Set(v)
		typed, _ := ptr.Interface().(Payload)
		return typed
	}
	return nil
}

func (tx *Tx) insert(e *Event, keep bool) error { return tx.insertWith(e, keep, nil) }

// insertWith inserts e and applies the projectors to typed, its payload
// struct, or, when typed is nil, to the payload decoded from e's bytes.
func (tx *Tx) insertWith(e *Event, keep bool, typed Payload) error {
	st := prep(tx.Conn, "insert_event")
	st.SetInt64(":seq", e.Seq)
	st.SetText(":id", e.ID)
	st.SetText(":kind", string(e.Kind))
	st.SetText(":stream", e.Stream)
	st.SetInt64(":stream_version", e.StreamVersion)
	st.SetInt64(":occurred_at", e.OccurredAt)
	st.SetText(":actor", e.Actor)
	if e.RequestID == "" {
		st.SetNull(":request_id")
	} else {
		st.SetText(":request_id", e.RequestID)
	}
	st.SetText(":payload", string(e.Payload))
	st.SetBytes(":prev_hash", e.PrevHash)
	st.SetBytes(":hash", e.Hash)
	_, err := st.Step()
	st.Reset()
	if err != nil {
		if sqlite.ErrCode(err) == sqlite.ResultConstraintUnique {
			return fault.New(fault.InvalidInput, "append event: seq %d: id %s or request id %q is already in the log", e.Seq, e.ID, e.RequestID)
		}
		return err
	}
	if len(tx.store.projectors) > 0 && !tx.opts.unfolded {
		// The caller's struct only when it is what a decode of the
		// stored bytes gives (insertTyped), so projectors see what a
		// replay will see.
		payload := typed
		if payload == nil {
			var err error
			if payload, err = Decode(e); err != nil {
				return err
			}
		}
		for _, p := range tx.store.projectors {
			if err := p.Apply(tx.Conn, e, payload); err != nil {
				return fmt.Errorf("apply seq %d to projection %s: %w", e.Seq, p.Name(), err)
			}
		}
	}
	tx.head = e.Seq
	tx.lastHash = e.Hash
	tx.lastTime = e.OccurredAt
	if len(tx.versions) >= txVersionsMax {
		clear(tx.versions)
	}
	tx.versions[e.Stream] = e.StreamVersion
	if keep {
		tx.appended = append(tx.appended, e)
	}
	return nil
}

// txVersionsMax bounds a transaction's cache of stream versions: an
// import appends a whole log in one transaction, one stream per session,
// and the cache must not grow with it; past the bound it starts again
// empty, and a stream not in it is read from the table (stream_last).
const txVersionsMax = 1 << 12

func bytesEqual(a, b []byte) bool { return string(a) == string(b) }

// Conflict is one newer event on a stream a write depends on.
type Conflict struct {
	Seq    int64  `json:"seq"`
	Kind   Kind   `json:"kind"`
	Stream string `json:"stream"`
}

func checkConflicts(conn *sqlite.Conn, expected, actual int64, streams []string) error {
	return CheckRevision(expected, actual, streams, func(stream string, after int64) ([]Conflict, error) {
		var newer []Conflict
		st := prep(conn, "stream_after")
		st.SetText(":stream", stream)
		st.SetInt64(":after", after)
		err := eachRow(st, func() bool {
			if st.GetInt64("seq") > actual {
				return false // the write's own events never conflict with it
			}
			newer = append(newer, Conflict{Seq: st.GetInt64("seq"), Kind: Kind(st.GetText("kind")), Stream: st.GetText("stream")})
			return true
		})
		if err != nil {
			return nil, err
		}
		return newer, nil
	})
}

// Write runs fn in one IMMEDIATE transaction: it checks the request id and
// the scoped expected revision, lets fn read and append, applies the
// projections, stores the idempotency record, and commits, or does nothing
// at all if any step fails.
//
// Errors: ReadOnlyReplica from the first Append of fn on an unforked
// replica (see Tx.Append); RevisionConflict when a stream in opts.Streams has an event newer
// than opts.ExpectedRevision; InvalidInput when opts.RequestID was used for
// a different request; Storage when the database is busy past ctx's
// deadline or cannot be written, or "damaged" when its append-only
// triggers were missing at open; any error fn returns.
func (s *Store) Write(ctx context.Context, opts WriteOptions, fn func(tx *Tx) (any, error)) (res *WriteResult, err error) {
	if err := CheckWriteOptions(opts); err != nil {
		return nil, err
	}
	if len(s.unprotected) > 0 {
		return nil, unprotectedError(s.path, s.unprotected)
	}
	if s.up != nil {
		return s.writeThrough(ctx, opts, fn)
	}
	return s.writeLocal(ctx, opts, func(tx *Tx) (any, error) {
		if err := s.stillWhere(tx); err != nil {
			return nil, err
		}
		return fn(tx)
	}, nil)
}

// stillWhere refuses a write through a store opened before its project's
// log moved (awr migrate, in another process): a file that became a
// shared log's cache written alone, or a cache that became a log of its
// own written through.
// Errors: InvalidTransition, hint: the same command again.
func (s *Store) stillWhere(tx *Tx) error {
	mark, err := SharedOf(tx.Conn)
	if err != nil {
		return err
	}
	switch {
	case mark != nil && s.up == nil:
		return fault.New(fault.InvalidTransition, "write: the project's log moved to the shared store %s while this process had it open; nothing was written", mark.Store).
			With("store", mark.Store)
	case mark == nil && s.up != nil:
		return fault.New(fault.InvalidTransition, "write: the project's log moved out of the shared store %s into %s while this process had it open; nothing was written", s.up.Describe(), s.path).
			With("path", s.path)
	}
	return nil
}

// writeLocal is Write on this SQLite file; beforeCommit, if set, runs last
// inside the transaction with the write's result, and its error rolls the
// write back.
func (s *Store) writeLocal(ctx context.Context, opts WriteOptions, fn func(tx *Tx) (any, error), beforeCommit func(tx *Tx, r *WriteResult) error) (res *WriteResult, err error) {
	return s.writer(ctx, "write", func(conn *sqlite.Conn) (res *WriteResult, err error) {
		if opts.Bulk {
			leave, err := s.enterBulk(conn, false)
			if err != nil {
				return nil, err
			}
			defer leave()
		}
		endFn, err := s.beginImmediate(ctx, conn)
		if err != nil {
			return nil, err
		}
		defer endFn(&err)

		head, lastHash, lastTime, err := headOf(conn)
		if err != nil {
			return nil, err
		}
		// The clock was read before the lock: another writer may have
		// committed a later reading meanwhile.
		opts.Now = ClampNow(opts.Now, lastTime)
		if opts.RequestID != "" {
			prior, found, err := lookupRequest(conn, opts.RequestID)
			if err != nil {
				return nil, err
			}
			if found {
				if prior.fingerprint != opts.Fingerprint {
					return nil, RequestIDUsed(opts.RequestID, prior.firstSeq, true)
				}
				return &WriteResult{Result: prior.result, Replayed: true, Revision: head}, nil
			}
			// An imported log carries request ids without their records.
			st := prep(conn, "request_seq")
			st.SetText(":request_id", opts.RequestID)
			row, err := st.Step()
			var seq int64
			if row {
				seq = st.GetInt64("seq")
			}
			st.Reset()
			if err != nil {
				return nil, err
			}
			if row {
				return nil, RequestIDUsed(opts.RequestID, seq, false)
			}
		}
		if opts.ExpectedRevision != nil {
			if err := checkConflicts(conn, *opts.ExpectedRevision, head, opts.Streams); err != nil {
				return nil, err
			}
		}
		tx := &Tx{Conn: conn, store: s, opts: opts, head: head, startHead: head, lastHash: lastHash, lastTime: lastTime, versions: map[string]int64{}}
		value, err := fn(tx)
		if err != nil {
			return nil, err
		}
		if tx.head != tx.startHead && !opts.unfolded {
			if err := markProjections(conn, s.projectors, tx.head); err != nil {
				return nil, err
			}
		}
		raw, err := json.Marshal(value)
		if err != nil {
			return nil, fault.Wrap(fault.Internal, err, "write: encode result")
		}
		if opts.RequestID != "" {
			var first, last int64
			if n := len(tx.appended); n > 0 {
				first, last = tx.appended[0].Seq, tx.appended[n-1].Seq
			}
			if err := putRequest(conn, "request_put", RequestRecord{ID: opts.RequestID, Fingerprint: opts.Fingerprint, FirstSeq: first, LastSeq: last, Result: raw}); err != nil {
				return nil, err
			}
		}
		// A database removed or replaced under an open store would take the
		// commit into an unlinked file: refuse, so nothing is acknowledged
		// that a later reader cannot see.
		if err := s.stillOpen("write"); err != nil {
			return nil, err
		}
		out := &WriteResult{Result: raw, Events: tx.appended, Revision: tx.head}
		if beforeCommit != nil {
			if err := beforeCommit(tx, out); err != nil {
				return nil, err
			}
		}
		return out, nil
	})
}

// writer runs fn on the store's write connection: writers of this process
// queue on the store's mutex, the connection goes back to the pool, and an
// error comes back coded (an interrupt as "interrupted; nothing was
// written", SQLite's codes through mapErr) with no result.
func (s *Store) writer(ctx context.Context, op string, fn func(conn *sqlite.Conn) (*WriteResult, error)) (res *WriteResult, err error) {
	defer s.catchFault(op, &err, armFault())
	if s.ro != nil {
		return nil, s.readOnlyError(op)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	conn, err := s.take(ctx)
	if err != nil {
		return nil, err
	}
	defer s.pool.Put(conn)
	defer func() {
		if err != nil && errors.Is(ctx.Err(), context.Canceled) {
			err = fault.New(fault.Storage, "%s: interrupted; nothing was written", op)
		}
		err = mapErr(op, err)
		if err != nil {
			res = nil
		}
	}()
	return fn(conn)
}

type requestRecord struct {
	fingerprint string
	firstSeq    int64
	result      json.RawMessage
}

func lookupRequest(conn *sqlite.Conn, id string) (requestRecord, bool, error) {
	st := prep(conn, "request_get")
	st.SetText(":request_id", id)
	defer st.Reset()
	row, err := st.Step()
	if err != nil || !row {
		return requestRecord{}, false, err
	}
	return requestRecord{fingerprint: st.GetText("fingerprint"), firstSeq: st.GetInt64("first_seq"), result: json.RawMessage(st.GetText("result"))}, true, nil
}

// Fingerprint returns a stable hex SHA-256 of v's JSON encoding, for
// WriteOptions.Fingerprint.
func Fingerprint(v any) string {
	raw, _ := json.Marshal(v)
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

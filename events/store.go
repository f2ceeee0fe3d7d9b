package events

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/awr-dev/awr/fault"
	"github.com/oklog/ulid/v2"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// applicationID marks a SQLite file as an awr project database ("awr!").
const applicationID = 0x61777221

// Projector is a read model folded from events. The store applies every
// registered projector to every appended event inside the append's
// transaction, records the last seq each one applied, and rebuilds a
// projector from the log when its Version changes.
type Projector interface {
	// Name identifies the projection; it is stored in the projections table.
	Name() string
	// Version changes whenever the projection's tables or folding change.
	Version() int
	// Reset drops the projection's tables and creates them empty.
	Reset(conn *sqlite.Conn) error
	// Apply folds one event. It must be deterministic: it may read only the
	// event and the projection's own tables, never the clock.
	Apply(conn *sqlite.Conn, e *Event) error
}

// BulkProjector is a Projector that rebuilds faster from scratch: between
// BeginBulk and EndBulk it may hold state in memory and defer its secondary
// indexes. The tables it leaves must equal those incremental Apply builds.
type BulkProjector interface {
	Projector
	// BeginBulk drops and recreates the tables (indexes may wait).
	BeginBulk(conn *sqlite.Conn) error
	// EndBulk writes what is held in memory and creates the indexes.
	EndBulk(conn *sqlite.Conn) error
}

// Options configures Open.
type Options struct {
	// Create makes Open create the database (and its directory) if missing.
	// Without it a missing database is NotFound with the hint `awr init`.
	Create bool
	// Synchronous is the SQLite synchronous mode; "FULL" when empty.
	Synchronous string
	// Projectors are applied to every appended event.
	Projectors []Projector
	// PoolSize is the number of connections; 2 when zero.
	PoolSize int
	// Progress, if set, reports rebuild progress at Open.
	Progress func(done, total int64)
	// LockTimeout bounds how long a writer waits for the write lock held by
	// another process before failing with Storage "database is busy"; 0
	// waits as long as the caller's context allows. It bounds the wait
	// only, never the work done once the lock is held.
	LockTimeout time.Duration
}

// Store is an open project event log. It is safe for concurrent use; many
// processes may open the same database at once.
type Store struct {
	path        string
	pool        *sqlitex.Pool
	projectors  []Projector
	lockTimeout time.Duration
	closeOnce   sync.Once
	closeErr    error
	mu          sync.Mutex // serializes in-process writers so they queue in Go rather than in SQLite's busy handler
}

// DBPath returns the database path of the project rooted at dir.
func DBPath(projectDir string) string { return filepath.Join(projectDir, ".awr", "awr.db") }

// Open opens (and with opts.Create creates) the event log at path, runs
// pending migrations and rebuilds projections whose version changed.
// Errors: NotFound when the database is missing and Create is false;
// Storage when the file is not an awr database, comes from a newer awr, or
// cannot be opened.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if _, err := os.Stat(path); err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			return nil, fault.Wrap(fault.Storage, err, "open project database %s", path)
		}
		if !opts.Create {
			return nil, fault.New(fault.NotFound, "open project: no awr project at %s", filepath.Dir(filepath.Dir(path))).
				With("path", path).WithHint("awr init")
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fault.Wrap(fault.Storage, err, "create project directory")
		}
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			return nil, fault.Wrap(fault.Storage, err, "create project database %s", path)
		}
		f.Close()
	}
	sync := strings.ToUpper(opts.Synchronous)
	if sync == "" {
		sync = "FULL"
	}
	switch sync {
	case "OFF", "NORMAL", "FULL", "EXTRA":
	default:
		return nil, fault.New(fault.InvalidInput, "open project: synchronous mode %q is not OFF, NORMAL, FULL or EXTRA", opts.Synchronous)
	}
	size := opts.PoolSize
	if size <= 0 {
		size = 2
	}
	pool, err := sqlitex.NewPool(path, sqlitex.PoolOptions{
		Flags:    sqlite.OpenReadWrite | sqlite.OpenWAL | sqlite.OpenNoMutex,
		PoolSize: size,
		PrepareConn: func(conn *sqlite.Conn) error {
			for _, pragma := range []string{"PRAGMA foreign_keys=ON", "PRAGMA synchronous=" + sync, "PRAGMA cache_size=-32768"} {
				if err := sqlitex.ExecuteTransient(conn, pragma, nil); err != nil {
					return err
				}
			}
			return nil
		},
	})
	if err != nil {
		return nil, storageErr("open project database", err)
	}
	s := &Store{path: path, pool: pool, projectors: opts.Projectors, lockTimeout: opts.LockTimeout}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	if err := s.syncProjections(ctx, opts.Progress); err != nil && !fault.Is(err, fault.VerifyFailed) {
		// A log whose chain is broken cannot be folded; the project still
		// opens, with stale projections, so that `awr verify` can say why.
		pool.Close()
		return nil, err
	}
	return s, nil
}

// beginImmediate starts a write transaction, waiting for the write lock at
// most the store's lock timeout (and never past ctx).
func (s *Store) beginImmediate(ctx context.Context, conn *sqlite.Conn) (func(*error), error) {
	if s.lockTimeout > 0 {
		lockCtx, cancel := context.WithTimeout(ctx, s.lockTimeout)
		defer cancel()
		conn.SetInterrupt(lockCtx.Done())
		defer conn.SetInterrupt(ctx.Done())
	}
	return sqlitex.ImmediateTransaction(conn)
}

// Path returns the database file path.
func (s *Store) Path() string { return s.path }

// Projectors returns the registered projectors.
func (s *Store) Projectors() []Projector { return s.projectors }

// Close closes every connection. Closing twice is a no-op.
func (s *Store) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.pool.Close() })
	return s.closeErr
}

func (s *Store) take(ctx context.Context) (*sqlite.Conn, error) {
	conn, err := s.pool.Take(ctx)
	if err != nil {
		return nil, storageErr("open connection", err)
	}
	return conn, nil
}

func (s *Store) migrate(ctx context.Context) (err error) {
	conn, err := s.take(ctx)
	if err != nil {
		return err
	}
	defer s.pool.Put(conn)
	var appID, version int
	if err := sqlitex.ExecuteTransient(conn, "PRAGMA application_id", &sqlitex.ExecOptions{ResultFunc: func(st *sqlite.Stmt) error {
		appID = st.ColumnInt(0)
		return nil
	}}); err != nil {
		return storageErr("read schema", err)
	}
	if err := sqlitex.ExecuteTransient(conn, "PRAGMA user_version", &sqlitex.ExecOptions{ResultFunc: func(st *sqlite.Stmt) error {
		version = st.ColumnInt(0)
		return nil
	}}); err != nil {
		return storageErr("read schema", err)
	}
	steps := migrations()
	if appID != 0 && appID != applicationID {
		return fault.New(fault.Storage, "open project database %s: not an awr database (application_id %#x)", s.path, appID)
	}
	if version > len(steps) {
		return fault.New(fault.Storage, "open project database %s: schema version %d is newer than this awr supports (%d)", s.path, version, len(steps)).
			With("schema_version", version).With("supported", len(steps)).WithHint("upgrade awr")
	}
	if version == len(steps) && appID == applicationID {
		return nil
	}
	endFn, err := s.beginImmediate(ctx, conn)
	if err != nil {
		return storageErr("migrate schema", err)
	}
	defer endFn(&err)
	// Re-read inside the write lock: another process may have migrated.
	if err := sqlitex.ExecuteTransient(conn, "PRAGMA user_version", &sqlitex.ExecOptions{ResultFunc: func(st *sqlite.Stmt) error {
		version = st.ColumnInt(0)
		return nil
	}}); err != nil {
		return storageErr("migrate schema", err)
	}
	if version == 0 {
		var tables int
		if err := sqlitex.ExecuteTransient(conn, "SELECT count(*) FROM sqlite_schema", &sqlitex.ExecOptions{ResultFunc: func(st *sqlite.Stmt) error {
			tables = st.ColumnInt(0)
			return nil
		}}); err != nil {
			return storageErr("migrate schema", err)
		}
		if tables > 0 && appID != applicationID {
			return fault.New(fault.Storage, "open project database %s: not an awr database", s.path)
		}
	}
	for _, m := range steps[version:] {
		if err := sqlitex.ExecuteScript(conn, m.script, nil); err != nil {
			return storageErr(fmt.Sprintf("migrate schema to %d", m.version), err)
		}
	}
	if err := sqlitex.ExecuteTransient(conn, fmt.Sprintf("PRAGMA user_version=%d", len(steps)), nil); err != nil {
		return storageErr("migrate schema", err)
	}
	if err := sqlitex.ExecuteTransient(conn, fmt.Sprintf("PRAGMA application_id=%d", applicationID), nil); err != nil {
		return storageErr("migrate schema", err)
	}
	return nil
}

// syncProjections rebuilds every projector whose stored version differs or
// that lags the head. A projection ahead of the head (events were cut from
// the log behind awr's back) is left alone as evidence for `awr verify`.
func (s *Store) syncProjections(ctx context.Context, progress func(done, total int64)) error {
	if len(s.projectors) == 0 {
		return nil
	}
	if err := s.forgetRetired(ctx); err != nil {
		return err
	}
	stale, err := s.staleProjectors(ctx)
	if err != nil || len(stale) == 0 {
		return err
	}
	return s.rebuild(ctx, stale, progress, true)
}

// forgetRetired removes the bookkeeping of projections this awr no longer
// has, so they are not reported as stale.
func (s *Store) forgetRetired(ctx context.Context) error {
	var retired []string
	if err := s.Read(ctx, func(r *Reader) error {
		states, err := ProjectionStates(r.Conn)
		if err != nil {
			return err
		}
		known := map[string]bool{}
		for _, p := range s.projectors {
			known[p.Name()] = true
		}
		for _, st := range states {
			if !known[st.Name] {
				retired = append(retired, st.Name)
			}
		}
		return nil
	}); err != nil || len(retired) == 0 {
		return err
	}
	_, err := s.Write(ctx, WriteOptions{Now: time.Unix(0, 0), Entropy: strings.NewReader(""), Actor: "awr"}, func(tx *Tx) (any, error) {
		for _, name := range retired {
			st := prep(tx.Conn, "projection_delete")
			st.SetText(":name", name)
			_, err := st.Step()
			st.Reset()
			if err != nil {
				return nil, err
			}
		}
		return nil, nil
	})
	return err
}

func (s *Store) staleProjectors(ctx context.Context) ([]Projector, error) {
	var stale []Projector
	err := s.Read(ctx, func(r *Reader) error {
		for _, p := range s.projectors {
			version, last, ok, err := projectionState(r.Conn, p.Name())
			if err != nil {
				return err
			}
			if !ok || version != p.Version() || last < r.Head {
				stale = append(stale, p)
			}
		}
		return nil
	})
	return stale, err
}

func projectionState(conn *sqlite.Conn, name string) (version int, last int64, ok bool, err error) {
	st := prep(conn, "projection_get")
	st.SetText(":name", name)
	defer st.Reset()
	row, err := st.Step()
	if err != nil {
		return 0, 0, false, storageErr("read projection state", err)
	}
	if !row {
		return 0, 0, false, nil
	}
	return int(st.GetInt64("version")), st.GetInt64("last_seq"), true, nil
}

// ProjectionState is one projection's bookkeeping row.
type ProjectionState struct {
	Name    string `json:"name"`
	Version int    `json:"version"`
	LastSeq int64  `json:"last_seq"`
}

// ProjectionStates lists the stored projection bookkeeping rows.
func ProjectionStates(conn *sqlite.Conn) ([]ProjectionState, error) {
	var out []ProjectionState
	st := prep(conn, "projection_list")
	defer st.Reset()
	for {
		row, err := st.Step()
		if err != nil {
			return nil, storageErr("list projections", err)
		}
		if !row {
			return out, nil
		}
		out = append(out, ProjectionState{Name: st.GetText("name"), Version: int(st.GetInt64("version")), LastSeq: st.GetInt64("last_seq")})
	}
}

// Rebuild drops every projection and replays the whole log into it, in one
// IMMEDIATE transaction. progress, if set, is called as events are applied.
func (s *Store) Rebuild(ctx context.Context, progress func(done, total int64)) error {
	return s.rebuild(ctx, s.projectors, progress, false)
}

func (s *Store) rebuild(ctx context.Context, ps []Projector, progress func(done, total int64), onlyIfStale bool) (err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	conn, err := s.take(ctx)
	if err != nil {
		return err
	}
	defer s.pool.Put(conn)
	defer func() { err = mapErr("rebuild projections", err) }()
	endFn, err := s.beginImmediate(ctx, conn)
	if err != nil {
		return err
	}
	defer endFn(&err)
	head, _, _, err := headOf(conn)
	if err != nil {
		return err
	}
	if onlyIfStale {
		// Another process may have rebuilt while we waited for the lock.
		var still []Projector
		for _, p := range ps {
			v, last, ok, err := projectionState(conn, p.Name())
			if err != nil {
				return err
			}
			if !ok || v != p.Version() || last < head {
				still = append(still, p)
			}
		}
		ps = still
		if len(ps) == 0 {
			return nil
		}
	}
	// A second connection reads the log while this one writes projections.
	rconn, err := s.take(ctx)
	if err != nil {
		return err
	}
	defer s.pool.Put(rconn)
	rend := sqlitex.Transaction(rconn)
	var readEnd error
	defer rend(&readEnd)
	return RebuildFrom(rconn, conn, ps, head, progress)
}

// RebuildOn resets ps on conn and applies events 1..head read from conn, then
// records each projection's version and last seq. The caller owns the
// transaction.
func RebuildOn(conn *sqlite.Conn, ps []Projector, head int64, progress func(done, total int64)) error {
	return RebuildFrom(conn, conn, ps, head, progress)
}

// RebuildFrom resets ps on dst and applies events 1..head read from src
// (which may be dst itself), then records each projection's state on dst.
// It checks the hash chain as it reads and fails with VerifyFailed, naming
// the seq, rather than derive state from a log that was altered.
func RebuildFrom(src, dst *sqlite.Conn, ps []Projector, head int64, progress func(done, total int64)) error {
	// Index builds at the end of a bulk rebuild sort in memory, using both
	// cores, rather than through temporary files.
	for _, pragma := range []string{"PRAGMA temp_store=MEMORY", "PRAGMA threads=2"} {
		if err := sqlitex.ExecuteTransient(dst, pragma, nil); err != nil {
			return err
		}
	}
	defer sqlitex.ExecuteTransient(dst, "PRAGMA temp_store=DEFAULT", nil)
	for _, p := range ps {
		var err error
		if bp, ok := p.(BulkProjector); ok {
			err = bp.BeginBulk(dst)
		} else {
			err = p.Reset(dst)
		}
		if err != nil {
			return fmt.Errorf("reset projection %s: %w", p.Name(), err)
		}
	}
	var done int64
	var chain ChainCheck
	check := func(e *Event) error {
		if problem := chain.Check(e); problem != "" {
			seq := e.Seq
			if e.Seq > chain.Expected() {
				seq = chain.Expected()
			}
			return fault.New(fault.VerifyFailed, "replay: seq %d: %s; nothing was rebuilt", seq, problem).
				With("first_bad_seq", seq).WithHint("awr verify")
		}
		return nil
	}
	apply := func(e *Event) error {
		for _, p := range ps {
			if err := p.Apply(dst, e); err != nil {
				return fmt.Errorf("apply seq %d to projection %s: %w", e.Seq, p.Name(), err)
			}
		}
		done++
		if progress != nil && (done%4096 == 0 || done == head) {
			progress(done, head)
		}
		return nil
	}
	var err error
	if src == dst {
		err = ScanEvents(src, 1, head, func(e *Event) error {
			if err := check(e); err != nil {
				return err
			}
			return apply(e)
		})
	} else {
		err = pipeline(src, head, check, apply)
	}
	if err != nil {
		return err
	}
	for _, p := range ps {
		if bp, ok := p.(BulkProjector); ok {
			if err := bp.EndBulk(dst); err != nil {
				return fmt.Errorf("finish projection %s: %w", p.Name(), err)
			}
		}
	}
	if progress != nil && head == 0 {
		progress(0, 0)
	}
	return markProjections(dst, ps, head)
}

// pipeline reads, checks (the hash chain) and decodes events 1..head from
// src on one goroutine while apply folds them on the caller's, so a rebuild uses both of a small
// machine's cores. src must not be used by anyone else meanwhile.
func pipeline(src *sqlite.Conn, head int64, check, apply func(e *Event) error) error {
	const batch = 512
	batches := make(chan []*Event, 8)
	stop := make(chan struct{})
	readErr := make(chan error, 1)
	go func() {
		defer close(batches)
		buf := make([]*Event, 0, batch)
		err := ScanEvents(src, 1, head, func(e *Event) error {
			if err := check(e); err != nil {
				return err
			}
			if _, err := e.Decoded(); err != nil {
				return err
			}
			buf = append(buf, e)
			if len(buf) == batch {
				select {
				case batches <- buf:
				case <-stop:
					return errStopped
				}
				buf = make([]*Event, 0, batch)
			}
			return nil
		})
		if err == nil && len(buf) > 0 {
			select {
			case batches <- buf:
			case <-stop:
			}
		}
		readErr <- err
	}()
	var applyErr error
	for b := range batches {
		if applyErr != nil {
			continue
		}
		for _, e := range b {
			if applyErr = apply(e); applyErr != nil {
				close(stop)
				break
			}
		}
	}
	rerr := <-readErr
	if applyErr != nil {
		return applyErr
	}
	if rerr != nil && rerr != errStopped {
		return rerr
	}
	return nil
}

var errStopped = errors.New("stopped")

// EnsureProjectionTable creates the projections bookkeeping table on a
// scratch connection that has no awr schema.
func EnsureProjectionTable(conn *sqlite.Conn) error {
	return sqlitex.ExecuteTransient(conn, "CREATE TABLE IF NOT EXISTS projections (name TEXT PRIMARY KEY, version INTEGER NOT NULL, last_seq INTEGER NOT NULL)", nil)
}

func markProjections(conn *sqlite.Conn, ps []Projector, last int64) error {
	for _, p := range ps {
		st := prep(conn, "projection_put")
		st.SetText(":name", p.Name())
		st.SetInt64(":version", int64(p.Version()))
		st.SetInt64(":last_seq", last)
		_, err := st.Step()
		st.Reset()
		if err != nil {
			return fmt.Errorf("record projection %s: %w", p.Name(), err)
		}
	}
	return nil
}

// headOf returns the latest seq (0 when empty), its hash and occurred_at.
func headOf(conn *sqlite.Conn) (int64, []byte, int64, error) {
	st := prep(conn, "head")
	defer st.Reset()
	row, err := st.Step()
	if err != nil {
		return 0, nil, 0, err
	}
	if !row {
		return 0, make([]byte, HashSize), 0, nil
	}
	h := make([]byte, st.GetLen("hash"))
	st.GetBytes("hash", h)
	return st.GetInt64("seq"), h, st.GetInt64("occurred_at"), nil
}

// EventTime returns the occurred_at of event seq (0 for seq 0).
func EventTime(conn *sqlite.Conn, seq int64) (int64, error) {
	if seq == 0 {
		return 0, nil
	}
	st := prep(conn, "event_at")
	st.SetInt64(":seq", seq)
	defer st.Reset()
	row, err := st.Step()
	if err != nil {
		return 0, storageErr("read event", err)
	}
	if !row {
		return 0, fault.New(fault.NotFound, "read event: no event %d", seq)
	}
	return st.GetInt64("occurred_at"), nil
}

// Reader is a consistent read snapshot of the log and its projections.
type Reader struct {
	Conn *sqlite.Conn
	// Head is the project_revision of the snapshot.
	Head int64
	// HeadTime is the occurred_at of the head event (0 when empty).
	HeadTime int64
}

// Read runs fn on a consistent snapshot. It never writes.
func (s *Store) Read(ctx context.Context, fn func(r *Reader) error) (err error) {
	conn, err := s.take(ctx)
	if err != nil {
		return err
	}
	defer s.pool.Put(conn)
	defer func() { err = mapErr("read", err) }()
	endFn := sqlitex.Transaction(conn)
	defer endFn(&err)
	head, _, t, err := headOf(conn)
	if err != nil {
		return err
	}
	return fn(&Reader{Conn: conn, Head: head, HeadTime: t})
}

// NewEvent is an event to append: the store assigns seq, id, stream_version,
// occurred_at, request_id and the hashes.
type NewEvent struct {
	Kind    Kind
	Stream  string
	Payload any // the kind's payload struct, e.g. SessionStarted or *SessionStarted
	// ID, if set, is the event's id (from Tx.NewID), for events whose
	// payload names themselves, such as a checkpoint's id.
	ID string
}

// WriteOptions scopes a write.
type WriteOptions struct {
	// Now is the write's clock reading; every event's occurred_at and id
	// timestamp come from it. Required.
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
	Conn      *sqlite.Conn
	store     *Store
	opts      WriteOptions
	head      int64
	lastHash  []byte
	versions  map[string]int64
	appended  []*Event
	startHead int64
}

// Head returns the current project_revision inside the transaction.
func (tx *Tx) Head() int64 { return tx.head }

// StartRevision returns the project_revision when the transaction began.
func (tx *Tx) StartRevision() int64 { return tx.startHead }

// Now returns the write's clock reading.
func (tx *Tx) Now() time.Time { return tx.opts.Now }

// NewID returns a fresh ULID from the write's clock and entropy.
func (tx *Tx) NewID() string {
	return ulid.MustNew(ulid.Timestamp(tx.opts.Now), tx.opts.Entropy).String()
}

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
// writes that learn which streams they touch while deciding.
func (tx *Tx) Guard(streams ...string) error {
	if tx.opts.ExpectedRevision == nil {
		return nil
	}
	return checkConflicts(tx.Conn, *tx.opts.ExpectedRevision, tx.startHead, streams)
}

// Append validates and appends one event, then applies every projector to it.
func (tx *Tx) Append(ne NewEvent) (*Event, error) {
	mk, ok := payloadTypes[ne.Kind]
	if !ok {
		return nil, fault.New(fault.Internal, "append event: unknown kind %q", ne.Kind)
	}
	if ne.Stream == "" {
		return nil, fault.New(fault.Internal, "append event: %s without a stream", ne.Kind)
	}
	want := reflect.TypeOf(mk()).Elem()
	got := reflect.TypeOf(ne.Payload)
	if got != nil && got.Kind() == reflect.Pointer {
		got = got.Elem()
	}
	if got != want {
		return nil, fault.New(fault.Internal, "append event: %s payload is %v, want %v", ne.Kind, got, want)
	}
	payload, err := MarshalPayload(ne.Payload)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "append event %s", ne.Kind)
	}
	sv, ok := tx.versions[ne.Stream]
	if !ok {
		st := prep(tx.Conn, "stream_last")
		st.SetText(":stream", ne.Stream)
		row, err := st.Step()
		if err != nil {
			st.Reset()
			return nil, err
		}
		if row {
			sv = st.GetInt64("stream_version")
		}
		st.Reset()
	}
	e := &Event{
		Seq:           tx.head + 1,
		ID:            ne.ID,
		Kind:          ne.Kind,
		Stream:        ne.Stream,
		StreamVersion: sv + 1,
		OccurredAt:    tx.opts.Now.UnixMilli(),
		Actor:         tx.opts.Actor,
		Payload:       payload,
		PrevHash:      tx.lastHash,
	}
	if e.ID == "" {
		e.ID = tx.NewID()
	}
	if len(tx.appended) == 0 {
		e.RequestID = tx.opts.RequestID
	}
	e.Hash = ComputeHash(e.PrevHash, e)
	if err := tx.insert(e, true); err != nil {
		return nil, err
	}
	return e, nil
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
	sv, ok := tx.versions[e.Stream]
	if !ok {
		st := prep(tx.Conn, "stream_last")
		st.SetText(":stream", e.Stream)
		row, err := st.Step()
		if err != nil {
			st.Reset()
			return err
		}
		if row {
			sv = st.GetInt64("stream_version")
		}
		st.Reset()
	}
	if e.StreamVersion != sv+1 {
		return fault.New(fault.InvalidInput, "append event: seq %d: stream %s version %d does not follow %d", e.Seq, e.Stream, e.StreamVersion, sv)
	}
	return tx.insert(e, false)
}

func (tx *Tx) insert(e *Event, keep bool) error {
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
	for _, p := range tx.store.projectors {
		if err := p.Apply(tx.Conn, e); err != nil {
			return fmt.Errorf("apply seq %d to projection %s: %w", e.Seq, p.Name(), err)
		}
	}
	tx.head = e.Seq
	tx.lastHash = e.Hash
	tx.versions[e.Stream] = e.StreamVersion
	if keep {
		tx.appended = append(tx.appended, e)
	}
	return nil
}

func bytesEqual(a, b []byte) bool { return string(a) == string(b) }

// Conflict is one newer event on a stream a write depends on.
type Conflict struct {
	Seq    int64  `json:"seq"`
	Kind   Kind   `json:"kind"`
	Stream string `json:"stream"`
}

func checkConflicts(conn *sqlite.Conn, expected, actual int64, streams []string) error {
	if expected > actual {
		return fault.New(fault.InvalidInput, "check revision: expected revision %d is beyond project_revision %d", expected, actual).
			With("expected", expected).With("actual", actual).WithHint("awr status")
	}
	if expected < 0 {
		return fault.New(fault.InvalidInput, "check revision: expected revision %d is negative", expected)
	}
	var conflicts []Conflict
	seen := map[string]bool{}
	for _, stream := range streams {
		if seen[stream] {
			continue
		}
		seen[stream] = true
		st := prep(conn, "stream_after")
		st.SetText(":stream", stream)
		st.SetInt64(":after", expected)
		for {
			row, err := st.Step()
			if err != nil {
				st.Reset()
				return err
			}
			if !row {
				break
			}
			conflicts = append(conflicts, Conflict{Seq: st.GetInt64("seq"), Kind: Kind(st.GetText("kind")), Stream: st.GetText("stream")})
		}
		st.Reset()
	}
	if len(conflicts) == 0 {
		return nil
	}
	return fault.New(fault.RevisionConflict, "check revision: %d newer event(s) on the streams this write depends on since revision %d", len(conflicts), expected).
		With("expected", expected).With("actual", actual).With("conflicts", conflicts).
		WithHint("re-read the state, then retry with --expected-revision %d", actual)
}

// Write runs fn in one IMMEDIATE transaction: it checks the request id and
// the scoped expected revision, lets fn read and append, applies the
// projections, stores the idempotency record, and commits, or does nothing
// at all if any step fails.
//
// Errors: RevisionConflict when a stream in opts.Streams has an event newer
// than opts.ExpectedRevision; InvalidInput when opts.RequestID was used for
// a different request; Storage when the database is busy past ctx's
// deadline or cannot be written; any error fn returns.
func (s *Store) Write(ctx context.Context, opts WriteOptions, fn func(tx *Tx) (any, error)) (res *WriteResult, err error) {
	if opts.Now.IsZero() || opts.Entropy == nil {
		return nil, fault.New(fault.Internal, "write: clock and entropy are required inputs")
	}
	if opts.Actor == "" {
		return nil, fault.New(fault.InvalidInput, "write: actor is required")
	}
	if opts.RequestID != "" && opts.Fingerprint == "" {
		return nil, fault.New(fault.Internal, "write: a request id needs a fingerprint")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	conn, err := s.take(ctx)
	if err != nil {
		return nil, err
	}
	defer s.pool.Put(conn)
	defer func() {
		err = mapErr("write", err)
		if err != nil {
			res = nil
		}
	}()
	endFn, err := s.beginImmediate(ctx, conn)
	if err != nil {
		return nil, err
	}
	defer endFn(&err)

	head, lastHash, _, err := headOf(conn)
	if err != nil {
		return nil, err
	}
	if opts.RequestID != "" {
		prior, found, err := lookupRequest(conn, opts.RequestID)
		if err != nil {
			return nil, err
		}
		if found {
			if prior.fingerprint != opts.Fingerprint {
				return nil, fault.New(fault.InvalidInput, "write: request id %q was already used for a different request (seq %d)", opts.RequestID, prior.firstSeq).
					With("request_id", opts.RequestID).With("seq", prior.firstSeq).WithHint("use a new request id")
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
			return nil, fault.New(fault.InvalidInput, "write: request id %q was already used (seq %d)", opts.RequestID, seq).
				With("request_id", opts.RequestID).With("seq", seq).WithHint("use a new request id")
		}
	}
	if opts.ExpectedRevision != nil {
		if err := checkConflicts(conn, *opts.ExpectedRevision, head, opts.Streams); err != nil {
			return nil, err
		}
	}
	tx := &Tx{Conn: conn, store: s, opts: opts, head: head, startHead: head, lastHash: lastHash, versions: map[string]int64{}}
	value, err := fn(tx)
	if err != nil {
		return nil, err
	}
	if tx.head != tx.startHead {
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
		st := prep(conn, "request_put")
		st.SetText(":request_id", opts.RequestID)
		st.SetText(":fingerprint", opts.Fingerprint)
		st.SetInt64(":first_seq", first)
		st.SetInt64(":last_seq", last)
		st.SetText(":result", string(raw))
		_, err := st.Step()
		st.Reset()
		if err != nil {
			return nil, err
		}
	}
	return &WriteResult{Result: raw, Events: tx.appended, Revision: tx.head}, nil
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

// ScanEvents calls fn for events from..to (inclusive) in seq order.
func ScanEvents(conn *sqlite.Conn, from, to int64, fn func(e *Event) error) error {
	st := prep(conn, "events_range")
	st.SetInt64(":from", from)
	st.SetInt64(":to", to)
	defer st.Reset()
	for {
		row, err := st.Step()
		if err != nil {
			return err
		}
		if !row {
			return nil
		}
		if err := fn(EventFromRow(st)); err != nil {
			return err
		}
	}
}

// EventFromRow reads an event from a row with the events table's columns.
func EventFromRow(st *sqlite.Stmt) *Event {
	e := &Event{
		Seq:           st.GetInt64("seq"),
		ID:            st.GetText("id"),
		Kind:          Kind(st.GetText("kind")),
		Stream:        st.GetText("stream"),
		StreamVersion: st.GetInt64("stream_version"),
		OccurredAt:    st.GetInt64("occurred_at"),
		Actor:         st.GetText("actor"),
		RequestID:     st.GetText("request_id"),
		Payload:       []byte(st.GetText("payload")),
	}
	e.PrevHash = make([]byte, st.GetLen("prev_hash"))
	st.GetBytes("prev_hash", e.PrevHash)
	e.Hash = make([]byte, st.GetLen("hash"))
	st.GetBytes("hash", e.Hash)
	return e
}

// storageErr wraps a SQLite error as a Storage fault, naming busy and full
// databases plainly.
func storageErr(op string, err error) error {
	return mapErr(op, err)
}

// mapErr turns SQLite errors into coded faults and passes coded faults
// through unchanged.
func mapErr(op string, err error) error {
	if err == nil {
		return nil
	}
	var fe *fault.Error
	if errors.As(err, &fe) {
		return err
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return fault.Wrap(fault.Storage, err, "%s: database is busy (gave up waiting for the write lock)", op).
			WithHint("retry; another awr process holds the project database")
	}
	switch sqlite.ErrCode(err).ToPrimary() {
	case sqlite.ResultBusy, sqlite.ResultLocked, sqlite.ResultInterrupt:
		return fault.Wrap(fault.Storage, err, "%s: database is busy (gave up waiting for the write lock)", op).
			WithHint("retry; another awr process holds the project database")
	case sqlite.ResultFull:
		return fault.Wrap(fault.Storage, err, "%s: disk or database is full; nothing was written", op).
			WithHint("free disk space, then retry")
	case sqlite.ResultReadOnly:
		return fault.Wrap(fault.Storage, err, "%s: database is read-only; nothing was written", op).
			WithHint("check the permissions of .awr/awr.db")
	case sqlite.ResultCorrupt, sqlite.ResultNotADB:
		return fault.Wrap(fault.Storage, err, "%s: database file is damaged", op).WithHint("awr verify")
	case sqlite.ResultConstraint:
		return fault.Wrap(fault.Storage, err, "%s: constraint violated; nothing was written", op)
	}
	return fault.Wrap(fault.Storage, err, "%s", op)
}

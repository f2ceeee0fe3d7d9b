package events

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/awr-dev/awr/internal/fault"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// applicationID marks a SQLite file as an awr project database ("awr!").
const applicationID = 0x61777221

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
	// Progress, if set, reports rebuild progress at Open, and the fold of
	// a shared log's cache filled from empty at its first read.
	Progress func(done, total int64)
	// LockTimeout bounds how long a writer waits for the write lock held by
	// another process before failing with Storage "database is busy"; 0
	// waits as long as the caller's context allows. It bounds the wait
	// only, never the work done once the lock is held.
	LockTimeout time.Duration
	// ReadOnly opens the database for reading only, for a process that
	// cannot write it or its directory (see Writable): Open and every read
	// write nothing to the database, its write-ahead log or its directory
	// and create no file there (an existing -shm index the process may
	// write is used as by any SQLite reader), and every write is refused
	// with Storage "database is read-only; nothing was written". What a
	// writable open would first write (a pending migration, a projection
	// rebuild) is done instead on an in-memory copy that the reads are
	// then served from. It excludes Create.
	ReadOnly bool
	// Lean makes every connection read without the file's mapping into a
	// small page cache, as a bulk connection does (ReadBulk): for a
	// long-lived process that reads all over the log (awr ui), whose
	// memory must stay bounded however long the log. A command that runs
	// once and exits keeps the mapping, which costs it fewer page faults.
	Lean bool
	// Upstream, if set, is the shared log this database caches (see
	// Upstream): every read catches up from it first, every write commits
	// to it first. The store closes it. It excludes ReadOnly.
	Upstream Upstream
}

// Store is an open project event log in SQLite, awr's Log. It is safe for
// concurrent use; many processes may open the same database at once.
// Beyond Log it offers what is SQLite-specific: Write and Read hand out the
// connection that projectors fold into and read from.
type Store struct {
	path        string
	ident       os.FileInfo // the database file opened, to notice it being removed or replaced
	pool        *connPool
	projectors  []Projector
	lockTimeout time.Duration
	closeOnce   sync.Once
	closeErr    error
	wrote       atomic.Bool                 // a write transaction began on the store (see Leave)
	ro          *readOnly                   // set when opened with Options.ReadOnly
	oneConn     bool                        // the pool has one connection: a rebuild reads the log on the writing one
	lean        bool                        // Options.Lean: every connection is set up as a bulk one
	up          Upstream                    // the shared log this database caches, or nil
	progress    func(done, total int64)     // Options.Progress: also draws the fold of a cache's first catch-up (bulkCatchUp)
	faulted     atomic.Pointer[fault.Error] // the first fault on the file's mapping (see catchFault): the store is broken
	// mu serializes in-process writers so they queue in Go rather than
	// in SQLite's busy handler. Lock order, for a cache of a shared log:
	// a connection to the shared log, then the shared log's write lock,
	// then mu (then SQLite's). A writer holding mu waits for nothing
	// another writer may hold while it waits for mu: a write sealed
	// before the lock (writeOneTrip) reserves its connection before mu
	// and only tries the shared log's lock under it; a question that
	// needs a connection (lockLost, a lost answer's settling) is asked
	// after mu is released; a reader filling an empty cache
	// (joinInBulk) takes its snapshot's connection before mu.
	mu sync.Mutex
	// rebuildMissing are the projectors missing a schema object at open
	// (checkObjects), rebuilt from the log by syncProjections.
	rebuildMissing []Projector
	// unprotected are the append-only triggers missing at open: every
	// Write is refused (unprotectedError).
	unprotected []string
}

// DBPath returns the database path of the project rooted at dir.
func DBPath(projectDir string) string { return filepath.Join(projectDir, ".awr", "awr.db") }

// Open opens (and with opts.Create creates) the event log at path, runs
// pending migrations and rebuilds projections whose version changed
// (with opts.ReadOnly, on an in-memory copy).
// Errors: NotFound when the database is missing and Create is false;
// Storage when the file is not an awr database, comes from a newer awr, or
// cannot be opened (read-only: cannot be read without writing); Storage
// "damaged" with RestoreHint when the path is not a regular file, the file
// is empty or not an SQLite database, or an object of the log's schema is
// missing or its schema version was lowered (a projection missing one is
// rebuilt instead);
// InvalidInput for an unknown synchronous mode, or Create with ReadOnly.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if err := checkFileType(path); err != nil {
		return nil, err
	}
	if !opts.Create && emptyFile(path) && !hasWAL(path) && emptyFile(path) {
		// An empty file is not an empty project: it lost its schema and
		// every event. Opening it would write a new schema and call it
		// sound.
		return nil, fault.New(fault.Storage, "open project database %s: the database file is empty (0 bytes): it is damaged; restore it from a backup, or import an export into a new project", path).
			With("path", path).WithHint("awr import EXPORT.jsonl --project NEW_DIR")
	}
	if _, err := os.Stat(path); err != nil {
		notDir := errors.Is(err, syscall.ENOTDIR) // the project is a file (AWR_PROJECT=/dev/null)
		if !errors.Is(err, os.ErrNotExist) && !notDir {
			return nil, fault.Wrap(fault.Storage, err, "open project database %s", path)
		}
		if !opts.Create || notDir {
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
	if opts.Create && opts.ReadOnly {
		return nil, fault.New(fault.InvalidInput, "open project: a read-only open cannot create the database")
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
	if opts.PoolSize <= 0 {
		opts.PoolSize = 2
	}
	opts.Synchronous = sync
	if opts.ReadOnly {
		if opts.Upstream != nil {
			return nil, fault.New(fault.InvalidInput, "open project: the cache of a shared log cannot be opened read-only")
		}
		return openReadOnly(ctx, path, opts)
	}
	pool, err := newPool(path, sqlite.OpenReadWrite|sqlite.OpenWAL|sqlite.OpenNoMutex, opts)
	if err != nil {
		return nil, mapErr("open project database", err)
	}
	s := &Store{path: path, pool: pool, projectors: opts.Projectors, lockTimeout: opts.LockTimeout, progress: opts.Progress, lean: opts.Lean}
	if s.ident, err = os.Stat(path); err != nil {
		pool.Close()
		return nil, fault.Wrap(fault.Storage, err, "open project database %s", path)
	}
	pool.check = func() error { return s.stillOpen("open a connection") }
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
	// The cache is brought to its own projections first, then says it is
	// this shared log's cache (refused when it is a log of its own or
	// another project's cache); the shared log's events come at the
	// first read.
	if s.up = opts.Upstream; s.up != nil {
		mark, err := s.Mark(ctx)
		if err == nil && (mark == nil || mark.Project != s.up.Project()) {
			err = s.markShared(ctx)
		}
		if err != nil {
			pool.Close()
			return nil, err
		}
	}
	return s, nil
}

// stillOpen is a Storage error, for op, when the database file at the store's path
// is no longer the one it opened (removed, or replaced by another file).
func (s *Store) stillOpen(op string) error {
	if fi, err := os.Stat(s.path); err != nil || !os.SameFile(fi, s.ident) {
		return fault.New(fault.Storage, "%s: the project database %s was removed or replaced while open; nothing was written", op, s.path).
			With("path", s.path).WithHint(RestoreHint)
	}
	return nil
}

// newPool returns a pool of up to opts.PoolSize connections to uri with
// flags, each set up with the store's pragmas when it is opened: the first
// at once, the others when they are needed.
func newPool(uri string, flags sqlite.OpenFlags, opts Options) (*connPool, error) {
	return newConnPool(uri, flags, opts.PoolSize, func(conn *sqlite.Conn) error {
		// temp_store=MEMORY keeps statement journals in small
		// in-memory chunks. Every append opens one (the events table
		// has a trigger); by default each is a 64 KiB buffer, spilled
		// to a temporary file beyond that, which the pure-Go allocator
		// maps and unmaps again for every statement.
		cache, mapped := cacheKiB, mmapBytes
		if opts.Lean {
			cache, mapped = bulkCacheKiB, 0
		}
		for _, pragma := range []string{"PRAGMA foreign_keys=ON", "PRAGMA synchronous=" + opts.Synchronous, fmt.Sprintf("PRAGMA cache_size=%d", cache), "PRAGMA temp_store=MEMORY", fmt.Sprintf("PRAGMA mmap_size=%d", mapped)} {
			if err := sqlitex.ExecuteTransient(conn, pragma, nil); err != nil {
				return err
			}
		}
		return nil
	})
}

// beginImmediate starts a write transaction, waiting for the write lock at
// most the store's lock timeout (and never past ctx).
func (s *Store) beginImmediate(ctx context.Context, conn *sqlite.Conn) (func(*error), error) {
	s.wrote.Store(true)
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
	s.closeOnce.Do(func() {
		if s.ro != nil {
			s.closeErr = s.ro.close()
			return
		}
		if s.faulted.Load() != nil {
			// Its connections were left in the middle of a call: the
			// process's exit releases them.
			return
		}
		s.closeErr = s.pool.Close()
		if s.up != nil {
			s.closeErr = errors.Join(s.closeErr, s.up.Close())
		}
	})
	return s.closeErr
}

// Leave ends the store for a process about to exit, and must be the last
// thing the process does with it. A store on which this process began no
// write transaction is left for the exit to release: closing its
// connections frees every cached page one at a time, and the pure-Go
// allocator unmaps each of its 64 KiB arenas (a TLB shootdown on every
// core the process ran on), about a tenth of a read command's time. The
// exit releases all SQLite holds (file descriptors, POSIX locks, the
// mapping of the WAL index), and a connection that only read has
// nothing to write back: its close would only checkpoint a WAL that some
// writer's own close or autocheckpoint takes care of. A store that wrote,
// and a read-only view, are closed as by Close.
func (s *Store) Leave() error {
	if s.ro != nil || s.wrote.Load() {
		return s.Close()
	}
	s.closeOnce.Do(func() {})
	return nil
}

// cacheKiB is every connection's page cache, as PRAGMA cache_size
// (negative: KiB).
const cacheKiB = -32768

func (s *Store) take(ctx context.Context) (*sqlite.Conn, error) {
	if err := s.brokenErr("open connection"); err != nil {
		return nil, err
	}
	conn, err := s.pool.Take(ctx)
	if err != nil {
		return nil, mapErr("open connection", err)
	}
	return conn, nil
}

func (s *Store) migrate(ctx context.Context) (err error) {
	defer s.catchFault("migrate schema", &err, armFault())
	conn, err := s.take(ctx)
	if err != nil {
		return err
	}
	defer s.pool.Put(conn)
	appID, version, err := readSchema(conn)
	if err != nil {
		return err
	}
	steps := migrations()
	pending, err := checkSchema(s.path, appID, version)
	if err != nil {
		return err
	}
	if appID == applicationID {
		// An awr database: every object its version's migrations made
		// must be there, and none of a later one.
		if s.rebuildMissing, s.unprotected, err = checkObjects(conn, s.path, version, s.projectors); err != nil {
			return err
		}
	}
	if !pending {
		return nil
	}
	endFn, err := s.beginImmediate(ctx, conn)
	if err != nil {
		return mapErr("migrate schema", err)
	}
	defer endFn(&err)
	// Re-read inside the write lock: another process may have migrated.
	if err := sqlitex.ExecuteTransient(conn, "PRAGMA user_version", &sqlitex.ExecOptions{ResultFunc: func(st *sqlite.Stmt) error {
		version = st.ColumnInt(0)
		return nil
	}}); err != nil {
		return mapErr("migrate schema", err)
	}
	if version == 0 {
		tables, err := count(conn, "schema_object_count")
		if err != nil {
			return mapErr("migrate schema", err)
		}
		if tables > 0 && appID != applicationID {
			return fault.New(fault.Storage, "open project database %s: not an awr database", s.path)
		}
	}
	for _, m := range steps[version:] {
		if err := sqlitex.ExecuteScript(conn, m.script(), nil); err != nil {
			return mapErr(fmt.Sprintf("migrate schema to %d", m.version), err)
		}
	}
	if err := sqlitex.ExecuteTransient(conn, fmt.Sprintf("PRAGMA user_version=%d", len(steps)), nil); err != nil {
		return mapErr("migrate schema", err)
	}
	if err := sqlitex.ExecuteTransient(conn, fmt.Sprintf("PRAGMA application_id=%d", applicationID), nil); err != nil {
		return mapErr("migrate schema", err)
	}
	return nil
}

// readSchema returns the database's application_id and user_version.
func readSchema(conn *sqlite.Conn) (appID, version int, err error) {
	for _, q := range []struct {
		pragma string
		dst    *int
	}{{"PRAGMA application_id", &appID}, {"PRAGMA user_version", &version}} {
		if err := sqlitex.ExecuteTransient(conn, q.pragma, &sqlitex.ExecOptions{ResultFunc: func(st *sqlite.Stmt) error {
			*q.dst = st.ColumnInt(0)
			return nil
		}}); err != nil {
			return 0, 0, mapErr("read schema", err)
		}
	}
	return appID, version, nil
}

// checkSchema reports whether the database at path, with appID and
// version, needs migrating. Errors: Storage when it is another
// application's database or comes from a newer awr.
func checkSchema(path string, appID, version int) (pending bool, err error) {
	steps := len(migrations())
	if appID != 0 && appID != applicationID {
		return false, fault.New(fault.Storage, "open project database %s: not an awr database (application_id %#x)", path, appID)
	}
	if version > steps {
		return false, fault.New(fault.Storage, "open project database %s: schema version %d is newer than this awr supports (%d); upgrade awr", path, version, steps).
			With("schema_version", version).With("supported", steps)
	}
	return version != steps || appID != applicationID, nil
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
	h, err := eventHead(conn, seq)
	if err != nil {
		return 0, mapErr("read event", err)
	}
	return h.OccurredAt, nil
}

// EnvelopeAt returns the kind, stream and time of event seq, read from
// the columns before its payload, so that a large payload is not read.
// Errors: NotFound for a seq the log does not hold.
func EnvelopeAt(conn *sqlite.Conn, seq int64) (kind Kind, stream string, occurredAt int64, err error) {
	st := prep(conn, "envelope_at")
	st.SetInt64(":seq", seq)
	defer st.Reset()
	row, err := st.Step()
	if err != nil {
		return "", "", 0, mapErr("read event", err)
	}
	if !row {
		return "", "", 0, fault.New(fault.NotFound, "read event: no event %d", seq)
	}
	return Kind(st.GetText("kind")), st.GetText("stream"), st.GetInt64("occurred_at"), nil
}

// Reader is a consistent read snapshot of the log and its projections, on
// the SQLite connection that projection reads take (Snapshot is the
// store-agnostic view of the log alone).
type Reader struct {
	Conn *sqlite.Conn
	// Head is the project_revision of the snapshot.
	Head int64
	// HeadTime is the occurred_at of the head event (0 when empty).
	HeadTime int64
}

// Read runs fn on a consistent snapshot. It never writes, but for the
// cache of a shared log, which first catches up (CatchUp).
// Errors: Storage when the database cannot be read (read-only: when it
// changed under a read that SQLite could not lock, hint retry); those of
// CatchUp; an error fn returns, coded, or wrapped as Storage.
func (s *Store) Read(ctx context.Context, fn func(r *Reader) error) (err error) {
	return s.read(ctx, true, fn, false)
}

// ReadCached is Read without the catch-up of a shared log's cache: fn
// sees what this machine's cache holds (for what no later event can
// change, such as the project the log belongs to). For a project's own
// log it is Read.
func (s *Store) ReadCached(ctx context.Context, fn func(r *Reader) error) error {
	return s.read(ctx, false, fn, false)
}

func (s *Store) read(ctx context.Context, catchUp bool, fn func(r *Reader) error, bulk bool) (err error) {
	defer s.catchFault("read", &err, armFault())
	if s.up != nil && catchUp && !s.caughtUpIn(ctx) {
		if _, err := s.CatchUp(ctx); err != nil {
			return err
		}
		s.markCaughtUp(ctx)
	}
	if s.ro != nil {
		v, release, rerr := s.ro.enter(ctx, s)
		if rerr != nil {
			return rerr
		}
		defer release()
		defer func() {
			if cerr := v.checkUnchanged(s.path); cerr != nil {
				err = cerr
			}
		}()
	}
	conn, err := s.take(ctx)
	if err != nil {
		return err
	}
	defer s.pool.Put(conn)
	defer func() { err = mapErr("read", err) }()
	if bulk && s.ro == nil {
		leave, err := s.enterBulk(conn, true)
		if err != nil {
			return err
		}
		defer leave()
	}
	endFn := sqlitex.Transaction(conn)
	defer endFn(&err)
	head, _, t, err := headOf(conn)
	if err != nil {
		return err
	}
	return fn(&Reader{Conn: conn, Head: head, HeadTime: t})
}

// Append is Write through the store-agnostic Appender, for Log.
func (s *Store) Append(ctx context.Context, opts WriteOptions, fn func(tx Appender) (any, error)) (*WriteResult, error) {
	return s.Write(ctx, opts, func(tx *Tx) (any, error) { return fn(tx) })
}

// ReadAt runs fn on a read snapshot of the log at revision rev (the head
// when rev is negative), as Log.ReadAt specifies. Errors: InvalidInput
// when rev is beyond the head; Storage when the database cannot be read;
// an error fn returns, coded, or wrapped as Storage.
func (s *Store) ReadAt(ctx context.Context, rev int64, fn func(snap Snapshot) error) error {
	return s.Read(ctx, func(r *Reader) error {
		if rev < 0 {
			rev = r.Head
		}
		if rev > r.Head {
			return fault.New(fault.InvalidInput, "read at revision: revision %d is beyond project_revision %d", rev, r.Head).
				With("at", rev).With("project_revision", r.Head).WithHint("awr status")
		}
		head := Head{Revision: rev, Hash: make([]byte, HashSize)}
		if rev > 0 {
			var err error
			if head, err = eventHead(r.Conn, rev); err != nil {
				return err
			}
		}
		return fn(&snapshot{conn: r.Conn, head: head})
	})
}

// Scan calls fn for events from..to (inclusive) in seq order, read in one
// read transaction, as Log.Scan specifies.
func (s *Store) Scan(ctx context.Context, from, to int64, fn func(e *Event) error) error {
	return s.Read(ctx, func(r *Reader) error { return ScanEvents(r.Conn, from, to, fn) })
}

// Head returns the latest event's revision, hash and time. Errors: Storage
// when the database cannot be read.
func (s *Store) Head(ctx context.Context) (Head, error) {
	var h Head
	err := s.Read(ctx, func(r *Reader) error {
		seq, hash, t, err := headOf(r.Conn)
		h = Head{Revision: seq, Hash: hash, OccurredAt: t}
		return err
	})
	return h, err
}

// eventHead returns the Head at event seq.
func eventHead(conn *sqlite.Conn, seq int64) (Head, error) {
	st := prep(conn, "event_at")
	st.SetInt64(":seq", seq)
	defer st.Reset()
	row, err := st.Step()
	if err != nil {
		return Head{}, err
	}
	if !row {
		return Head{}, fault.New(fault.NotFound, "read event: no event %d", seq)
	}
	h := Head{Revision: seq, Hash: make([]byte, st.GetLen("hash")), OccurredAt: st.GetInt64("occurred_at")}
	st.GetBytes("hash", h.Hash)
	return h, nil
}

// snapshot is the SQLite store's Snapshot: a read transaction on conn,
// capped at head.
type snapshot struct {
	conn *sqlite.Conn
	head Head
}

func (s *snapshot) Head() Head { return s.head }

func (s *snapshot) Scan(from, to int64, fn func(e *Event) error) error {
	var fnErr error
	err := ScanEvents(s.conn, from, min(to, s.head.Revision), func(e *Event) error {
		fnErr = fn(e)
		return fnErr
	})
	if err != nil && fnErr == nil {
		return mapErr("scan events", err)
	}
	return err
}

// ScanEvents calls fn for events from..to (inclusive) in seq order.
func ScanEvents(conn *sqlite.Conn, from, to int64, fn func(e *Event) error) error {
	st := prep(conn, "events_range")
	st.SetInt64(":from", from)
	st.SetInt64(":to", to)
	return StepEvents(st, fn)
}

// StepEvents calls fn for each row of the bound statement st, read as an
// event (EventFromRow), in the statement's order, and resets st; it stops
// at fn's first error.
func StepEvents(st *sqlite.Stmt, fn func(e *Event) error) error {
	var fnErr error
	if err := eachRow(st, func() bool {
		fnErr = fn(EventFromRow(st))
		return fnErr == nil
	}); err != nil {
		return err
	}
	return fnErr
}

// stepWhile calls fn for each row of the bound statement st, read as an
// event, until fn returns false, and resets st.
func stepWhile(st *sqlite.Stmt, fn func(*Event) bool) error {
	return eachRow(st, func() bool { return fn(EventFromRow(st)) })
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

// count runs a named statement that returns one row with a column n.
func count(conn *sqlite.Conn, name string) (int, error) {
	st := prep(conn, name)
	defer st.Reset()
	row, err := st.Step()
	if err != nil || !row {
		return 0, err
	}
	return int(st.GetInt64("n")), nil
}

// TriggersInstalled counts the append-only triggers present (3 when the log
// is protected).
func TriggersInstalled(conn *sqlite.Conn) (int, error) { return count(conn, "trigger_count") }

// emptyFile reports whether path is an existing file of 0 bytes. Open
// asks twice around hasWAL: a checkpoint by another process between the
// two looks moves the schema from the log into the file.
func emptyFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Size() == 0
}

// hasWAL reports whether the database at path has a write-ahead log with
// content (a new database's schema can live there before a checkpoint).
func hasWAL(path string) bool {
	fi, err := os.Stat(path + "-wal")
	return err == nil && fi.Size() > 0
}

// LastOfKind returns the latest event of kind on stream after seq after,
// read from the log itself (never a projection), or nil.
func LastOfKind(conn *sqlite.Conn, stream string, kind Kind, after int64) (*Event, error) {
	st := prep(conn, "stream_last_of_kind")
	st.SetText(":stream", stream)
	st.SetText(":kind", string(kind))
	st.SetInt64(":after", after)
	defer st.Reset()
	row, err := st.Step()
	if err != nil || !row {
		return nil, err
	}
	return EventFromRow(st), nil
}

// LastSeqsOfKinds returns the seqs of the latest event of kind a and of
// kind b on stream, read from the log itself with one index seek each
// (0 where the stream holds none), without reading the events: a check
// that needs only whether and where they happened.
func LastSeqsOfKinds(conn *sqlite.Conn, stream string, a, b Kind) (seqA, seqB int64, err error) {
	st := prep(conn, "stream_last_seqs_of_kinds")
	st.SetText(":stream", stream)
	st.SetText(":kind_a", string(a))
	st.SetText(":kind_b", string(b))
	defer st.Reset()
	row, err := st.Step()
	if err != nil || !row {
		return 0, 0, err
	}
	return st.GetInt64("seq_a"), st.GetInt64("seq_b"), nil
}

// LastOfKinds returns the latest event of each of the three kinds on
// stream, in the order of kinds (nil where the stream holds none), read
// from the log itself with one index seek each in one statement.
func LastOfKinds(conn *sqlite.Conn, stream string, kinds [3]Kind) ([3]*Event, error) {
	var out [3]*Event
	st := prep(conn, "stream_last_of_three_kinds")
	st.SetText(":stream", stream)
	st.SetText(":kind_a", string(kinds[0]))
	st.SetText(":kind_b", string(kinds[1]))
	st.SetText(":kind_c", string(kinds[2]))
	err := stepWhile(st, func(e *Event) bool {
		for i, k := range kinds {
			if e.Kind == k && out[i] == nil {
				out[i] = e
				break
			}
		}
		return true
	})
	return out, err
}

// LatestOfKind calls fn with the latest events of kind on stream, newest
// first, at most limit of them, read from the log itself; fn returns false
// to stop early.
func LatestOfKind(conn *sqlite.Conn, stream string, kind Kind, limit int, fn func(*Event) bool) error {
	st := prep(conn, "stream_kind_desc")
	st.SetText(":stream", stream)
	st.SetText(":kind", string(kind))
	st.SetInt64(":limit", int64(limit))
	return stepWhile(st, fn)
}

// RecentOfKind calls fn with the events of kind after seq after, on any
// stream, newest first, at most limit of them; fn returns false to stop
// early.
func RecentOfKind(conn *sqlite.Conn, kind Kind, after int64, limit int, fn func(*Event) bool) error {
	st := prep(conn, "kind_since_desc")
	st.SetText(":kind", string(kind))
	st.SetInt64(":after", after)
	st.SetInt64(":limit", int64(limit))
	return stepWhile(st, fn)
}

package pgstore

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed sql/*.sql
var sqlFiles embed.FS

//go:embed schema/*.sql
var schemaFiles embed.FS

// statements holds every embedded statement, keyed by file name; each file
// holds one statement, with named parameters (@name).
var statements = events.NewSQLSet(sqlFiles, "sql")

func q(name string) string {
	s, ok := statements.Get(name)
	if !ok {
		panic(fmt.Sprintf("pgstore: no statement %q", name))
	}
	return s
}

// migrateLockKey is the advisory lock that serializes migrations of one
// database ("awr.pgstore" as a number).
const migrateLockKey = 0x6177722e7067

// DefaultConnectTimeout bounds each connection attempt when neither the
// URL (connect_timeout) nor Options sets a timeout.
const DefaultConnectTimeout = 10 * time.Second

// Options configures Open.
type Options struct {
	// Project names the project whose log this store holds; one database
	// holds any number of projects. Required.
	Project string
	// ConnectTimeout bounds each connection attempt when the URL sets no
	// connect_timeout (DefaultConnectTimeout when zero); ctx bounds it too.
	ConnectTimeout time.Duration
	// MaxConns caps the store's connection pool (pgxpool's default when
	// zero).
	MaxConns int32
	// RetryFor is how long a step that failed for a passing reason (the
	// server starting up or in recovery, 57P03; a connection the server
	// ended, 57P01/57P02, or that broke) is retried, with backoff, before
	// the store gives up with the error: opening, reading the head, a
	// scan, taking the write lock. A write is retried only before its
	// lock is taken; one cut during its commit is not (its outcome is
	// unknown). Zero: no retry.
	RetryFor time.Duration
	// ServerClock makes every write take its time from the server's clock
	// when it takes the project's write lock, in place of the caller's:
	// the time of an event, and so a lease's start and the "now" a lease
	// is judged live or lapsed by, is one clock for every machine, and a
	// machine whose clock is off by minutes neither takes a live claim
	// nor keeps one past its lease.
	ServerClock bool
	// HeadAtOpen makes the first Head return the head the open read (in
	// the same query as the schema's version) instead of asking the
	// server again: for a process that opens the store for one command
	// (awr's CLI), which began before the open. A store kept open for
	// many operations (the MCP server) must not set it: a later
	// operation's first Head would miss the writes committed since.
	HeadAtOpen bool
	// IdleLimit bounds how long a write may keep the project's head row
	// locked while its client sends nothing (the server's
	// idle_in_transaction_session_timeout, for that transaction only): a
	// machine that died or lost its link inside a write, with no word
	// reaching the server, holds every other machine's writes that long,
	// instead of until the server's TCP keepalive gives up on it (about
	// two hours by default). The server then ends that connection and
	// the write, if its machine comes back, fails with nothing written.
	// Zero sets none (the role's or the server's setting holds); a
	// context marked by WithoutIdleLimit sets none either.
	IdleLimit time.Duration
	// Via is the directory of a local connection holder's socket (package
	// internal/storehold) that keeps connections to this store open
	// between commands: when set, the store connects there first, and
	// directly when that fails in any way (no holder, a holder that
	// cannot reach the server), so that every error is the server's own.
	Via string
	// KeepStatements makes each connection prepare the head's query at
	// its first use and run it prepared after (pgx's statement cache),
	// for a store kept open for many operations (the MCP server), whose
	// every read begins with it: the server then neither parses nor plans
	// it again, which costs a fraction of a millisecond on a backend
	// woken from idle (an agent's pause between two calls), while its
	// first use on a connection costs a round trip more. It also makes
	// each connection prepare the statements of a write sealed before the
	// lock when it connects (one round trip each, before any operation
	// takes it: sealedStatements), so that such a write sends only their
	// parameters, still in one round trip, its first on a connection
	// included. A store that runs one command does not set it, nor does
	// a store through a holder (Via), whose connections go from one
	// client to the next: its statements are sent whole.
	KeepStatements bool
}

// Store is a project's event log in a PostgreSQL database: an events.Log.
// It is safe for concurrent use, and any number of Stores, in any number
// of processes, may be open on one project.
type Store struct {
	pool     *pgxpool.Pool
	project  string
	server   string // where the server is, for messages: no password
	host     string
	port     uint16
	user     string
	database string

	retryFor    time.Duration
	idleLimit   time.Duration
	serverClock bool
	headAtOpen  bool
	held        bool // connected through a holder (Options.Via)
	keep        bool // prepare the head's query and the sealed write's statements (Options.KeepStatements)

	mu     sync.Mutex
	closed bool
	// opened is the project's head as the open read it, handed to the
	// first Head (the catch-up of the command that opened the store)
	// instead of a query of its own; nil once used, and unless
	// Options.HeadAtOpen.
	opened *events.Head

	listenMu sync.Mutex
	listener *pgx.Conn // the LISTEN awr_events connection of Wait, or nil

	traffic trafficCounter
	// seen is what the store learnt of the shared log as it worked: the
	// server's clock and the highest head (events.OneTrip's Warmth).
	seen sharedSeen
}

// The PostgreSQL store and its transaction are an events.Log and an
// events.Appender.
var (
	_ events.Log      = (*Store)(nil)
	_ events.Appender = (*Tx)(nil)
)

// Open connects to the PostgreSQL database url names (a postgres:// URL or
// a libpq key=value string; credentials may come from the libpq
// environment and .pgpass), brings the database's schema forward and
// creates the project's head when it has none. The store keeps no copy of
// the URL or its password (only the driver's pool holds it, to connect),
// and no message names the password.
//
// Errors: InvalidInput when url does not parse or opts.Project is empty;
// Storage, naming the server and with a command to check it with in details.check (pg_isready), when
// the server cannot be reached within the connect timeout or ctx, refuses
// the connection, or holds a schema newer than this awr supports.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	if opts.Project == "" {
		return nil, fault.New(fault.InvalidInput, "open postgres store: a project name is required")
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fault.New(fault.InvalidInput, "open postgres store: the connection string does not parse: %s; give a URL such as postgres://HOST:5432/DB?sslmode=disable, with the password in PGPASSWORD or ~/.pgpass", err)
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = orDefault(opts.ConnectTimeout, DefaultConnectTimeout)
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	// A command connects anew and runs each statement once or twice: a
	// statement prepared first (pgx's default) costs a round trip more
	// than the statement itself. Sent whole, with its parameters' types
	// taken from their Go types, each statement is one round trip.
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeExec
	// pgxpool pings a connection idle for more than a second before it
	// hands it out: a second round trip for nearly every call to a
	// resident server, whose caller (an agent) pauses seconds between
	// two. A connection the server ended meanwhile fails its first
	// statement instead, which a read retries on another (retry) and a
	// sealed write settles (reserved.Settle); only one idle for long is
	// pinged first.
	cfg.ShouldPing = func(_ context.Context, p pgxpool.ShouldPingParams) bool { return p.IdleDuration > pingAfterIdle }
	s := &Store{project: opts.Project, server: describe(cfg.ConnConfig), host: cfg.ConnConfig.Host, port: cfg.ConnConfig.Port,
		user: cfg.ConnConfig.User, database: cfg.ConnConfig.Database, retryFor: opts.RetryFor, idleLimit: opts.IdleLimit, serverClock: opts.ServerClock, headAtOpen: opts.HeadAtOpen, keep: opts.KeepStatements}
	if opts.Via != "" {
		// Through the holder: its socket is local and the user's alone,
		// so no TLS; the holder's own connections use the URL's.
		via := cfg.Copy()
		via.ConnConfig.Host, via.ConnConfig.Port = opts.Via, viaPort
		via.ConnConfig.TLSConfig, via.ConnConfig.Fallbacks = nil, nil
		if err := s.connect(ctx, via); err == nil {
			s.held = true
			return s, nil
		}
	}
	if s.keep {
		// Connected directly and kept open: each connection prepares
		// the sealed write's statements as it connects (the holder's,
		// above, do not: they go from one client to the next).
		cfg.AfterConnect = prepareSealed
	}
	if err := s.connect(ctx, cfg); err != nil {
		return nil, err
	}
	return s, nil
}

// pingAfterIdle is how long a connection of the pool sits idle before
// the pool pings it on handing it out (pgxpool's default: a second).
const pingAfterIdle = time.Minute

// DefaultIdleLimit is the IdleLimit awr's commands write with: far beyond
// the fraction of a second, seconds on a loaded machine, that a write
// keeps the lock between its statements.
const DefaultIdleLimit = time.Minute

// noIdleLimit marks a context whose writes set no IdleLimit.
type noIdleLimit struct{}

// WithoutIdleLimit returns ctx marked so that the writes made with it set
// no IdleLimit: for a write that keeps the head row's lock through long
// work of its own (awr migrate --to sqlite rebuilds the projections under
// it).
func WithoutIdleLimit(ctx context.Context) context.Context {
	return context.WithValue(ctx, noIdleLimit{}, true)
}

// idleLimitArg is the idle_limit argument of head_lock for a write made
// with ctx: the limit in ms, or "" for none.
func (s *Store) idleLimitArg(ctx context.Context) string {
	if s.idleLimit <= 0 || ctx.Value(noIdleLimit{}) != nil {
		return ""
	}
	return strconv.FormatInt(max(s.idleLimit.Milliseconds(), 1), 10)
}

// viaPort is the port in the name of a holder's socket (.s.PGSQL.5432).
const viaPort = 5432

// connect makes the store's pool with cfg and prepares the schema and the
// project's head (prepare). Errors: those of Open.
func (s *Store) connect(ctx context.Context, cfg *pgxpool.Config) error {
	cfg.ConnConfig.DialFunc = s.traffic.dialer(cfg.ConnConfig.DialFunc)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return s.mapErr("open postgres store", err)
	}
	s.pool = pool
	if err := s.retry(ctx, "open postgres store", func() error { return s.prepare(ctx) }); err != nil {
		s.pool.Close()
		return s.mapErr("open postgres store", err)
	}
	if cfg.AfterConnect != nil {
		// A connection made before the schema was (a new database)
		// prepared nothing: it prepares now.
		for _, c := range s.pool.AcquireAllIdle(ctx) {
			err := prepareSealed(ctx, c.Conn())
			c.Release()
			if err != nil {
				s.pool.Close()
				return s.mapErr("open postgres store", err)
			}
		}
	}
	return nil
}

// Held reports whether the store's connections go through a holder
// (Options.Via) rather than to the server directly.
func (s *Store) Held() bool { return s.held }

// prepare brings the schema forward and creates the project's head when
// either is missing. The common case, a database at this awr's schema
// with the project's head, costs one query (which reads the head too, for
// the first Head) and takes no lock; only otherwise does it migrate under
// the advisory lock and create the head.
func (s *Store) prepare(ctx context.Context) error {
	var version int
	var seq, at *int64
	var hash []byte
	latest := SchemaVersion()
	err := s.pool.QueryRow(ctx, q("open_check"), pgx.NamedArgs{"project": s.project}).Scan(&version, &seq, &hash, &at)
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "42P01": // undefined_table: a new database
	case err != nil:
		return err
	case version > latest:
		return s.newerSchema(version)
	case version == latest && seq != nil && at != nil:
		if s.headAtOpen {
			s.mu.Lock()
			s.opened = &events.Head{Revision: *seq, Hash: hash, OccurredAt: *at}
			s.mu.Unlock()
		}
		return nil
	}
	if err := s.migrate(ctx); err != nil {
		return err
	}
	_, err = s.pool.Exec(ctx, q("head_create"), pgx.NamedArgs{"project": s.project, "zero_hash": make([]byte, events.HashSize)})
	return err
}

// newerSchema is the error for a database whose schema version is newer
// than this awr's.
func (s *Store) newerSchema(version int) error {
	return fault.New(fault.Storage, "open postgres store: the database %s has schema version %d, newer than this awr supports (%d); upgrade awr", s.server, version, SchemaVersion()).
		With("schema_version", version).With("supported", SchemaVersion())
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// describe names the server and database of c for messages, without the
// password: "host:port/database as user".
func describe(c *pgx.ConnConfig) string {
	return fmt.Sprintf("%s:%d/%s as %s", c.Host, c.Port, c.Database, c.User)
}

// Project returns the project whose log the store holds.
func (s *Store) Project() string { return s.project }

// Pool returns the store's connection pool, for code beside the log in the
// same database (projections).
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Close releases the store's connections, waiting for operations in
// flight. Closing twice is a no-op; other methods fail with Storage once
// the store is closed.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.listenMu.Lock()
	if s.listener != nil {
		s.listener.Close(context.Background())
		s.listener = nil
	}
	s.listenMu.Unlock()
	s.pool.Close()
	return nil
}

func (s *Store) checkOpen(op string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fault.New(fault.Storage, "%s: the postgres store of project %s is closed", op, s.project)
	}
	return nil
}

// takeOpened returns the head the open read, once, or nil: after it, or
// after a write or a wait (which a command does not follow with a Head of
// its own that the open's could answer), Head asks the server.
func (s *Store) takeOpened() *events.Head {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.opened
	s.opened = nil
	return h
}

// SchemaVersion returns the number of migrations this awr knows: the
// schema version of a database it has opened.
func SchemaVersion() int { return len(migrations()) }

type migration struct {
	version int
	sql     string
}

func migrations() []migration {
	entries, err := fs.ReadDir(schemaFiles, "schema")
	if err != nil {
		panic(err)
	}
	var out []migration
	for i, e := range entries { // ReadDir sorts by name: 001.sql, 002.sql, ...
		v, err := strconv.Atoi(strings.TrimSuffix(e.Name(), ".sql"))
		if err != nil || v != i+1 {
			panic(fmt.Sprintf("pgstore: migration %s is not number %d", e.Name(), i+1))
		}
		b, err := fs.ReadFile(schemaFiles, "schema/"+e.Name())
		if err != nil {
			panic(err)
		}
		out = append(out, migration{version: v, sql: string(b)})
	}
	return out
}

// migrate applies the migrations the database lacks, each with its
// version record, in one transaction under an advisory lock, so that
// stores opening at once on a new database migrate it once.
func (s *Store) migrate(ctx context.Context) (err error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	if _, err := tx.Exec(ctx, q("migrate_lock"), pgx.NamedArgs{"key": int64(migrateLockKey)}); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, q("migrations_table")); err != nil {
		return err
	}
	var version int
	if err := tx.QueryRow(ctx, q("migrations_version")).Scan(&version); err != nil {
		return err
	}
	steps := migrations()
	if version > len(steps) {
		return s.newerSchema(version)
	}
	for _, m := range steps[version:] {
		// One version's statements run as one simple-protocol batch.
		if _, err := tx.Exec(ctx, m.sql); err != nil {
			return fmt.Errorf("migration %03d: %w", m.version, err)
		}
		if _, err := tx.Exec(ctx, q("migration_applied"), pgx.NamedArgs{"version": m.version}); err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
}

// Head returns the latest event's revision, hash and time, as
// events.Log.Head specifies. With Options.HeadAtOpen, the first call
// returns the head the open read (the command that opened the store
// began before it); every other call asks the server. Errors: Storage when the store cannot
// be read.
func (s *Store) Head(ctx context.Context) (events.Head, error) {
	const op = "read head"
	if err := s.checkOpen(op); err != nil {
		return events.Head{}, err
	}
	if opened := s.takeOpened(); opened != nil {
		s.seen.saw(opened.Revision)
		return *opened, nil
	}
	var h events.Head
	err := s.retry(ctx, op, func() error {
		return s.pool.QueryRow(ctx, q("head"), s.headMode(), pgx.NamedArgs{"project": s.project}).Scan(&h.Revision, &h.Hash, &h.OccurredAt)
	})
	if err != nil {
		return events.Head{}, s.mapErr(op, err)
	}
	s.seen.saw(h.Revision)
	return h, nil
}

// headMode is how Head sends its query: prepared once on each connection
// for a store that keeps its statements (Options.KeepStatements) and
// connects directly, sent whole otherwise.
func (s *Store) headMode() pgx.QueryExecMode {
	if s.keep && !s.held {
		return pgx.QueryExecModeCacheStatement
	}
	return pgx.QueryExecModeExec
}

// read runs fn in a REPEATABLE READ, READ ONLY transaction: one snapshot
// of the database, taken at its first statement.
func (s *Store) read(ctx context.Context, op string, fn func(tx pgx.Tx) error) (err error) {
	if err := s.checkOpen(op); err != nil {
		return err
	}
	defer func() { err = s.mapErr(op, err) }()
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// ReadAt runs fn on a snapshot of the log at revision rev (the head when
// rev is negative), as events.Log.ReadAt specifies. Errors: InvalidInput
// when rev is beyond the head; Storage when the database cannot be read;
// an error fn returns, coded, or wrapped as Storage.
func (s *Store) ReadAt(ctx context.Context, rev int64, fn func(snap events.Snapshot) error) error {
	return s.read(ctx, "read at revision", func(tx pgx.Tx) error {
		var head events.Head
		if err := tx.QueryRow(ctx, q("head"), pgx.NamedArgs{"project": s.project}).Scan(&head.Revision, &head.Hash, &head.OccurredAt); err != nil {
			return err
		}
		if rev < 0 {
			rev = head.Revision
		}
		if rev > head.Revision {
			return fault.New(fault.InvalidInput, "read at revision: revision %d is beyond project_revision %d", rev, head.Revision).
				With("at", rev).With("project_revision", head.Revision).WithHint("awr status")
		}
		if rev < head.Revision {
			head = events.Head{Revision: rev, Hash: make([]byte, events.HashSize)}
			if rev > 0 {
				err := tx.QueryRow(ctx, q("event_at"), pgx.NamedArgs{"project": s.project, "seq": rev}).Scan(&head.Revision, &head.Hash, &head.OccurredAt)
				if errors.Is(err, pgx.ErrNoRows) {
					return fault.New(fault.Storage, "read at revision: no event %d below project_revision in project %s", rev, s.project).WithHint("awr verify")
				}
				if err != nil {
					return err
				}
			}
		}
		return fn(&snapshot{ctx: ctx, store: s, tx: tx, head: head})
	})
}

// Scan calls fn for events from..to (inclusive) in seq order, read from
// one snapshot, as events.Log.Scan specifies.
//
// A connection lost for a passing reason is retried (Options.RetryFor)
// from the first event fn has not had: events never change once
// appended, so the events fn gets are those of one snapshot.
func (s *Store) Scan(ctx context.Context, from, to int64, fn func(e *events.Event) error) error {
	next := from
	var fnErr error
	err := s.retry(ctx, "scan events", func() error {
		if to-next < scanPage {
			// One page is one statement, its own snapshot (events never
			// change once appended): no transaction to begin and end.
			if err := s.checkOpen("scan events"); err != nil {
				return err
			}
			return s.mapErr("scan events", s.scan(ctx, s.pool, next, to, func(e *events.Event) error {
				if fnErr = fn(e); fnErr != nil {
					return fnErr
				}
				next = e.Seq + 1
				return nil
			}))
		}
		return s.read(ctx, "scan events", func(tx pgx.Tx) error {
			return s.scan(ctx, tx, next, to, func(e *events.Event) error {
				if fnErr = fn(e); fnErr != nil {
					return fnErr
				}
				next = e.Seq + 1
				return nil
			})
		})
	})
	if fnErr != nil {
		return fnErr
	}
	return err
}

// scanPage is how many events a scan reads per query: fn runs between
// queries, never while a result is open, so it may use the transaction.
const scanPage = 512

// bulkPage is the length of a range from which a scan reads its pages in
// binary, worth the round trip that describes the statement first.
const bulkPage = 64

// querier is what runs a statement: a transaction, a connection taken from
// the pool, or the pool itself.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

func (s *Store) scan(ctx context.Context, tx querier, from, to int64, fn func(e *events.Event) error) error {
	for from <= to {
		// A page is read in binary (its statement described first, a
		// round trip more on a new connection) only when it is long: the
		// few events a command catches up come in text in one round trip.
		var mode any = pgx.QueryExecModeExec
		if to-from >= bulkPage {
			mode = pgx.QueryExecModeCacheDescribe
		}
		rows, err := tx.Query(ctx, q("events_range"), mode, pgx.NamedArgs{"project": s.project, "from": from, "to": to, "limit": scanPage})
		if err != nil {
			return err
		}
		page, err := pgx.CollectRows(rows, pgx.RowToStructByName[eventRow])
		if err != nil {
			return err
		}
		for _, r := range page {
			if err := fn(r.event()); err != nil {
				return err
			}
		}
		if len(page) < scanPage {
			return nil
		}
		from = page[len(page)-1].Seq + 1
	}
	return nil
}

// eventRow is a row of awr_events, its columns read by name.
type eventRow struct {
	Seq           int64   `db:"seq"`
	ID            string  `db:"id"`
	Kind          string  `db:"kind"`
	Stream        string  `db:"stream"`
	StreamVersion int64   `db:"stream_version"`
	OccurredAt    int64   `db:"occurred_at"`
	Actor         string  `db:"actor"`
	RequestID     *string `db:"request_id"`
	Payload       []byte  `db:"payload"`
	PrevHash      []byte  `db:"prev_hash"`
	Hash          []byte  `db:"hash"`
}

func (r *eventRow) event() *events.Event {
	e := &events.Event{Seq: r.Seq, ID: r.ID, Kind: events.Kind(r.Kind), Stream: r.Stream, StreamVersion: r.StreamVersion,
		OccurredAt: r.OccurredAt, Actor: r.Actor, Payload: r.Payload, PrevHash: r.PrevHash, Hash: r.Hash}
	if r.RequestID != nil {
		e.RequestID = *r.RequestID
	}
	return e
}

// snapshot is the PostgreSQL store's events.Snapshot: a REPEATABLE READ
// transaction, capped at head.
type snapshot struct {
	ctx   context.Context
	store *Store
	tx    pgx.Tx
	head  events.Head
}

func (s *snapshot) Head() events.Head { return s.head }

func (s *snapshot) Scan(from, to int64, fn func(e *events.Event) error) error {
	return s.store.scanUpTo(s.ctx, s.tx, from, min(to, s.head.Revision), fn, "scan events", "")
}

// scanUpTo calls fn with the events from..to read in tx: fn's error is
// returned as it is, the driver's mapped with op and note (mapErrNote).
func (s *Store) scanUpTo(ctx context.Context, tx querier, from, to int64, fn func(e *events.Event) error, op, note string) error {
	var fnErr error
	err := s.scan(ctx, tx, from, to, func(e *events.Event) error {
		fnErr = fn(e)
		return fnErr
	})
	if err != nil && fnErr == nil {
		return s.mapErrNote(op, err, note)
	}
	return err
}

// mapErr turns driver errors into coded faults, naming the server, and
// passes coded faults through unchanged. No message names the password.
func (s *Store) mapErr(op string, err error) error { return s.mapErrNote(op, err, "") }

// nothingWritten is the note of a write's error from before its commit:
// the transaction is rolled back, whatever the connection did.
const nothingWritten = "; nothing was written"

// mapErrNote is mapErr with note (nothingWritten, or "") after the
// messages of a lost connection, a full server and a wait given up.
func (s *Store) mapErrNote(op string, err error, note string) error {
	if err == nil {
		return nil
	}
	var fe *fault.Error
	if errors.As(err, &fe) {
		return err
	}
	msg := err.Error() // pgx names no password in its errors
	var pe *pgconn.PgError
	var ce *pgconn.ConnectError
	switch {
	case errors.As(err, &ce) && errors.As(err, &pe):
		// The server answered and refused.
		hint := fmt.Sprintf("check the connection settings: psql %q -c 'select 1'", s.psqlTarget())
		switch {
		case pe.Code == "3D000":
			hint = fmt.Sprintf("create the database (createdb -h %s -p %d -U %s %s), or name an existing one", s.host, s.port, s.user, s.database)
		case strings.HasPrefix(pe.Code, "28"):
			hint = fmt.Sprintf("check the user %s and its password (PGPASSWORD or ~/.pgpass): psql %q -c 'select 1'", s.user, s.psqlTarget())
		}
		return fault.New(fault.Storage, "%s: PostgreSQL at %s refused the connection: %s", op, s.server, msg).
			With("server", s.server).With("sqlstate", pe.Code).With("check", hint)
	case errors.As(err, &ce):
		return fault.New(fault.Storage, "%s: cannot connect to PostgreSQL at %s: %s", op, s.server, msg).
			With("server", s.server).With("check", s.readyHint())
	case errors.As(err, &pe) && pe.Code == "57P03":
		return fault.New(fault.Storage, "%s: the PostgreSQL server at %s is starting up, shutting down or in recovery and takes no connection now (%s)%s", op, s.server, msg, note).
			With("server", s.server).With("sqlstate", pe.Code).With("check", s.readyHint())
	case errors.As(err, &pe) && pe.Code == "57P01", errors.As(err, &pe) && pe.Code == "57P02":
		return fault.New(fault.Storage, "%s: the PostgreSQL server at %s ended the connection (%s)%s", op, s.server, msg, note).
			With("server", s.server).With("check", s.readyHint())
	case errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01" || pe.Code == "55P03"):
		return fault.New(fault.Storage, "%s: the database is busy (%s; another awr process holds the project's log): retry", op, msg)
	case errors.As(err, &pe) && pe.Code == "25006":
		return fault.New(fault.Storage, "%s: the PostgreSQL server at %s is read-only (a replica, a server in recovery, or default_transaction_read_only): a write goes to the primary%s", op, s.server, note).
			With("server", s.server).With("sqlstate", pe.Code).With("check", fmt.Sprintf("psql %q -c 'select pg_is_in_recovery(), current_setting($$default_transaction_read_only$$)'", s.psqlTarget()))
	case errors.As(err, &pe) && pe.Code == "42501":
		return fault.New(fault.Storage, "%s: the role %s may not %s in %s (%s)%s; use a role that owns the awr tables, or grant it SELECT, INSERT and UPDATE on them", op, s.user, privilegeWord(op), s.server, pe.Message, note).
			With("server", s.server).With("sqlstate", pe.Code).With("user", s.user)
	case errors.As(err, &pe) && (pe.Code == "42P01" || pe.Code == "42703" || pe.Code == "42883"):
		return fault.New(fault.Storage, "%s: the awr schema in %s is damaged (%s): a table, column or function it had at schema version %d is gone (dropped by hand?)%s; restore the database from a backup (pg_dump), or move the project into a new database with awr migrate", op, s.server, pe.Message, SchemaVersion(), note).
			With("server", s.server).With("sqlstate", pe.Code)
	case errors.As(err, &pe) && pe.Code == sqlstateMoved:
		return fault.New(fault.InvalidTransition, "%s: %s; nothing was written", op, pe.Message).
			With("store", s.Describe()).WithHint("awr migrate --to sqlite")
	case errors.As(err, &pe) && strings.HasPrefix(pe.Code, "53"):
		return fault.New(fault.Storage, "%s: the PostgreSQL server at %s is out of resources (%s)%s; free disk space or connections on the server, then retry", op, s.server, msg, note).
			With("server", s.server)
	case errors.As(err, &pe):
		return fault.New(fault.Storage, "%s: %s", op, msg).With("server", s.server).With("sqlstate", pe.Code)
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		return fault.New(fault.Storage, "%s: gave up waiting for the PostgreSQL server at %s or for the project's write lock%s", op, s.server, note).
			With("server", s.server).With("check", s.readyHint())
	case pgconn.Timeout(err) || isNetwork(err):
		return fault.New(fault.Storage, "%s: lost the connection to the PostgreSQL server at %s: %s%s", op, s.server, msg, note).
			With("server", s.server).With("check", s.readyHint())
	}
	// Not coded, not the driver's: an error fn returned, kept for errors.Is.
	return fault.Wrap(fault.Storage, err, "%s: %s", op, msg)
}

// psqlTarget is a libpq connection string for the store's server, without
// its password.
func (s *Store) psqlTarget() string {
	return fmt.Sprintf("host=%s port=%d dbname=%s user=%s", s.host, s.port, s.database, s.user)
}

// readyHint is the command that checks the server is up.
func (s *Store) readyHint() string {
	return fmt.Sprintf("check that the server is up and reachable: pg_isready -h %s -p %d", s.host, s.port)
}

func isNetwork(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return false
	}
	return pgconn.SafeToRetry(err) || strings.Contains(err.Error(), "conn closed") || strings.Contains(err.Error(), "unexpected EOF") || strings.Contains(err.Error(), "broken pipe") || strings.Contains(err.Error(), "connection reset")
}

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

	"github.com/awr-dev/awr/internal/fault"
	"golang.org/x/sys/unix"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// A read-only open (Options.ReadOnly) serves reads to a process that may
// not write the database. SQLite reads a WAL-mode database through its
// write-ahead log (-wal) and the log's shared-memory index (-shm), and a
// connection creates both beside the file when they are missing; files a
// reader left there would belong to it and could lock the owner out. So
// a read-only open creates no file, and reads what it finds:
//
//   - -wal and -shm present (a writer has the database open, or one
//     crashed): an ordinary read-only connection (mode=ro), which reads
//     the log through the index and takes SQLite's locks; SQLite reads a
//     read-only index too.
//   - no -wal, or an empty one, and no -shm (the last writer closed and
//     folded its log into the file): every committed event is in the
//     file, read as immutable (no locks, no index). The owner may start
//     writing meanwhile: every read first checks that the file has not
//     changed and no log has content since the view was taken (else it
//     takes a new view), and afterwards that the file did not change
//     under it (else it is refused: a read without locks may be torn).
//   - a -wal with content but no -shm: its commits cannot be read
//     without creating the index. The open is refused (Storage), rather
//     than answer from the file alone, which may lack them.
//
// What a writable open writes before it serves a read (a pending
// migration, a rebuild of projections a newer awr versions differently,
// the bookkeeping of retired projections) is done instead on an in-memory
// copy of the database, which the reads are then served from: a
// read-only open answers what a writable one would.

// Writable reports whether this process can write the database at path
// the way SQLite needs to: the file, and its directory (where SQLite
// creates and removes the write-ahead log and its index) unless both of
// those exist and are writable. A missing file is not writable; a
// read-only file system is not.
func Writable(path string) bool {
	if !canWrite(path) {
		return false
	}
	return canWrite(filepath.Dir(path)) || canWrite(path+"-wal") && canWrite(path+"-shm")
}

// canWrite reports whether the effective user may write path.
func canWrite(path string) bool {
	return unix.Faccessat(unix.AT_FDCWD, path, unix.W_OK, unix.AT_EACCESS) == nil
}

// readOnly is the state of a store opened with Options.ReadOnly: the view
// its reads are served from, replaced when the database changes on disk.
type readOnly struct {
	opts   Options
	mu     sync.RWMutex // readers hold it shared; replacing the view holds it exclusively
	view   *view
	closed bool
}

// view is one read-only look at the database: the pool that serves it,
// the files it was taken from and, for a copy, the connection that keeps
// the copy in memory.
type view struct {
	pool      *connPool
	immutable bool         // read from the file alone, without locks
	memory    *sqlite.Conn // holds the in-memory copy; nil when reads go to the file
	at        files        // the database's files when the view was taken
}

// files is what stat said of a database file and its two companions
// (nil when absent).
type files struct{ db, wal, shm os.FileInfo }

func statFiles(path string) files {
	var f files
	f.db, _ = os.Stat(path)
	f.wal, _ = os.Stat(path + "-wal")
	f.shm, _ = os.Stat(path + "-shm")
	return f
}

// same reports whether a and b are one file with the same size and
// modification time (both absent counts as the same).
func same(a, b os.FileInfo) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// empty reports whether a write-ahead log is absent or holds nothing.
func empty(wal os.FileInfo) bool { return wal == nil || wal.Size() == 0 }

// current reports whether v still shows the database as it is on disk.
// A view of the live file through SQLite's locks always does.
func (v *view) current(path string) bool {
	if !v.immutable && v.memory == nil {
		return true
	}
	now := statFiles(path)
	if !same(v.at.db, now.db) {
		return false
	}
	if v.immutable {
		return empty(now.wal)
	}
	return same(v.at.wal, now.wal)
}

// checkUnchanged fails when v reads the file without locks and the file
// changed since the view was taken: what was read may mix two states.
func (v *view) checkUnchanged(path string) error {
	if !v.immutable || v.memory != nil || same(v.at.db, statFiles(path).db) {
		return nil
	}
	return changedError(path)
}

func (v *view) close() error {
	err := v.pool.Close()
	if v.memory != nil {
		if merr := v.memory.Close(); err == nil {
			err = merr
		}
	}
	return err
}

func changedError(path string) error {
	return fault.New(fault.Storage, "read project database %s: it changed while being read without locks (this process may not write its directory, so SQLite cannot lock it); nothing was reported: retry", path).
		With("path", path).With("changed", true)
}

// errChanged is a view taken without locks that the database changed
// under.
var errChanged = errors.New("database changed while a view was taken")

// openReadOnly opens the store at path for reading only (Options.ReadOnly).
func openReadOnly(ctx context.Context, path string, opts Options) (*Store, error) {
	v, err := openView(ctx, path, opts)
	if err != nil {
		return nil, err
	}
	s := &Store{path: path, pool: v.pool, projectors: opts.Projectors, ro: &readOnly{opts: opts, view: v}}
	if s.ident, err = os.Stat(path); err != nil {
		v.close()
		return nil, fault.Wrap(fault.Storage, err, "open project database %s", path)
	}
	return s, nil
}

// enter returns the view a read uses, taking a new one first when the
// database changed on disk, and the function that ends the read.
func (ro *readOnly) enter(ctx context.Context, s *Store) (*view, func(), error) {
	ro.mu.RLock()
	if ro.closed || ro.view.current(s.path) {
		return ro.view, ro.mu.RUnlock, nil
	}
	ro.mu.RUnlock()
	ro.mu.Lock()
	if !ro.closed && !ro.view.current(s.path) {
		v, err := openView(ctx, s.path, ro.opts)
		if err != nil {
			ro.mu.Unlock()
			return nil, nil, err
		}
		old := ro.view
		ro.view, s.pool = v, v.pool
		old.close()
	}
	ro.mu.Unlock()
	ro.mu.RLock()
	return ro.view, ro.mu.RUnlock, nil
}

func (ro *readOnly) close() error {
	ro.mu.Lock()
	defer ro.mu.Unlock()
	ro.closed = true
	return ro.view.close()
}

// readOnlyError is the refusal of a write on a read-only store.
func (s *Store) readOnlyError(op string) error {
	return fault.New(fault.Storage, "%s: database is read-only; nothing was written; check the permissions of .awr/awr.db and of .awr/ (this process may not write them)", op).With("path", s.path)
}

// openView takes a view of the database at path, again when the file
// changed while it was being taken without locks.
func openView(ctx context.Context, path string, opts Options) (*view, error) {
	for attempt := 1; ; attempt++ {
		v, err := takeView(ctx, path, opts)
		if !errors.Is(err, errChanged) {
			return v, err
		}
		if attempt == 3 {
			return nil, changedError(path)
		}
	}
}

func takeView(ctx context.Context, path string, opts Options) (*view, error) {
	at := statFiles(path)
	v := &view{at: at}
	var uri string
	switch {
	case at.wal != nil && at.shm != nil:
		uri = fileURI(path, "mode=ro")
	case !empty(at.wal):
		return nil, fault.New(fault.Storage, "open project database %s read-only: its write-ahead log %s-wal holds commits that are not in the database file yet, and reading them needs the index %s-shm, which this process may not create; run any awr command once as a user who can write %s (it folds the log into the database file), then retry", path, path, path, filepath.Dir(path)).
			With("path", path)
	default:
		v.immutable = true
		uri = fileURI(path, "immutable=1")
	}
	pool, err := newPool(uri, sqlite.OpenReadOnly|sqlite.OpenURI|sqlite.OpenNoMutex, opts)
	if err != nil {
		return nil, openError(path, err)
	}
	fold, err := needsFold(ctx, path, pool, opts.Projectors)
	if err == nil && v.immutable && !same(at.db, statFiles(path).db) {
		err = errChanged
	}
	if err != nil || !fold {
		if err != nil {
			pool.Close()
			return nil, err
		}
		v.pool = pool
		return v, nil
	}
	v.memory, uri, err = copyToMemory(ctx, pool)
	pool.Close()
	if err == nil && v.immutable && !same(at.db, statFiles(path).db) {
		v.memory.Close()
		err = errChanged
	}
	if err != nil {
		return nil, err
	}
	// The copy is a writable database of its own: fold it as a writable
	// open folds the file, on one connection (in a shared in-memory
	// database a connection that reads the log would wait for the one
	// that recreates the projections' tables).
	one := opts
	one.PoolSize = 1
	folder, err := newPool(uri, sqlite.OpenReadWrite|sqlite.OpenURI|sqlite.OpenNoMutex, one)
	if err != nil {
		v.memory.Close()
		return nil, openError(path, err)
	}
	copied := &Store{path: path, ident: at.db, pool: folder, projectors: opts.Projectors, oneConn: true}
	err = copied.migrate(ctx)
	if err == nil {
		if err = copied.syncProjections(ctx, opts.Progress); fault.Is(err, fault.VerifyFailed) {
			// A broken chain cannot be folded: the reads get the
			// projections as they are, as after a writable open, so
			// that verify can say why.
			err = nil
		}
	}
	if cerr := folder.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		v.pool, err = newPool(uri, sqlite.OpenReadWrite|sqlite.OpenURI|sqlite.OpenNoMutex, opts)
	}
	if err != nil {
		v.memory.Close()
		return nil, mapErr("fold the in-memory copy", err)
	}
	return v, nil
}

// needsFold reports whether a writable open of the database would write
// before serving a read: a migration, projections to rebuild (also for a
// schema object missing), retired projections to forget. Errors: Storage
// as checkSchema and checkObjects.
func needsFold(ctx context.Context, path string, pool *connPool, ps []Projector) (fold bool, err error) {
	conn, err := pool.Take(ctx)
	if err != nil {
		return false, openError(path, err)
	}
	defer pool.Put(conn)
	defer func() {
		var fe *fault.Error
		if err != nil && !errors.As(err, &fe) {
			err = openError(path, err)
		}
	}()
	endFn := sqlitex.Transaction(conn)
	defer endFn(&err)
	appID, version, err := readSchema(conn)
	if err != nil {
		return false, err
	}
	pending, err := checkSchema(path, appID, version)
	if err != nil {
		return false, err
	}
	var damaged []Projector
	if appID == applicationID {
		if damaged, _, err = checkObjects(conn, path, version, ps); err != nil {
			return false, err
		}
	}
	if pending || len(damaged) > 0 {
		return true, nil
	}
	if len(ps) == 0 {
		return false, nil
	}
	head, _, _, err := headOf(conn)
	if err != nil {
		return false, err
	}
	retired, stale, err := projectionWork(conn, ps, head, nil)
	return len(retired) > 0 || len(stale) > 0, err
}

// memories numbers the in-memory copies of this process.
var memories atomic.Int64

// copyToMemory copies the database pool reads into a new in-memory
// database that the connections of this process can share, and returns
// the connection that keeps it alive and its URI.
func copyToMemory(ctx context.Context, pool *connPool) (*sqlite.Conn, string, error) {
	src, err := pool.Take(ctx)
	if err != nil {
		return nil, "", mapErr("copy the database into memory", err)
	}
	defer pool.Put(src)
	uri := fmt.Sprintf("file:awr-readonly-%d-%d?mode=memory&cache=shared", os.Getpid(), memories.Add(1))
	mem, err := OpenConn(uri, sqlite.OpenReadWrite|sqlite.OpenCreate|sqlite.OpenURI|sqlite.OpenNoMutex)
	if err != nil {
		return nil, "", mapErr("copy the database into memory", err)
	}
	err = func() error {
		// An in-memory destination must have the source's page size.
		var pageSize int
		if err := sqlitex.ExecuteTransient(src, "PRAGMA page_size", &sqlitex.ExecOptions{ResultFunc: func(st *sqlite.Stmt) error {
			pageSize = st.ColumnInt(0)
			return nil
		}}); err != nil {
			return err
		}
		if err := sqlitex.ExecuteTransient(mem, fmt.Sprintf("PRAGMA page_size=%d", pageSize), nil); err != nil {
			return err
		}
		b, err := sqlite.NewBackup(mem, "main", src, "main")
		if err != nil {
			return err
		}
		_, err = b.Step(-1)
		if cerr := b.Close(); err == nil {
			err = cerr
		}
		return err
	}()
	if err != nil {
		mem.Close()
		return nil, "", mapErr("copy the database into memory", err)
	}
	return mem, uri, nil
}

// openError is a read-only open that SQLite refused.
func openError(path string, err error) error {
	switch sqlite.ErrCode(err).ToPrimary() {
	case sqlite.ResultCorrupt, sqlite.ResultNotADB:
		return damaged(path, err.Error())
	}
	return fault.Wrap(fault.Storage, err, "open project database %s read-only (check that this process may read .awr/awr.db and, where they exist, .awr/awr.db-wal and .awr/awr.db-shm)", path).With("path", path)
}

// fileURI is the SQLite URI of the file at path with query, its path
// percent-encoded.
func fileURI(path, query string) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	var b strings.Builder
	b.WriteString("file:")
	for i := 0; i < len(path); i++ {
		c := path[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("/-._~", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String() + "?" + query
}

package events

import (
	"errors"
	"runtime/debug"
	"strings"

	"github.com/awr-dev/awr/internal/fault"
	"zombiezen.com/go/sqlite"
)

// mmapBytes is every connection's PRAGMA mmap_size: SQLite reads the
// database file's pages through a shared mapping of the file instead of
// copying each into a page-cache buffer of its own. A command process
// reads a few hundred pages; each buffer was fresh memory, a page fault
// apiece, where the mapping of a file already in the kernel's page cache
// faults in 16 pages at a time. On the project box a status at 10k events
// went from 1,480 page faults to 1,195 and from 45.1 to 38.4 ms
// (docs/notes/benchmarks.md, "Reads through a mapping"). Pages beyond the
// mapping, and those in the write-ahead log, are read as before; writes
// are unchanged (SQLite writes through write(2)).
const mmapBytes = 1 << 30

// The cost of the mapping: a read of a mapped page that is no longer in
// the file (another process cut the file while this one had it open) is
// a SIGBUS, which would end the process with a Go runtime crash instead
// of an error. Every entry into SQLite on the store's connections
// therefore arms its goroutine with debug.SetPanicOnFault and defers
// catchFault, which turns such a fault into a Storage error; the store
// then refuses every further operation (its connections were left in the
// middle of a call) and is not closed (the process's exit releases it).

// armFault makes a memory fault on the calling goroutine a panic that
// catchFault can recover; it returns the previous setting, for
// catchFault to restore. Use as
//
//	defer s.catchFault(op, &err, armFault())
func armFault() bool { return debug.SetPanicOnFault(true) }

// catchFault restores the goroutine's fault setting and turns a panic on
// a fault at a mapped address into a Storage error in *err, marking the
// store broken. Any other panic goes on.
func (s *Store) catchFault(op string, err *error, was bool) {
	debug.SetPanicOnFault(was)
	r := recover()
	if r == nil {
		return
	}
	if e := prepareFault(s.path, op, r); e != nil {
		*err = e
		return
	}
	e := mappedFault(s.path, op, r)
	if e == nil {
		panic(r)
	}
	s.faulted.CompareAndSwap(nil, e)
	*err = e
}

// prepareFault is the Storage "damaged" error for a panic r that is an
// SQLite error from preparing one of awr's embedded statements (Conn.Prep
// panics: a table or index it names is gone, as the schema check at open
// finds first), or nil. The transaction it happened in was rolled back.
func prepareFault(path, op string, r any) *fault.Error {
	err, ok := r.(error)
	if !ok || sqlite.ErrCode(err) != sqlite.ResultError || !strings.Contains(err.Error(), "prepare") {
		return nil
	}
	return fault.New(fault.Storage, "%s: the project's database is damaged: a statement does not prepare (%v); nothing was written; restore it from a backup copy of .awr/awr.db, or import an export into a new project", op, err).
		With("path", path).WithHint(RestoreHint)
}

// mappedFault is the Storage error for a panic r that is a memory fault
// at an address that is not near zero (a nil dereference stays a bug),
// or nil.
func mappedFault(path, op string, r any) *fault.Error {
	af, ok := r.(interface{ Addr() uintptr })
	if !ok || af.Addr() < 1<<16 {
		return nil
	}
	db := "the project database"
	if path != "" {
		db += " " + path
	}
	e := fault.Wrap(fault.Storage, errMappedPage, "%s: %s changed under this process: a read of its mapped pages failed (address %#x), as when another process cuts the file; this operation wrote nothing", op, db, af.Addr()).
		WithHint("awr verify")
	if path != "" {
		e = e.With("path", path)
	}
	return e
}

// errMappedPage is the cause of every mapped-page fault's error.
var errMappedPage = errors.New("SIGBUS on the file's mapping")

// noteFault marks the store broken when err is a mapped-page fault that
// reached it as an error (from a rebuild's reader goroutine, which has no
// store to mark).
func (s *Store) noteFault(err error) {
	if errors.Is(err, errMappedPage) {
		s.faulted.CompareAndSwap(nil, fault.As(err))
	}
}

// brokenErr is the error every operation of a store that faulted returns.
func (s *Store) brokenErr(op string) error {
	e := s.faulted.Load()
	if e == nil {
		return nil
	}
	return fault.New(fault.Storage, "%s: the project database %s changed under this process earlier (%v); open the project again", op, s.path, e).
		With("path", s.path).WithHint("awr verify")
}

// scanGuarded is ScanEvents on a goroutine of its own (a rebuild's
// reader), with a fault on the file's mapping returned as a Storage error
// rather than ending the process.
func scanGuarded(conn *sqlite.Conn, from, to int64, fn func(e *Event) error) (err error) {
	defer func(was bool) {
		debug.SetPanicOnFault(was)
		if r := recover(); r != nil {
			e := mappedFault("", "read the log", r)
			if e == nil {
				panic(r)
			}
			err = e
		}
	}(armFault())
	return ScanEvents(conn, from, to, fn)
}

package events

import (
	"context"
	"fmt"
	"time"

	"github.com/awr-dev/awr/fault"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// WriteBulk appends a long history in one IMMEDIATE transaction with the
// projections maintained as a rebuild maintains them, for generating
// benchmark logs through the command code. It resets every projection,
// folds the existing log into it (checking the hash chain, as Rebuild
// does), lets fn append through tx, and then writes and indexes the
// projections through the bulk rebuild path, so the tables it leaves are
// those a replay of the whole log builds. While fn runs, bulk projectors
// hold their current rows in memory and answer reads at the head on
// tx.Conn from there; a read a projector cannot answer that way fails
// rather than read a half-written table. Projectors that are not bulk
// projectors are applied incrementally as usual.
//
// Everything commits together or not at all; readers keep seeing the
// state before the write until it commits. Appended events are not
// retained (WriteResult.Events is nil). Request ids and expected revisions
// are not supported. progress, if set, is called while the existing log
// is folded.
//
// Errors: Internal without clock and entropy, or with a request id or an
// expected revision; InvalidInput without an actor; VerifyFailed when the
// existing log fails its hash chain; Storage when the database is busy
// past the lock timeout or cannot be written; any error fn returns.
func (s *Store) WriteBulk(ctx context.Context, opts WriteOptions, progress func(done, total int64), fn func(tx *Tx) error) (res *WriteResult, err error) {
	if opts.Now.IsZero() || opts.Entropy == nil {
		return nil, fault.New(fault.Internal, "bulk write: clock and entropy are required inputs")
	}
	if opts.Actor == "" {
		return nil, fault.New(fault.InvalidInput, "bulk write: actor is required")
	}
	if opts.RequestID != "" || opts.ExpectedRevision != nil {
		return nil, fault.New(fault.Internal, "bulk write: request ids and expected revisions are not supported")
	}
	return s.writer(ctx, "bulk write", func(conn *sqlite.Conn) (res *WriteResult, err error) {
		// Set before the transaction begins, which is when SQLite decides
		// where statement journals live: in memory, not in a temporary file
		// written with a system call per page. A long history also dirties far
		// more pages than the usual cache holds; spilling them to the WAL
		// mid-transaction and reading them back would dominate the write.
		if err := bulkPragmas(conn); err != nil {
			return nil, err
		}
		if err := sqlitex.ExecuteTransient(conn, fmt.Sprintf("PRAGMA cache_size=%d", bulkCacheKiB), nil); err != nil {
			return nil, err
		}
		defer sqlitex.ExecuteTransient(conn, fmt.Sprintf("PRAGMA cache_size=%d", cacheKiB), nil)
		endFn, err := s.beginImmediate(ctx, conn)
		if err != nil {
			return nil, err
		}
		defer endFn(&err)
		head, lastHash, _, err := headOf(conn)
		if err != nil {
			return nil, err
		}
		ps := s.projectors
		// Armed before the projectors enter bulk mode (see RebuildFrom).
		defer func() {
			if err != nil {
				abortBulk(conn, ps)
			}
		}()
		if err = beginBulk(conn, ps); err != nil {
			return nil, err
		}
		if err := s.foldExisting(ctx, conn, ps, head, progress); err != nil {
			return nil, err
		}
		tx := &Tx{Conn: conn, store: s, opts: opts, head: head, startHead: head, lastHash: lastHash, versions: map[string]int64{}, discard: true}
		if err := fn(tx); err != nil {
			return nil, err
		}
		if err := endBulk(conn, ps); err != nil {
			return nil, err
		}
		if err := markProjections(conn, ps, tx.head); err != nil {
			return nil, err
		}
		return &WriteResult{Result: []byte("null"), Revision: tx.head}, nil
	})
}

// bulkCacheKiB is the page cache of a bulk write, as PRAGMA cache_size
// (negative: KiB): 2 GiB, which a million-event history stays under.
const bulkCacheKiB = -2 << 20

// foldExisting folds events 1..head into ps on conn, reading them on a
// second connection when the pool has one to spare within a moment (a pool
// of one never does), and on conn itself otherwise.
func (s *Store) foldExisting(ctx context.Context, conn *sqlite.Conn, ps []Projector, head int64, progress func(done, total int64)) (err error) {
	if head == 0 {
		return nil
	}
	rconn, err := s.spare(ctx)
	if err != nil {
		return err
	}
	if rconn == nil {
		return fold(conn, conn, ps, head, progress)
	}
	defer s.pool.Put(rconn)
	rend := sqlitex.Transaction(rconn)
	var readEnd error
	defer rend(&readEnd)
	return fold(rconn, conn, ps, head, progress)
}

// spare takes a second pooled connection for reading the log beside the
// writing one, or returns nil when none frees up within two seconds (a
// pool of one never has one). It fails only when ctx is done.
func (s *Store) spare(ctx context.Context) (*sqlite.Conn, error) {
	takeCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	conn, err := s.pool.Take(takeCtx)
	if err != nil || conn == nil {
		if ctx.Err() != nil {
			return nil, mapErr("open connection", ctx.Err())
		}
		return nil, nil
	}
	// Take ties the connection's interrupt to takeCtx, which ends when
	// this returns: tie it to the caller's ctx instead.
	conn.SetInterrupt(ctx.Done())
	return conn, nil
}

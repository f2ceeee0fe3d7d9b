package events

import (
	"context"
	"fmt"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// A pass over the whole log (a rebuild, a verify, an export, an import, a
// generated history) must not make the process grow with the log. Three
// of SQLite's memories would: the mapping of the file (every page read
// through it stays in the process's resident set, so a pass over a 1 GB
// log maps 1 GB), the page cache (cacheKiB per connection, 32 MiB), and
// temporary storage kept in memory (temp_store=MEMORY: the sorter of an
// index build and its spilled runs). A bulk connection therefore reads
// through read(2) into a small page cache and sorts through temporary
// files, which live in the kernel's page cache rather than in the process.
// Measured side by side (docs/notes/benchmarks.md, "Memory bounded"), it costs
// no time: a rebuild at 100k events spent less CPU without the mapping.

// bulkCacheKiB is a bulk connection's page cache, as PRAGMA cache_size
// (negative: KiB). It also bounds the sorter's in-memory runs, which
// SQLite sizes from the page cache. SQLite allocates each page of a
// cache as a block of about 4.3 KB, which the allocator serves from an
// 8 KiB slot (events/internal/sqlmem): a 4 MiB cache takes 8 MiB of the
// process. A rebuild at 100k events spent the same CPU with 4 MiB as
// with 8 MiB (docs/notes/benchmarks.md, "Memory bounded at 1M").
const bulkCacheKiB = -4096

// bulkReadCacheKiB is the page cache of a bulk connection that only
// reads (the log's side of a rebuild, an export, a verify, replay
// --verify's snapshot): it reads the log once, in order, and a page read
// again comes from the kernel's page cache.
const bulkReadCacheKiB = -1024

// bulkPragmasOn switches a pooled connection into bulk mode, and
// bulkPragmasOff (or, for a lean store, bulkPragmasLean) back to the
// store's defaults (newPool). temp_store=FILE still keeps statement
// journals in memory up to SQLite's spill threshold.
var (
	bulkPragmasOn   = []string{"PRAGMA mmap_size=0", fmt.Sprintf("PRAGMA cache_size=%d", bulkCacheKiB), "PRAGMA temp_store=FILE"}
	bulkReadPragmas = []string{"PRAGMA mmap_size=0", fmt.Sprintf("PRAGMA cache_size=%d", bulkReadCacheKiB), "PRAGMA temp_store=FILE"}
	bulkPragmasOff  = []string{fmt.Sprintf("PRAGMA mmap_size=%d", mmapBytes), fmt.Sprintf("PRAGMA cache_size=%d", cacheKiB), "PRAGMA temp_store=MEMORY"}
	bulkPragmasLean = []string{fmt.Sprintf("PRAGMA cache_size=%d", bulkCacheKiB), "PRAGMA temp_store=MEMORY"}
)

// enterBulk puts conn, one of the store's pooled connections, in bulk mode
// (with the smaller page cache of bulkReadCacheKiB when it only reads)
// and returns the func that puts it back. It must be called outside a
// transaction: SQLite keeps the old mapping while any mapped page is in
// use, and a transaction holds one.
func (s *Store) enterBulk(conn *sqlite.Conn, readOnly bool) (leave func(), err error) {
	on := bulkPragmasOn
	if readOnly {
		on = bulkReadPragmas
	}
	if err := execPragmas(conn, on); err != nil {
		return nil, err
	}
	back := bulkPragmasOff
	if s.lean {
		back = bulkPragmasLean
	}
	return func() { _ = execPragmas(conn, back) }, nil
}

// BulkConn sets up conn, a connection of its own (a scratch database a
// rebuild is folded into), as a bulk connection for good: no mapping, a
// small page cache, temporary storage in files.
func BulkConn(conn *sqlite.Conn) error { return execPragmas(conn, bulkPragmasOn) }

func execPragmas(conn *sqlite.Conn, pragmas []string) error {
	for _, pragma := range pragmas {
		if err := sqlitex.ExecuteTransient(conn, pragma, nil); err != nil {
			return err
		}
	}
	return nil
}

// ReadBulk is Read for a pass over the whole log (an export, a verify, a
// rebuild to compare with): fn's connection is a bulk connection, which
// reads without the file's mapping into a small page cache, so the
// process's memory stays bounded however long the log. Errors: those of
// Read.
func (s *Store) ReadBulk(ctx context.Context, fn func(r *Reader) error) error {
	return s.read(ctx, true, fn, true)
}

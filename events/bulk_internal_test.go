package events

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// connSetup is what a connection's memory pragmas say.
type connSetup struct {
	mmap, cache, temp int64
}

func setupOf(t *testing.T, conn *sqlite.Conn) connSetup {
	t.Helper()
	get := func(pragma string) int64 {
		var v int64
		require.NoError(t, sqlitex.ExecuteTransient(conn, "PRAGMA "+pragma, &sqlitex.ExecOptions{ResultFunc: func(st *sqlite.Stmt) error {
			v = st.ColumnInt64(0)
			return nil
		}}))
		return v
	}
	return connSetup{mmap: get("mmap_size"), cache: get("cache_size"), temp: get("temp_store")}
}

// SQLite's temp_store values.
const (
	tempFile   = 1
	tempMemory = 2
)

// TestBulk_ConnectionsComeBack: a bulk read or write runs on a connection
// without the mapping, with the small page cache and temporary files,
// and gives the connection back to the pool as it was; a lean store's
// connections are bulk ones for good, and stay so after a bulk read.
func TestBulk_ConnectionsComeBack(t *testing.T) {
	ctx := context.Background()
	short := connSetup{mmap: mmapBytes, cache: cacheKiB, temp: tempMemory}
	bulk := connSetup{mmap: 0, cache: bulkCacheKiB, temp: tempFile}
	bulkRead := connSetup{mmap: 0, cache: bulkReadCacheKiB, temp: tempFile}
	lean := connSetup{mmap: 0, cache: bulkCacheKiB, temp: tempMemory}
	write := func(t *testing.T, st *Store, opts WriteOptions, fn func(conn *sqlite.Conn)) {
		t.Helper()
		opts.Now, opts.Entropy, opts.Actor = time.Unix(1, 0), strings.NewReader(strings.Repeat("x", 64)), "tester"
		_, err := st.Write(ctx, opts, func(tx *Tx) (any, error) {
			fn(tx.Conn)
			return nil, nil
		})
		require.NoError(t, err)
	}
	for _, c := range []struct {
		name  string
		lean  bool
		usual connSetup
	}{{"Store", false, short}, {"Lean", true, lean}} {
		t.Run(c.name, func(t *testing.T) {
			// One connection, so every call below gets the same one.
			st, err := Open(ctx, filepath.Join(t.TempDir(), "awr.db"), Options{Create: true, PoolSize: 1, Lean: c.lean})
			require.NoError(t, err)
			defer st.Close()
			read := func(bulkRead bool) (got connSetup) {
				fn := func(r *Reader) error { got = setupOf(t, r.Conn); return nil }
				if bulkRead {
					require.NoError(t, st.ReadBulk(ctx, fn))
				} else {
					require.NoError(t, st.Read(ctx, fn))
				}
				return got
			}
			require.Equal(t, c.usual, read(false), "before")
			require.Equal(t, bulkRead, read(true), "in a bulk read")
			require.Equal(t, c.usual, read(false), "after a bulk read")
			write(t, st, WriteOptions{Bulk: true}, func(conn *sqlite.Conn) { require.Equal(t, bulk, setupOf(t, conn), "in a bulk write") })
			write(t, st, WriteOptions{}, func(conn *sqlite.Conn) { require.Equal(t, c.usual, setupOf(t, conn), "in a write after a bulk one") })
			require.NoError(t, st.Rebuild(ctx, nil))
			require.Equal(t, c.usual, read(false), "after a rebuild")
		})
	}
}

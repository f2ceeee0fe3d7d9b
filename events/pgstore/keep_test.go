package pgstore_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/events/pgstore"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// TestStore_KeepStatements: a store kept open (KeepStatements, as the
// MCP server opens it) runs the head's query, with which every read
// begins, prepared once on a connection, and a warm read through its cache still costs
// one round trip and still sees another machine's write committed
// before it began. A store without it prepares nothing.
func TestStore_KeepStatements(t *testing.T) {
	dbURL := newDatabase(t)
	t.Parallel()
	ctx := context.Background()
	up, err := pgstore.Open(ctx, dbURL, pgstore.Options{Project: "keep", KeepStatements: true})
	require.NoError(t, err)
	mine, err := events.Open(ctx, filepath.Join(t.TempDir(), "awr.db"), events.Options{Create: true, Upstream: up})
	if err != nil {
		up.Close()
	}
	require.NoError(t, err)
	t.Cleanup(func() { mine.Close() })
	other := cacheAt(t, dbURL, "keep", filepath.Join(t.TempDir(), "awr.db"))

	head := func() int64 {
		var rev int64
		require.NoError(t, mine.Read(ctx, func(r *events.Reader) error { rev = r.Head; return nil }))
		return rev
	}
	require.EqualValues(t, 0, head())
	_, err = cacheWrite(t, other, cacheOpts(1), "S-1")
	require.NoError(t, err)
	before := up.Traffic()
	require.EqualValues(t, 1, head(), "the other machine's write, read")
	_, err = cacheWrite(t, other, cacheOpts(2), "S-2")
	require.NoError(t, err)
	before = up.Traffic()
	require.EqualValues(t, 2, head(), "the other machine's second write, read")
	after := up.Traffic()
	// The head, then the one event after the cache's (a catch-up's scan).
	require.EqualValues(t, 2, after.RoundTrips-before.RoundTrips, "a read that catches up one event: the head and the scan, each prepared before")
	before = after
	require.EqualValues(t, 2, head())
	require.EqualValues(t, 1, up.Traffic().RoundTrips-before.RoundTrips, "a warm read: the head alone")

	prepared := func(st *pgstore.Store) int {
		conn, err := st.Pool().Acquire(ctx)
		require.NoError(t, err)
		defer conn.Release()
		var n int
		require.NoError(t, conn.QueryRow(ctx, "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE '%FROM awr_heads%'", pgx.QueryExecModeSimpleProtocol).Scan(&n))
		return n
	}
	require.GreaterOrEqual(t, prepared(up), 1, "the head's statement is prepared on the connection that read it")
	plain := open(t, dbURL, "keep")
	_, err = plain.Head(ctx)
	require.NoError(t, err)
	require.Zero(t, prepared(plain), "a store without KeepStatements prepares nothing")
}

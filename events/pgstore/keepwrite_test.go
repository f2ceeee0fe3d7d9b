package pgstore_test

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/events/pgstore"
	"github.com/awr-dev/awr/events/pgstore/pgtest"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
)

// keptCache opens a cache of project's shared log at dbURL with the store
// kept open as the MCP server keeps it (KeepStatements), on one
// connection, through the holder whose socket is in via when via is not
// empty; it returns both.
func keptCache(t *testing.T, dbURL, project, via string) (*events.Store, *pgstore.Store) {
	t.Helper()
	ctx := context.Background()
	up, err := pgstore.Open(ctx, dbURL, pgstore.Options{Project: project, KeepStatements: true, MaxConns: 1, ServerClock: true, Via: via})
	require.NoError(t, err)
	st, err := events.Open(ctx, filepath.Join(t.TempDir(), "kept.db"), events.Options{Create: true, Upstream: up})
	if err != nil {
		up.Close()
	}
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return st, up
}

// sealedPrepared returns how many statements the store's one connection
// prepared under its text (pgx's Prepare, as prepareSealed does), and
// how many times the event's insert among them ran.
func sealedPrepared(t *testing.T, up *pgstore.Store) (statements, inserts int64) {
	t.Helper()
	ctx := context.Background()
	conn, err := up.Pool().Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*), coalesce(sum(generic_plans + custom_plans) FILTER (WHERE statement LIKE 'INSERT INTO awr_events%'), 0)
		FROM pg_prepared_statements WHERE name LIKE 'stmt\_%'`, pgx.QueryExecModeSimpleProtocol).Scan(&statements, &inserts))
	return statements, inserts
}

// TestOneTrip_KeptStatements (issue #44, item 6): a store kept open
// prepares the statements of a write sealed before the lock on each
// connection as it connects, once: a warm write sends them prepared, in
// one round trip, its first on the connection included, and every
// write's insert runs the prepared statement. A write refused by the
// guard (another machine's write came first) or by its insert (a
// request id the shared log holds) still has the rest of its batch
// skipped and rolled back, and is decided again under the lock.
func TestOneTrip_KeptStatements(t *testing.T) {
	dbURL := newDatabase(t)
	t.Parallel()
	ctx := context.Background()
	a, up := keptCache(t, dbURL, "p", "")
	b := cacheAt(t, dbURL, "p", filepath.Join(t.TempDir(), "b.db"))
	statements, inserts := sealedPrepared(t, up)
	require.EqualValues(t, 7, statements, "the sealed write's statements, prepared as the connection connected")
	require.Zero(t, inserts)

	// The first write takes the lock (a cold store); the second is sealed
	// before it, its statements already prepared: one round trip.
	_, err := cacheWrite(t, a, cacheOpts(1), "S-1")
	require.NoError(t, err)
	var trips int64
	for i, id := range []string{"S-2", "S-3"} {
		trips = tripsOf(t, a, func() { _, err = cacheWrite(t, a, cacheOpts(int64(2+i)), id) })
		require.NoError(t, err)
		require.EqualValues(t, 1, trips, "a warm write with its statements prepared: one round trip")
	}
	statements, inserts = sealedPrepared(t, up)
	require.EqualValues(t, 7, statements, "prepared once on the connection")
	require.EqualValues(t, 3, inserts, "every write's insert ran prepared")
	require.EqualValues(t, 1, up.Traffic().Connections)

	// Another machine writes: the sealed write's guard refuses it, the
	// rest of its batch skipped; decided again under the lock.
	other, err := cacheWrite(t, b, cacheOpts(4), "B-1")
	require.NoError(t, err)
	var res *events.WriteResult
	trips = tripsOf(t, a, func() { res, err = cacheWrite(t, a, cacheOpts(5), "S-4") })
	require.NoError(t, err)
	require.Greater(t, trips, int64(1))
	require.EqualValues(t, 5, res.Revision)
	require.Equal(t, other.Events[0].Hash, res.Events[0].PrevHash)

	// The batch's last statement fails (the request record refused by a
	// rule the shared log's owner added): the server skips nothing left
	// but rolls back the inserts and the head's advance before it, as
	// the implicit transaction it is; the write, decided again under the
	// lock, fails the same way, nothing written.
	admin := ownerConn(t, dbURL)
	_, err = admin.Exec(ctx, "ALTER TABLE awr_requests ADD CONSTRAINT no_req_x CHECK (request_id <> 'req-x')")
	require.NoError(t, err)
	o := cacheOpts(6)
	o.RequestID, o.Fingerprint = "req-x", "fp-x"
	_, err = cacheWrite(t, a, o, "S-5")
	require.Error(t, err)
	requireHead(t, open(t, dbURL, "p"), 5)
	_, err = admin.Exec(ctx, "ALTER TABLE awr_requests DROP CONSTRAINT no_req_x")
	require.NoError(t, err)
	trips = tripsOf(t, a, func() { res, err = cacheWrite(t, a, o, "S-5") })
	require.NoError(t, err)
	require.EqualValues(t, 6, res.Revision)
	require.EqualValues(t, 1, trips, "the same write once the rule is gone: one round trip")
	requireHead(t, open(t, dbURL, "p"), 6)
	_, err = cacheWrite(t, b, cacheOpts(7), "B-2")
	require.NoError(t, err)
	var fromA, fromB []*events.Event
	_, err = b.CatchUp(ctx)
	require.NoError(t, err)
	require.NoError(t, a.Scan(ctx, 1, 100, func(e *events.Event) error { fromA = append(fromA, e); return nil }))
	require.NoError(t, b.Scan(ctx, 1, 100, func(e *events.Event) error { fromB = append(fromB, e); return nil }))
	require.Len(t, fromA, 7)
	require.Equal(t, fromA, fromB)
}

// TestOneTrip_KeptStatementsAfterMigration: the schema changes under a
// store kept open (a later awr's migration). Columns added: its
// prepared statements are planned again by the server, and a warm write
// still goes in one round trip. A column a prepared statement returns
// changes its type: that write is refused with nothing written and
// decided again under the lock, the connection is dropped, and the next
// one, prepared afresh, writes in one round trip again.
func TestOneTrip_KeptStatementsAfterMigration(t *testing.T) {
	dbURL := newDatabase(t)
	t.Parallel()
	a, up := keptCache(t, dbURL, "p", "")
	admin := ownerConn(t, dbURL)
	ctx := context.Background()
	n := int64(0)
	write := func() int64 {
		t.Helper()
		n++
		var res *events.WriteResult
		var err error
		trips := tripsOf(t, a, func() { res, err = cacheWrite(t, a, cacheOpts(n), fmt.Sprintf("S-%d", n)) })
		require.NoError(t, err)
		require.EqualValues(t, n, res.Revision)
		return trips
	}
	write()
	require.EqualValues(t, 1, write())

	_, err := admin.Exec(ctx, "ALTER TABLE awr_events ADD COLUMN note text; ALTER TABLE awr_heads ADD COLUMN note text; ALTER TABLE awr_requests ADD COLUMN note text")
	require.NoError(t, err)
	require.EqualValues(t, 1, write(), "columns added: the prepared statements planned again, one round trip")

	_, err = admin.Exec(ctx, "ALTER TABLE awr_heads ALTER COLUMN moved_at TYPE numeric")
	require.NoError(t, err)
	require.Greater(t, write(), int64(1), "the lock's result changed type: refused, decided again under the lock")
	require.EqualValues(t, 2, up.Traffic().Connections, "the stale connection dropped, another made")
	require.EqualValues(t, 1, write(), "prepared afresh: one round trip again")
	statements, _ := sealedPrepared(t, up)
	require.EqualValues(t, 7, statements)
	requireHead(t, open(t, dbURL, "p"), n)
}

// TestOneTrip_KeptStatementsViaHolder: a store kept open through a
// connection holder (Options.Via), whose connections go from one client
// to the next, prepares nothing: its warm write is sent whole, still in
// one round trip.
func TestOneTrip_KeptStatementsViaHolder(t *testing.T) {
	dbURL := newDatabase(t)
	t.Parallel()
	dir := relayTo(t, dbURL)
	a, up := keptCache(t, dbURL, "p", dir)
	require.True(t, up.Held(), "connected through the relay standing for the holder")
	for i := int64(1); i <= 3; i++ {
		trips := tripsOf(t, a, func() {
			_, err := cacheWrite(t, a, cacheOpts(i), fmt.Sprintf("S-%d", i))
			require.NoError(t, err)
		})
		if i > 1 {
			require.EqualValues(t, 1, trips, "a warm write through the holder: one round trip")
		}
	}
	statements, _ := sealedPrepared(t, up)
	require.Zero(t, statements, "through a holder, nothing prepared")
	requireHead(t, open(t, dbURL, "p"), 3)
}

// relayTo listens on a Unix socket named as a holder's (.s.PGSQL.5432)
// in a directory of its own, relaying each connection to the server of
// dbURL, until t ends; it returns the directory.
func relayTo(t *testing.T, dbURL string) string {
	t.Helper()
	cfg, err := pgconn.ParseConfig(dbURL)
	require.NoError(t, err)
	network, addr := "tcp", net.JoinHostPort(cfg.Host, fmt.Sprint(cfg.Port))
	if strings.HasPrefix(cfg.Host, "/") {
		network, addr = "unix", filepath.Join(cfg.Host, fmt.Sprintf(".s.PGSQL.%d", cfg.Port))
	}
	dir, err := filepath.Abs(t.TempDir())
	require.NoError(t, err)
	ln, err := net.Listen("unix", filepath.Join(dir, ".s.PGSQL.5432"))
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go pgtest.RelayTo(c, network, addr)
		}
	}()
	return dir
}

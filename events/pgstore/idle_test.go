package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/awr-dev/awr/events/pgstore"
	"github.com/stretchr/testify/require"
)

// TestStore_WarmReadAfterIdle: a warm store's read after its connection
// sat idle for more than a second (an agent's pause between two calls to
// a resident server) costs one round trip, as a read in a burst does: the
// pool hands the connection out without pinging it first. A connection
// the server ended while it sat idle costs a retry instead, and the read
// still answers. Slow: it waits 1.2 s twice, past the pool's old ping
// threshold (pgxpool pings a connection idle for more than a second).
func TestStore_WarmReadAfterIdle(t *testing.T) {
	dbURL := newDatabase(t)
	t.Parallel()
	ctx := context.Background()
	st, err := pgstore.Open(ctx, dbURL, pgstore.Options{Project: "idle", RetryFor: 10 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	_, err = st.Head(ctx)
	require.NoError(t, err)

	time.Sleep(1200 * time.Millisecond)
	before := st.Traffic()
	_, err = st.Head(ctx)
	require.NoError(t, err)
	after := st.Traffic()
	require.EqualValues(t, 0, after.Connections-before.Connections, "no new connection")
	require.EqualValues(t, 1, after.RoundTrips-before.RoundTrips, "a read after a second idle: the query alone, no ping before it")

	// The server ends the idle connection; the next read finds it gone,
	// and answers on a new one.
	conn, err := st.Pool().Acquire(ctx)
	require.NoError(t, err)
	pid := conn.Conn().PgConn().PID()
	conn.Release()
	var ended bool
	require.NoError(t, ownerConn(t, dbURL).QueryRow(ctx, "SELECT pg_terminate_backend($1)", pid).Scan(&ended))
	require.True(t, ended)
	time.Sleep(1200 * time.Millisecond)
	h, err := st.Head(ctx)
	require.NoError(t, err, "a read on a connection the server ended is retried on another")
	require.EqualValues(t, 0, h.Revision)
	require.GreaterOrEqual(t, st.Traffic().Connections-after.Connections, int64(1), "a new connection, for the one ended")
}

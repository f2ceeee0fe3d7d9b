package pgstore_test

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/events/pgstore"
	"github.com/awr-dev/awr/events/pgstore/pgtest"
	"github.com/awr-dev/awr/events/storetest"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// execAll runs statements on the database at dbURL as its owner.
func execAll(t *testing.T, dbURL string, stmts ...string) {
	t.Helper()
	ctx := context.Background()
	conn := ownerConn(t, dbURL)
	for _, s := range stmts {
		_, err := conn.Exec(ctx, s)
		require.NoError(t, err, s)
	}
}

// asUser is dbURL with user in place of its own.
func asUser(t *testing.T, dbURL, user string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	require.NoError(t, err)
	q := u.Query()
	q.Set("user", user)
	u.RawQuery = q.Encode()
	u.User = nil
	return u.String()
}

// startedProject opens project p on a new database holding one event,
// session s1's start (seq 1).
func startedProject(t *testing.T) (string, *pgstore.Store) {
	t.Helper()
	dbURL := newDatabase(t)
	st := open(t, dbURL, "p")
	_, err := storetest.AppendAll(context.Background(), st, writeOpts(1, t0), storetest.Started("s1"))
	require.NoError(t, err)
	return dbURL, st
}

// requireHead checks the project's head is still at rev.
func requireHead(t *testing.T, st *pgstore.Store, rev int64) {
	t.Helper()
	h, err := st.Head(context.Background())
	require.NoError(t, err)
	require.Equal(t, rev, h.Revision)
}

// TestStore_BadServers (issue #40, item 7): a read-only server (a replica
// or default_transaction_read_only), a role that may only read, and a
// schema with a table dropped: each write is Storage naming the cause
// (never ClaimConflict or a bare driver message), directly and through a
// cache, and nothing is written.
func TestStore_BadServers(t *testing.T) {
	serverURL(t)
	t.Parallel()
	ctx := context.Background()

	t.Run("ReadOnlyServer", func(t *testing.T) {
		dbURL, st := startedProject(t)
		name := strings.TrimPrefix(mustURL(t, dbURL).Path, "/")
		execAll(t, dbURL, "ALTER DATABASE "+name+" SET default_transaction_read_only = on")
		st.Close()
		st = open(t, dbURL, "p")
		_, err := storetest.AppendAll(ctx, st, writeOpts(2, t0), storetest.Started("s2"))
		requireCause(t, err, "is read-only")
		cache := cacheAt(t, dbURL, "p", filepath.Join(t.TempDir(), "c.db"))
		_, err = cacheWrite(t, cache, cacheOpts(3), "s3")
		requireCause(t, err, "is read-only")
		require.ErrorContains(t, err, "nothing was written")
		requireHead(t, st, 1)
	})
	t.Run("ReadOnlyRole", func(t *testing.T) {
		dbURL, st := startedProject(t)
		role := fmt.Sprintf("awr_reader_%d", time.Now().UnixNano())
		execAll(t, dbURL, "CREATE ROLE "+role+" LOGIN", "GRANT SELECT ON ALL TABLES IN SCHEMA public TO "+role)
		t.Cleanup(func() {
			execAll(t, dbURL, "REVOKE ALL ON ALL TABLES IN SCHEMA public FROM "+role)
			execAll(t, serverURL(t), "DROP ROLE IF EXISTS "+role)
		})
		ro := open(t, asUser(t, dbURL, role), "p")
		_, err := storetest.AppendAll(ctx, ro, writeOpts(2, t0), storetest.Started("s2"))
		requireCause(t, err, "may not write the project's log")
		require.Equal(t, role, fault.As(err).Details["user"])
		cache := cacheAt(t, asUser(t, dbURL, role), "p", filepath.Join(t.TempDir(), "c.db"))
		_, err = cacheWrite(t, cache, cacheOpts(3), "s3")
		requireCause(t, err, "may not write the project's log")
		requireHead(t, st, 1)
	})
	t.Run("DroppedTable", func(t *testing.T) {
		dbURL, st := startedProject(t)
		execAll(t, dbURL, "DROP TABLE awr_requests")
		o := writeOpts(2, t0)
		o.RequestID, o.Fingerprint = "r-1", "f"
		_, err := storetest.AppendAll(ctx, st, o, storetest.Started("s2"))
		requireCause(t, err, "schema")
		require.ErrorContains(t, err, "damaged")
		require.ErrorContains(t, err, "awr_requests")
		requireHead(t, st, 1)
		execAll(t, dbURL, "DROP TABLE awr_heads CASCADE")
		_, err = pgstore.Open(ctx, dbURL, pgstore.Options{Project: "p"})
		requireCause(t, err, "damaged")
	})
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	require.NoError(t, err)
	return u
}

// requireCause checks err is Storage (not a conflict) and names want.
func requireCause(t *testing.T, err error, want string) {
	t.Helper()
	fe := fault.As(err)
	require.NotNil(t, fe, "want a coded error, got %v", err)
	require.Equal(t, fault.Storage, fe.Code, "%v", err)
	require.Contains(t, fe.Message, want)
}

// flakyServer is a PostgreSQL front on TCP for the test's Unix-socket
// server: the first refuse connections are answered as a server in
// recovery answers them (FATAL 57P03) and closed; the rest are piped to
// the server.
type flakyServer struct {
	addr    string
	refuse  atomic.Int64
	refused atomic.Int64
}

func newFlakyServer(t *testing.T, socketDir, socketPort string, refuse int64) *flakyServer {
	t.Helper()
	f := &flakyServer{}
	f.refuse.Store(refuse)
	f.addr = pgtest.Listen(t, func(c net.Conn) {
		if f.refuse.Add(-1) >= 0 {
			f.refused.Add(1)
			pgtest.Refuse(c, "57P03", "the database system is in recovery mode")
			return
		}
		pgtest.Relay(c, filepath.Join(socketDir, ".s.PGSQL."+socketPort))
	})
	return f
}

// TestStore_RetriesPassingFailures (issue #40, item 4): a server in
// recovery (57P03) is retried with backoff within RetryFor, then fails
// with Storage naming the state; connections the server ended
// (pg_terminate_backend) are retried; with no RetryFor, 57P03 fails at
// once, still named.
func TestStore_RetriesPassingFailures(t *testing.T) {
	base := serverURL(t)
	t.Parallel()
	ctx := context.Background()
	dbURL := newDatabase(t)
	u := mustURL(t, dbURL)
	socketDir, port := u.Query().Get("host"), u.Query().Get("port")
	if socketDir == "" || !strings.HasPrefix(socketDir, "/") {
		t.Skip("the server is not on a Unix socket (.ci/pg-up's is): this test fronts it on TCP")
	}
	if port == "" {
		port = "5432"
	}
	open(t, dbURL, "p") // creates the schema
	front := func(f *flakyServer) string {
		host, p, _ := net.SplitHostPort(f.addr)
		return fmt.Sprintf("postgres://%s:%s%s?sslmode=disable&user=%s", host, p, u.Path, u.Query().Get("user"))
	}

	f := newFlakyServer(t, socketDir, port, 3)
	st, err := pgstore.Open(ctx, front(f), pgstore.Options{Project: "p", RetryFor: 20 * time.Second})
	require.NoError(t, err, "a server in recovery for three attempts is waited for")
	st.Close()
	require.EqualValues(t, 3, f.refused.Load())

	f = newFlakyServer(t, socketDir, port, 1)
	_, err = pgstore.Open(ctx, front(f), pgstore.Options{Project: "p"})
	requireCause(t, err, "in recovery")
	require.Equal(t, "57P03", fault.As(err).Details["sqlstate"])

	f = newFlakyServer(t, socketDir, port, 1<<30)
	begin := time.Now()
	_, err = pgstore.Open(ctx, front(f), pgstore.Options{Project: "p", RetryFor: 600 * time.Millisecond})
	requireCause(t, err, "in recovery")
	require.Greater(t, f.refused.Load(), int64(2), "retried with backoff")
	require.Equal(t, "600ms", fault.As(err).Details["retried_for"])
	t.Logf("gave up after %d attempts in %s", f.refused.Load(), time.Since(begin).Round(time.Millisecond))

	// Connections ended by the server between and during steps.
	st, err = pgstore.Open(ctx, dbURL, pgstore.Options{Project: "p", RetryFor: 20 * time.Second})
	require.NoError(t, err)
	defer st.Close()
	cache, err := events.Open(ctx, filepath.Join(t.TempDir(), "c.db"), events.Options{Create: true, Upstream: st})
	require.NoError(t, err)
	defer cache.Close()
	for i := range 5 {
		_, err := cacheWrite(t, cache, cacheOpts(int64(10+i)), fmt.Sprintf("t%d", i))
		require.NoError(t, err)
		conn, err := pgx.Connect(ctx, base)
		require.NoError(t, err)
		_, err = conn.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", strings.TrimPrefix(u.Path, "/"))
		conn.Close(ctx)
		require.NoError(t, err)
		_, err = cache.CatchUp(ctx)
		require.NoError(t, err, "a read after its connection was ended is retried")
	}
	requireHead(t, st, 5)
	// A write whose pooled connection was ended takes the lock on a new
	// one: nothing was sent before the lock, so it is retried.
	for i := range 3 {
		conn, err := pgx.Connect(ctx, base)
		require.NoError(t, err)
		_, err = conn.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", strings.TrimPrefix(u.Path, "/"))
		conn.Close(ctx)
		require.NoError(t, err)
		_, err = cacheWrite(t, cache, cacheOpts(int64(20+i)), fmt.Sprintf("w%d", i))
		require.NoError(t, err, "a write after its connection was ended is retried before its lock")
	}
	requireHead(t, st, 8)
}

package pgstore_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/events/pgstore"
	"github.com/awr-dev/awr/events/pgstore/pgtest"
	"github.com/awr-dev/awr/events/storetest"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// serverURL and newDatabase are pgtest's, for the tests of this package.
var (
	serverURL   = func(t *testing.T) string { return pgtest.ServerURL(t) }
	newDatabase = func(t *testing.T) string { return pgtest.NewDatabase(t) }
)

// open opens a store of project on the database at dbURL, closed when t
// ends.
func open(t *testing.T, dbURL, project string) *pgstore.Store {
	t.Helper()
	st, err := pgstore.Open(context.Background(), dbURL, pgstore.Options{Project: project})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return st
}

// ownerConn connects to the database at dbURL as its owner, beside any
// store; the connection is closed when t ends.
func ownerConn(t *testing.T, dbURL string) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close(ctx) })
	return conn
}

// pgDBs maps each test to its database, so that further opens for the same
// test are other instances on one database, as other processes are.
var pgDBs sync.Map // *testing.T -> string

func openPG(t *testing.T) events.Log {
	t.Helper()
	return open(t, testDatabase(t), "conformance")
}

// testDatabase is t's database (pgDBs), created at its first call.
func testDatabase(t *testing.T) string {
	t.Helper()
	dbURL, ok := pgDBs.Load(t)
	if !ok {
		dbURL, _ = pgDBs.LoadOrStore(t, newDatabase(t))
		t.Cleanup(func() { pgDBs.Delete(t) })
	}
	return dbURL.(string)
}

// TestStore_Conformance holds the PostgreSQL store to the event store
// contract the SQLite store passes.
func TestStore_Conformance(t *testing.T) {
	serverURL(t)
	t.Parallel()
	storetest.Exercise(t, openPG)
}

// openCache opens, as another machine would, a new SQLite cache of the
// test's project on its PostgreSQL database: its own file, caught up from
// and writing through the shared log.
func openCache(t *testing.T) events.Log {
	t.Helper()
	return cacheAt(t, testDatabase(t), "conformance", filepath.Join(t.TempDir(), "cache.db")) // a new directory per open
}

// TestCache_Conformance holds the SQLite cache of a shared PostgreSQL log
// to the same contract: every open is another machine's cache, so the
// suite's concurrent writers, conflicts and request ids run across
// machines.
func TestCache_Conformance(t *testing.T) {
	serverURL(t)
	t.Parallel()
	storetest.Exercise(t, openCache)
}

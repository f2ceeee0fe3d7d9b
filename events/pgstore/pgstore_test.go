package pgstore_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/events/pgstore"
	"github.com/awr-dev/awr/events/storetest"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// envURL names the environment variable that points the tests at a
// PostgreSQL server whose databases they may create and drop.
const envURL = "AWR_TEST_POSTGRES"

// serverURL returns the test server's URL. Without one the test skips,
// naming the command that starts a server, except in CI (CI set), where
// the PostgreSQL tests must run: there it fails.
func serverURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv(envURL)
	if u == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set, and CI is: the PostgreSQL store's tests must run in CI; .ci/run starts a cluster (.ci/pg-up) and sets it", envURL)
		}
		t.Skipf("%s is not set: start a throwaway PostgreSQL cluster with `eval \"$(.ci/pg-up)\"` from the repository root, then rerun", envURL)
	}
	return u
}

var dbCount atomic.Int64

// newDatabase creates an empty database on the test server, dropped when t
// ends, and returns its URL.
func newDatabase(t *testing.T) string {
	t.Helper()
	base := serverURL(t)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, base)
	require.NoError(t, err)
	defer admin.Close(ctx)
	name := fmt.Sprintf("awr_test_%d_%d", os.Getpid(), dbCount.Add(1))
	_, err = admin.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE template0")
	require.NoError(t, err)
	t.Cleanup(func() {
		admin, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("drop database %s: %v", name, err)
			return
		}
		defer admin.Close(ctx)
		if _, err := admin.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	u, err := url.Parse(base)
	require.NoError(t, err, "%s must be a postgres:// URL", envURL)
	u.Path = "/" + name
	return u.String()
}

// open opens a store of project on the database at dbURL, closed when t
// ends.
func open(t *testing.T, dbURL, project string) *pgstore.Store {
	t.Helper()
	st, err := pgstore.Open(context.Background(), dbURL, pgstore.Options{Project: project})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return st
}

// pgDBs maps each test to its database, so that further opens for the same
// test are other instances on one database, as other processes are.
var pgDBs sync.Map // *testing.T -> string

func openPG(t *testing.T) events.Log {
	t.Helper()
	dbURL, ok := pgDBs.Load(t)
	if !ok {
		dbURL, _ = pgDBs.LoadOrStore(t, newDatabase(t))
		t.Cleanup(func() { pgDBs.Delete(t) })
	}
	return open(t, dbURL.(string), "conformance")
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
	dbURL, ok := pgDBs.Load(t)
	if !ok {
		dbURL, _ = pgDBs.LoadOrStore(t, newDatabase(t))
		t.Cleanup(func() { pgDBs.Delete(t) })
	}
	up, err := pgstore.Open(context.Background(), dbURL.(string), pgstore.Options{Project: "conformance"})
	require.NoError(t, err)
	path := fmt.Sprintf("%s/cache-%d.db", t.TempDir(), dbCount.Add(1))
	st, err := events.Open(context.Background(), path, events.Options{Create: true, Upstream: up})
	if err != nil {
		up.Close()
	}
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return st
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

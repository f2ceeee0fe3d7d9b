package events_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/events/storetest"
	"github.com/stretchr/testify/require"
)

// TestStore_Conformance holds the SQLite store to the event store
// contract every store passes.
func TestStore_Conformance(t *testing.T) {
	t.Parallel()
	storetest.Exercise(t, openSQLite)
}

// sqliteDBs maps each test to its database, so that further opens for the
// same test are other instances on one file, as other processes are.
var sqliteDBs sync.Map // *testing.T -> string

// openSQLite opens a SQLite store on t's database, in t.TempDir() on the
// first call for t.
func openSQLite(t *testing.T) events.Log {
	t.Helper()
	path, loaded := sqliteDBs.LoadOrStore(t, filepath.Join(t.TempDir(), ".awr", "awr.db"))
	if !loaded {
		t.Cleanup(func() { sqliteDBs.Delete(t) })
	}
	st, err := events.Open(context.Background(), path.(string), events.Options{Create: true})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return st
}

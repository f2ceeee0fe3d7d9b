package pgstore

import (
	"context"
	"crypto/rand"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/events/pgstore/pgtest"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
)

// TestJoinInBulk_ConnectionBeforeTheLock: a machine joining a long log
// fills its empty cache under the cache's write lock, reading the shared
// log on a connection it took before that lock (the lock order at
// events.Store.mu), not one it asks the pool for under the lock, where
// it could wait for a writer that holds one and waits for the lock. The
// fold at the end of the join, under the lock, sees the connection held;
// a join that scanned with the pool's connections holds none by then.
func TestJoinInBulk_ConnectionBeforeTheLock(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	open := func(path string, progress func(done, total int64)) (*events.Store, *Store) {
		up, err := Open(ctx, dbURL, Options{Project: "join", MaxConns: 2})
		require.NoError(t, err)
		st, err := events.Open(ctx, path, events.Options{Create: true, Upstream: up, Projectors: projections.Projectors(), Progress: progress})
		if err != nil {
			up.Close()
		}
		require.NoError(t, err)
		t.Cleanup(func() { st.Close() })
		return st, up
	}
	a, _ := open(filepath.Join(t.TempDir(), "a.db"), nil)
	opts := events.WriteOptions{Now: time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC), Entropy: rand.Reader, Actor: "join"}
	_, err := a.Write(ctx, opts, func(tx *events.Tx) (any, error) {
		_, err := tx.Append(events.NewEvent{Stream: "source/ledger.yaml", Payload: &events.SourceIndexed{Path: "ledger.yaml", Adapter: "yaml_ledger", ContentHash: "h", Items: []events.WorkItem{{Key: "W-1"}}}})
		return nil, err
	})
	require.NoError(t, err)
	for w := range 9 {
		_, err := a.Write(ctx, opts, func(tx *events.Tx) (any, error) {
			for i := range 250 {
				id := fmt.Sprintf("S-%d-%d", w, i)
				if _, err := tx.Append(events.NewEvent{Stream: "session/" + id, Payload: events.SessionStarted{SessionID: id, Work: "W-1", Agent: "a"}}); err != nil {
					return nil, err
				}
			}
			return nil, nil
		})
		require.NoError(t, err)
	}
	var up *Store
	var folds, held atomic.Int64
	held.Store(-1)
	b, up := open(filepath.Join(t.TempDir(), "b.db"), func(done, total int64) {
		if up == nil {
			return // the open's own fold of an empty cache
		}
		folds.Add(1)
		held.CompareAndSwap(-1, int64(up.pool.Stat().AcquiredConns()))
	})
	rev, err := b.CatchUp(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 2251, rev)
	require.Positive(t, folds.Load(), "the join folded in bulk")
	require.EqualValues(t, 1, held.Load(), "connections of the shared log's pool held while the join folds under the cache's write lock")
	require.Zero(t, up.pool.Stat().AcquiredConns(), "the join gave its connection back")
}

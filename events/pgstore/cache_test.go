package pgstore_test

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/events/pgstore"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/projections"
	"github.com/awr-dev/awr/replay"
	"github.com/stretchr/testify/require"
)

// cacheAt opens the SQLite cache at path of project on the database at
// dbURL, closed when t ends.
func cacheAt(t *testing.T, dbURL, project, path string) *events.Store {
	t.Helper()
	up, err := pgstore.Open(context.Background(), dbURL, pgstore.Options{Project: project})
	require.NoError(t, err)
	st, err := events.Open(context.Background(), path, events.Options{Create: true, Upstream: up})
	if err != nil {
		up.Close()
	}
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return st
}

func cacheWrite(t *testing.T, st *events.Store, o events.WriteOptions, id string) (*events.WriteResult, error) {
	t.Helper()
	return st.Write(context.Background(), o, func(tx *events.Tx) (any, error) {
		_, err := tx.Append(events.NewEvent{Stream: "session/" + id, Payload: events.SessionStarted{SessionID: id, Work: "W-1", Agent: "a"}})
		return map[string]string{"started": id}, err
	})
}

func cacheOpts(seed int64) events.WriteOptions {
	return events.WriteOptions{Now: time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC), Entropy: rand.New(rand.NewSource(seed)), Actor: "cache-test"}
}

// TestCache_AcrossMachines: a write on one machine's cache is read on
// another's; a request retried on the other machine is the same write; a
// cache removed is built again from the shared log; a cache of another
// log is refused, not overwritten.
func TestCache_AcrossMachines(t *testing.T) {
	serverURL(t)
	t.Parallel()
	ctx := context.Background()
	dbURL := newDatabase(t)
	a := cacheAt(t, dbURL, "p", filepath.Join(t.TempDir(), "a.db"))
	bPath := filepath.Join(t.TempDir(), "b.db")
	b := cacheAt(t, dbURL, "p", bPath)

	o := cacheOpts(1)
	o.RequestID, o.Fingerprint = "req-1", "fp-1"
	first, err := cacheWrite(t, a, o, "S-1")
	require.NoError(t, err)
	require.Equal(t, int64(1), first.Revision)

	hb, err := b.Head(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(1), hb.Revision, "machine b reads machine a's write")
	require.Equal(t, first.Events[0].Hash, hb.Hash)

	o2 := cacheOpts(2)
	o2.RequestID, o2.Fingerprint = "req-1", "fp-1"
	again, err := cacheWrite(t, b, o2, "S-1")
	require.NoError(t, err)
	require.True(t, again.Replayed, "the request retried on another machine is the first write")
	require.JSONEq(t, string(first.Result), string(again.Result))
	o3 := cacheOpts(3)
	o3.RequestID, o3.Fingerprint = "req-1", "fp-other"
	_, err = cacheWrite(t, b, o3, "S-2")
	require.True(t, fault.Is(err, fault.InvalidInput), "%v", err)

	_, err = cacheWrite(t, b, cacheOpts(4), "S-2")
	require.NoError(t, err)
	ha, err := a.Head(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(2), ha.Revision)

	// Removed, the cache is built again, byte for byte.
	require.NoError(t, b.Close())
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(bPath + suffix)
	}
	b = cacheAt(t, dbURL, "p", bPath)
	var fromA, fromB []*events.Event
	require.NoError(t, a.Scan(ctx, 1, 10, func(e *events.Event) error { fromA = append(fromA, e); return nil }))
	require.NoError(t, b.Scan(ctx, 1, 10, func(e *events.Event) error { fromB = append(fromB, e); return nil }))
	require.Equal(t, fromA, fromB)

	// A cache of another project's log (q's) is refused at open, and
	// keeps what it holds.
	qPath := filepath.Join(t.TempDir(), "q.db")
	q := cacheAt(t, dbURL, "q", qPath)
	_, err = cacheWrite(t, q, cacheOpts(5), "Q-1")
	require.NoError(t, err)
	require.NoError(t, q.Close())
	up, err := pgstore.Open(ctx, dbURL, pgstore.Options{Project: "p"})
	require.NoError(t, err)
	_, err = events.Open(ctx, qPath, events.Options{Upstream: up})
	up.Close()
	require.True(t, fault.Is(err, fault.VerifyFailed), "%v", err)
	require.Contains(t, fault.As(err).Message, "mv "+qPath)

	// A shared log rewritten and re-hashed under a cache (its head row and
	// its last event replaced, as someone with the database's owner
	// rights could) is refused on read and on write: the cache is never
	// patched to agree.
	admin := ownerConn(t, dbURL)
	forged := make([]byte, events.HashSize)
	forged[0] = 0xff
	_, err = admin.Exec(ctx, "ALTER TABLE awr_events DISABLE TRIGGER USER")
	require.NoError(t, err)
	_, err = admin.Exec(ctx, "UPDATE awr_events SET hash = $1 WHERE project = 'p' AND seq = 2", forged)
	require.NoError(t, err)
	_, err = admin.Exec(ctx, "UPDATE awr_heads SET hash = $1 WHERE project = 'p'", forged)
	require.NoError(t, err)
	_, err = a.Head(ctx)
	require.True(t, fault.Is(err, fault.VerifyFailed), "%v", err)
	_, err = cacheWrite(t, a, cacheOpts(6), "S-3")
	require.True(t, fault.Is(err, fault.VerifyFailed), "%v", err)
	var head int64
	require.NoError(t, admin.QueryRow(ctx, "SELECT seq FROM awr_heads WHERE project = 'p'").Scan(&head))
	require.EqualValues(t, 2, head, "the refused write reached no log")
}

// TestCache_JoinInBulk: a machine joining a log longer than the bulk
// threshold builds its cache in one transaction (events unfolded, then one
// rebuild), and its projections are those of a machine that folded every
// event as it wrote it.
func TestCache_JoinInBulk(t *testing.T) {
	serverURL(t)
	t.Parallel()
	ctx := context.Background()
	dbURL := newDatabase(t)
	open := func(path string) *events.Store {
		up, err := pgstore.Open(ctx, dbURL, pgstore.Options{Project: "bulk"})
		require.NoError(t, err)
		st, err := events.Open(ctx, path, events.Options{Create: true, Upstream: up, Projectors: projections.Projectors()})
		if err != nil {
			up.Close()
		}
		require.NoError(t, err)
		t.Cleanup(func() { st.Close() })
		return st
	}
	a := open(filepath.Join(t.TempDir(), "a.db"))
	var items []events.WorkItem
	for i := range 7 {
		items = append(items, events.WorkItem{Key: fmt.Sprintf("W-%d", i)})
	}
	_, err := a.Write(ctx, cacheOpts(100), func(tx *events.Tx) (any, error) {
		_, err := tx.Append(events.NewEvent{Stream: "source/ledger.yaml", Payload: &events.SourceIndexed{Path: "ledger.yaml", Adapter: "yaml_ledger", ContentHash: "h", Items: items}})
		return nil, err
	})
	require.NoError(t, err)
	for w := range 10 {
		_, err := a.Write(ctx, cacheOpts(int64(w)), func(tx *events.Tx) (any, error) {
			for i := range 250 {
				id := fmt.Sprintf("S-%d-%d", w, i)
				if _, err := tx.Append(events.NewEvent{Stream: "session/" + id, Payload: events.SessionStarted{SessionID: id, Work: fmt.Sprintf("W-%d", i%7), Agent: "a"}}); err != nil {
					return nil, err
				}
			}
			return nil, nil
		})
		require.NoError(t, err)
	}
	b := open(filepath.Join(t.TempDir(), "b.db"))
	sums := func(st *events.Store) (head int64, out []replay.ProjectionChecksum) {
		require.NoError(t, st.Read(ctx, func(r *events.Reader) error {
			var err error
			head = r.Head
			out, err = replay.Checksums(r.Conn)
			return err
		}))
		return head, out
	}
	headB, sumsB := sums(b)
	headA, sumsA := sums(a)
	require.EqualValues(t, 2501, headB)
	require.Equal(t, headA, headB)
	require.Equal(t, sumsA, sumsB)
	states, err := func() (out []events.ProjectionState, err error) {
		err = b.Read(ctx, func(r *events.Reader) error {
			out, err = events.ProjectionStates(r.Conn)
			return err
		})
		return out, err
	}()
	require.NoError(t, err)
	for _, s := range states {
		require.EqualValues(t, 2501, s.LastSeq, "projection %s is at the head", s.Name)
	}
}

// TestCache_CatchUpOnce: in a context of events.CatchUpOnce, a cache's
// first read catches up (it sees another machine's write committed
// before it) and the command's later reads take the cache as it is,
// without a round trip; a new context catches up again.
func TestCache_CatchUpOnce(t *testing.T) {
	serverURL(t)
	t.Parallel()
	ctx := context.Background()
	dbURL := newDatabase(t)
	a := cacheAt(t, dbURL, "p", filepath.Join(t.TempDir(), "a.db"))
	b := cacheAt(t, dbURL, "p", filepath.Join(t.TempDir(), "b.db"))
	up := a.Upstream().(*pgstore.Store)
	head := func(ctx context.Context) (rev int64) {
		require.NoError(t, a.Read(ctx, func(r *events.Reader) error { rev = r.Head; return nil }))
		return rev
	}
	trips := func(fn func()) int64 {
		before := up.Traffic().RoundTrips
		fn()
		return up.Traffic().RoundTrips - before
	}
	require.EqualValues(t, 0, head(ctx))
	_, err := cacheWrite(t, b, cacheOpts(1), "S-1")
	require.NoError(t, err)

	once := events.CatchUpOnce(ctx)
	require.Equal(t, once, events.CatchUpOnce(once), "a context that catches up once is kept")
	var first int64
	require.Positive(t, trips(func() { first = head(once) }), "the first read asks the shared log")
	require.EqualValues(t, 1, first, "the first read sees the write committed before it")
	_, err = cacheWrite(t, b, cacheOpts(2), "S-2")
	require.NoError(t, err)
	var second int64
	require.Zero(t, trips(func() { second = head(once) }), "a later read of the same command takes the cache as it is")
	require.EqualValues(t, 1, second)
	require.EqualValues(t, 2, head(ctx), "another command catches up")
}

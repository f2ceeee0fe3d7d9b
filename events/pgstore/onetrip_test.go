package pgstore_test

import (
	"context"
	crand "crypto/rand"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/events/pgstore"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// tripsOf returns what fn cost st's shared log in round trips.
func tripsOf(t *testing.T, st *events.Store, fn func()) int64 {
	t.Helper()
	up, ok := st.Upstream().(*pgstore.Store)
	require.True(t, ok)
	before := up.Traffic().RoundTrips
	fn()
	return up.Traffic().RoundTrips - before
}

// TestOneTrip_StaleHeadRedone (issue #44, item 6): a warm cache's write
// is sealed on the cache's head and sent with the lock in one round
// trip. When another machine appended meanwhile, the shared log refuses
// it as sealed, nothing written, and the write is decided again under
// the lock: it continues the other machine's event. A request id the
// other machine used is answered as its repeat; a log fenced meanwhile
// refuses the write, as under the lock.
func TestOneTrip_StaleHeadRedone(t *testing.T) {
	serverURL(t)
	t.Parallel()
	ctx := context.Background()
	dbURL := newDatabase(t)
	a := cacheAt(t, dbURL, "p", filepath.Join(t.TempDir(), "a.db"))
	b := cacheAt(t, dbURL, "p", filepath.Join(t.TempDir(), "b.db"))

	// The first write takes the lock (a cold store: it has not read the
	// shared clock); the second prepares the one-trip statements.
	for i, id := range []string{"S-1", "S-2"} {
		_, err := cacheWrite(t, a, cacheOpts(int64(1+i)), id)
		require.NoError(t, err)
	}
	var err error
	trips := tripsOf(t, a, func() { _, err = cacheWrite(t, a, cacheOpts(3), "S-3") })
	require.NoError(t, err)
	require.EqualValues(t, 1, trips, "a warm cache's write: the lock, the check and the commit together")

	other, err := cacheWrite(t, b, cacheOpts(4), "B-1")
	require.NoError(t, err)
	require.EqualValues(t, 4, other.Revision)

	var res *events.WriteResult
	trips = tripsOf(t, a, func() { res, err = cacheWrite(t, a, cacheOpts(5), "S-4") })
	require.NoError(t, err)
	require.Greater(t, trips, int64(1), "the write sealed on revision 3 was refused, then decided under the lock")
	t.Logf("a write sealed on a stale head: %d round trips", trips)
	require.EqualValues(t, 5, res.Revision)
	require.Len(t, res.Events, 1)
	require.Equal(t, other.Events[0].Hash, res.Events[0].PrevHash, "the write continues the other machine's event")
	trips = tripsOf(t, a, func() { _, err = cacheWrite(t, a, cacheOpts(6), "S-5") })
	require.NoError(t, err)
	require.EqualValues(t, 1, trips, "caught up, the cache writes in one round trip again")

	// A request id the other machine used: this cache does not hold its
	// record, the shared log does.
	o := cacheOpts(7)
	o.RequestID, o.Fingerprint = "req-b", "fp-b"
	first, err := cacheWrite(t, b, o, "B-2")
	require.NoError(t, err)
	o = cacheOpts(8)
	o.RequestID, o.Fingerprint = "req-b", "fp-b"
	again, err := cacheWrite(t, a, o, "B-2")
	require.NoError(t, err)
	require.True(t, again.Replayed, "the repeat is answered, not written again")
	require.JSONEq(t, string(first.Result), string(again.Result))
	o = cacheOpts(9)
	o.RequestID, o.Fingerprint = "req-b", "fp-other"
	_, err = cacheWrite(t, a, o, "B-3")
	require.True(t, fault.Is(err, fault.InvalidInput), "%v", err)

	// Every machine's events, once each, in one chain.
	var fromA, fromB []*events.Event
	_, err = b.CatchUp(ctx)
	require.NoError(t, err)
	require.NoError(t, a.Scan(ctx, 1, 100, func(e *events.Event) error { fromA = append(fromA, e); return nil }))
	require.NoError(t, b.Scan(ctx, 1, 100, func(e *events.Event) error { fromB = append(fromB, e); return nil }))
	require.Len(t, fromA, 7)
	require.Equal(t, fromA, fromB)

	// Fenced meanwhile (another checkout moved the log out): refused,
	// nothing written.
	_, err = cacheWrite(t, a, cacheOpts(10), "S-6")
	require.NoError(t, err)
	mover := cacheAt(t, dbURL, "p", filepath.Join(t.TempDir(), "m.db"))
	_, err = mover.Detach(ctx, func(*events.Tx, events.Head) error { return nil })
	require.NoError(t, err)
	_, err = cacheWrite(t, a, cacheOpts(11), "S-7")
	require.True(t, fault.Is(err, fault.InvalidTransition), "%v", err)
	require.ErrorContains(t, err, "nothing was written")
	direct := open(t, dbURL, "p")
	requireHead(t, direct, 8)
}

// TestOneTrip_WarmWritersUnderTerminations: three machines' warm caches,
// two writers each, write at once while the server ends every
// connection again and again (pg_terminate_backend): their writes go in
// one round trip, are refused when another machine's came first or the
// lock is held, are decided again under the lock, and lose their answer
// when a connection ends mid-batch. Every acknowledged write is in the
// shared log exactly once; a write that failed is there at most once,
// and only when its error said it may have been committed; every cache
// holds the same chain; a write that failed saying nothing was written
// is not there. Slow: 156 writes of three machines under terminations,
// 2-4 s.
func TestOneTrip_WarmWritersUnderTerminations(t *testing.T) {
	base := serverURL(t)
	t.Parallel()
	ctx := context.Background()
	dbURL := newDatabase(t)
	const machines, writers, writes = 3, 2, 25
	caches := make([]*events.Store, machines)
	for m := range caches {
		up, err := pgstore.Open(ctx, dbURL, pgstore.Options{Project: "p", RetryFor: 20 * time.Second})
		require.NoError(t, err)
		st, err := events.Open(ctx, filepath.Join(t.TempDir(), fmt.Sprintf("m%d.db", m)), events.Options{Create: true, Upstream: up})
		if err != nil {
			up.Close()
		}
		require.NoError(t, err)
		t.Cleanup(func() { st.Close() })
		caches[m] = st
		// Warm: it has held the lock once.
		_, err = cacheWrite(t, st, cacheOpts(int64(m)), fmt.Sprintf("warm-%d", m))
		require.NoError(t, err)
	}
	terminate := func() {
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			return
		}
		defer conn.Close(ctx)
		conn.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", strings.TrimPrefix(mustURL(t, dbURL).Path, "/"))
	}
	type outcome struct {
		id      string
		err     error
		replied bool
	}
	results := make(chan outcome, machines*writers*writes)
	var wg sync.WaitGroup
	for m, st := range caches {
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range writes {
					if m == 0 && w == 0 && i%5 == 4 {
						terminate()
					}
					id := fmt.Sprintf("m%d-w%d-%d", m, w, i)
					o := events.WriteOptions{Now: time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC), Entropy: crand.Reader, Actor: "writer",
						RequestID: "req-" + id, Fingerprint: id}
					_, err := st.Write(ctx, o, func(tx *events.Tx) (any, error) {
						_, err := tx.Append(events.NewEvent{Stream: "session/" + id, Payload: events.SessionStarted{SessionID: id, Work: "W-1", Agent: "a"}})
						return nil, err
					})
					results <- outcome{id: id, err: err, replied: err == nil}
				}
			}()
		}
	}
	wg.Wait()
	close(results)

	var heads []int64
	var logs [][]*events.Event
	for _, st := range caches {
		h, err := st.CatchUp(ctx)
		require.NoError(t, err, "every cache continues the shared log")
		heads = append(heads, h)
		var evs []*events.Event
		require.NoError(t, st.Scan(ctx, 1, h, func(e *events.Event) error { evs = append(evs, e); return nil }))
		logs = append(logs, evs)
	}
	for m := 1; m < machines; m++ {
		require.Equal(t, logs[0], logs[m], "machine %d holds the same chain", m)
	}
	count := map[string]int{}
	for _, e := range logs[0] {
		count[strings.TrimPrefix(e.RequestID, "req-")]++
	}
	acked, failed, unknown := 0, 0, 0
	for r := range results {
		switch {
		case r.replied:
			acked++
			require.Equal(t, 1, count[r.id], "%s: acknowledged, in the log once", r.id)
		case strings.Contains(r.err.Error(), "may have been committed"):
			unknown++
			require.True(t, fault.Is(r.err, fault.Storage), "%s: %v", r.id, r.err)
			require.LessOrEqual(t, count[r.id], 1, r.id)
		default:
			failed++
			require.True(t, fault.Is(r.err, fault.Storage), "%s: %v", r.id, r.err)
			require.Contains(t, r.err.Error(), "nothing was written", r.id)
			require.Zero(t, count[r.id], "%s: failed, saying nothing was written: %v", r.id, r.err)
		}
	}
	t.Logf("%d writes acknowledged, %d failed (nothing written), %d with their answer lost; the log holds %d events", acked, failed, unknown, heads[0])
	require.Positive(t, acked)
}

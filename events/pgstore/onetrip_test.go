package pgstore_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/events/pgstore"
	"github.com/awr-dev/awr/internal/fault"
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

package bench_test

import (
	"context"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fixtures/testkit"
	"github.com/awr-dev/awr/internal/lab/bench"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
)

// TestLiveClaimAt_HeadEqualsAt: at the head, LiveClaimAt reads only the
// unexpired current claims; it must answer what the read at a revision
// (every held version alive then) answers, for every work item and for
// readers at any clock, on a history where most leases lapsed held.
func TestLiveClaimAt_HeadEqualsAt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := history(t, 12, 4, bench.GenerateOptions{Events: int64(testkit.Size(3000, 1000)), Seed: 4, Batch: 60})
	require.NoError(t, st.Read(ctx, func(r *events.Reader) error {
		items, err := projections.WorkItemsAt(r.Conn, r.Head, true)
		require.NoError(t, err)
		var nows []int64
		for _, rev := range []int64{1, r.Head / 2, r.Head * 9 / 10, r.Head} {
			now, err := events.EventTime(r.Conn, rev)
			require.NoError(t, err)
			nows = append(nows, now-1, now, now+60_000, now+3_600_000)
		}
		nows = append(nows, 0, 1<<62)
		// And either side of every current lease's expiry.
		held, err := projections.HeldClaimsAt(r.Conn, r.Head, true)
		require.NoError(t, err)
		require.NotEmpty(t, held)
		for _, c := range held {
			nows = append(nows, c.ExpiresAt-1, c.ExpiresAt)
		}
		live := 0
		for _, it := range items {
			for _, now := range nows {
				want, err := projections.LiveClaimAt(r.Conn, it.Key, r.Head, now, false)
				require.NoError(t, err)
				got, err := projections.LiveClaimAt(r.Conn, it.Key, r.Head, now, true)
				require.NoError(t, err)
				require.Equal(t, want, got, "%s at now %d", it.Key, now)
				if got != nil {
					live++
				}
			}
		}
		require.Positive(t, live, "no live claim was compared")
		return nil
	}))
}

package idle

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// TestSearchAfter: the gallop from the tail finds what a scan of the
// whole log finds, for any non-decreasing times and any t, reads no seq
// outside [1, rev], reads one event when the whole log is older than t,
// and passes a read's error on.
func TestSearchAfter(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(0, 300).Draw(rt, "events")
		times := make([]int64, n+1) // times[seq], seq from 1
		at := rapid.Int64Range(0, 10).Draw(rt, "first")
		for seq := 1; seq <= n; seq++ {
			at += rapid.Int64Range(0, 3).Draw(rt, "gap")
			times[seq] = at
		}
		limit := rapid.Int64Range(-2, at+2).Draw(rt, "t")
		want := int64(n + 1)
		for seq := 1; seq <= n; seq++ {
			if times[seq] > limit {
				want = int64(seq)
				break
			}
		}
		reads := 0
		got, err := searchAfter(int64(n), limit, func(seq int64) (int64, error) {
			reads++
			if seq < 1 || seq > int64(n) {
				rt.Fatalf("read seq %d outside [1, %d]", seq, n)
			}
			return times[seq], nil
		})
		require.NoError(rt, err)
		require.Equal(rt, want, got)
		if n > 0 && times[n] <= limit {
			require.Equal(rt, 1, reads, "the whole log is older than t")
		}
	})
	boom := errors.New("boom")
	_, err := searchAfter(100, 5, func(int64) (int64, error) { return 0, boom })
	require.ErrorIs(t, err, boom)
}

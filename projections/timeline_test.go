package projections_test

import (
	"context"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
)

// timelineLog is five events, the one at seq s at t0 + s seconds: two
// items, s1 on W-1 from 2 to 4, s2 on W-2 from 3, s3 on W-1 from 5.
func timelineLog(t *testing.T) *events.Store {
	t.Helper()
	return logOf(t, declare("W-1", "W-2"), start("s1", "W-1"), start("s2", "W-2"),
		end("s1", "W-1", events.OutcomeInterrupted), start("s3", "W-1"))
}

// TestLanesAt: each lane's sessions counted per interval of seqs, its
// spans, the page and the grouping, at the head and at a past revision.
func TestLanesAt(t *testing.T) {
	t.Parallel()
	st := timelineLog(t)
	w1 := projections.Lane{Key: "W-1", Sessions: 2, Open: 1, FirstSeq: 2, LastSeq: 5, Active: []int{0, 1, 1, 1, 1},
		Spans: []projections.LaneSpan{{Session: "s1", Agent: "ag-s1", Work: "W-1", From: 2, To: 4}, {Session: "s3", Agent: "ag-s3", Work: "W-1", From: 5}}}
	w2 := projections.Lane{Key: "W-2", Sessions: 1, Open: 1, FirstSeq: 3, LastSeq: 3, Active: []int{0, 0, 1, 1, 1},
		Spans: []projections.LaneSpan{{Session: "s2", Agent: "ag-s2", Work: "W-2", From: 3}}}
	cases := []struct {
		name                          string
		rev                           int64
		by                            string
		buckets, offset, limit, total int
		want                          []projections.Lane
	}{
		{name: "ByWork", rev: 5, by: "work", buckets: 5, limit: 10, total: 2, want: []projections.Lane{w1, w2}},
		{name: "Page", rev: 5, by: "work", buckets: 5, offset: 1, limit: 1, total: 2, want: []projections.Lane{w2}},
		{name: "PastTheEnd", rev: 5, by: "work", buckets: 5, offset: 2, limit: 1, total: 2},
		{name: "BySession", rev: 5, by: "session", buckets: 1, offset: 2, limit: 5, total: 3, want: []projections.Lane{
			{Key: "s3", Sessions: 1, Open: 1, FirstSeq: 5, LastSeq: 5, Active: []int{1}, Spans: []projections.LaneSpan{{Session: "s3", Agent: "ag-s3", Work: "W-1", From: 5}}}}},
		{name: "Past", rev: 3, by: "agent", buckets: 3, limit: 5, total: 2, want: []projections.Lane{
			{Key: "ag-s1", Sessions: 1, Open: 1, FirstSeq: 2, LastSeq: 2, Active: []int{0, 1, 1}, Spans: []projections.LaneSpan{{Session: "s1", Agent: "ag-s1", Work: "W-1", From: 2}}},
			{Key: "ag-s2", Sessions: 1, Open: 1, FirstSeq: 3, LastSeq: 3, Active: []int{0, 0, 1}, Spans: []projections.LaneSpan{{Session: "s2", Agent: "ag-s2", Work: "W-2", From: 3}}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.NoError(t, st.Read(context.Background(), func(r *events.Reader) error {
				total, lanes, err := projections.LanesAt(r.Conn, c.rev, c.by, c.buckets, c.offset, c.limit)
				require.NoError(t, err)
				require.Equal(t, c.total, total)
				require.Equal(t, c.want, lanes)
				return nil
			}))
		})
	}
}

// TestSeekTimeAndHistogramAt: the first event at or after a time, and
// events per interval of time, found by binary search over seqs.
func TestSeekTimeAndHistogramAt(t *testing.T) {
	t.Parallel()
	st := timelineLog(t)
	at := func(s int64) int64 { return t0.UnixMilli() + s*1000 }
	require.NoError(t, st.Read(context.Background(), func(r *events.Reader) error {
		for _, c := range []struct {
			rev, t, seq, at int64
		}{
			{rev: 5, t: 0, seq: 1, at: at(1)},
			{rev: 5, t: at(2) + 500, seq: 3, at: at(3)},
			{rev: 5, t: at(5), seq: 5, at: at(5)},
			{rev: 5, t: at(5) + 1},
			{rev: 2, t: at(3)},
		} {
			seq, when, err := projections.SeekTime(r.Conn, c.rev, c.t)
			require.NoError(t, err)
			require.Equal(t, [2]int64{c.seq, c.at}, [2]int64{seq, when}, "rev %d, t %d", c.rev, c.t)
		}
		// From the first event to just past the last: [1s, 3s) holds
		// seqs 1 and 2, [3s, 5.001s) seqs 3 to 5.
		from, to, bs, err := projections.HistogramAt(r.Conn, 5, 0, 0, 2)
		require.NoError(t, err)
		require.Equal(t, [2]int64{at(1), at(5) + 1}, [2]int64{from, to})
		require.Equal(t, []projections.HistogramBucket{
			{Start: at(1), End: at(1) + 2000, Count: 2, FirstSeq: 1},
			{Start: at(1) + 2000, End: at(5) + 1, Count: 3, FirstSeq: 3},
		}, bs)
		// An interval with no event, and one at a past revision.
		_, _, bs, err = projections.HistogramAt(r.Conn, 3, at(4), at(6), 2)
		require.NoError(t, err)
		require.Equal(t, []projections.HistogramBucket{{Start: at(4), End: at(5)}, {Start: at(5), End: at(6)}}, bs)
		return nil
	}))
}

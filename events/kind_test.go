package events_test

import (
	"context"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/stretchr/testify/require"
)

// TestKindLookups_SeekTheIndex: the latest event of a kind on a stream
// (a session's session_ended, a work item's latest claim_acquired) is one
// seek of events_stream_kind, never a walk of the stream, so its cost
// does not grow with the stream's length (issue #17: a checkpoint on a
// session with 5,000 checkpoints walked them all).
func TestKindLookups_SeekTheIndex(t *testing.T) {
	st, _ := openStore(t)
	for _, name := range []string{"stream_last_of_kind", "stream_kind_desc"} {
		t.Run(name, func(t *testing.T) {
			require.NotEmpty(t, events.Statement(name))
			err := st.Read(context.Background(), func(r *events.Reader) error {
				plan, err := events.QueryPlan(r.Conn, events.Statement(name))
				require.NoError(t, err)
				require.Len(t, plan, 1, "%q", plan)
				require.True(t, strings.HasPrefix(plan[0], "SEARCH events USING INDEX events_stream_kind (stream=? AND kind=?"), "%q", plan)
				return nil
			})
			require.NoError(t, err)
		})
	}
}

// TestLastSeqsOfKinds_SeekTheIndex: the seqs of the latest events of two
// kinds on a stream (a session's start and end, read before every write
// to it) are one seek of events_stream_kind each (the index alone: no row
// is read), and LastSeqsOfKinds gives the seqs LastOfKind gives, 0 where
// there is none; the latest events of three kinds (a work item's latest
// claim, release and renewal, read before every claim) are one seek each
// too, and LastOfKinds gives the events LastOfKind gives.
func TestLastSeqsOfKinds_SeekTheIndex(t *testing.T) {
	st, _ := openStore(t)
	ctx := context.Background()
	err := st.Read(ctx, func(r *events.Reader) error {
		plan, err := events.QueryPlan(r.Conn, events.Statement("stream_last_seqs_of_kinds"))
		require.NoError(t, err)
		seeks := 0
		for _, step := range plan {
			if strings.Contains(step, "events") {
				require.True(t, strings.HasPrefix(step, "SEARCH events USING COVERING INDEX events_stream_kind (stream=? AND kind=?"), "%q", plan)
				seeks++
			}
		}
		require.Equal(t, 2, seeks, "%q", plan)
		plan, err = events.QueryPlan(r.Conn, events.Statement("stream_last_of_three_kinds"))
		require.NoError(t, err)
		seeks = 0
		for _, step := range plan {
			if strings.Contains(step, "events") {
				require.True(t, strings.HasPrefix(step, "SEARCH events USING INDEX events_stream_kind (stream=? AND kind=?"), "%q", plan)
				seeks++
			}
		}
		require.Equal(t, 3, seeks, "%q", plan)
		return nil
	})
	require.NoError(t, err)
	_, err = st.Write(ctx, events.WriteOptions{Now: time.UnixMilli(1000), Entropy: rand.New(rand.NewSource(1)), Actor: "t"}, func(tx *events.Tx) (any, error) {
		for _, ne := range []events.NewEvent{
			{Stream: "session/s1", Payload: events.SessionStarted{SessionID: "s1", Work: "T-1", Agent: "a"}},
			{Stream: "session/s2", Payload: events.SessionStarted{SessionID: "s2", Work: "T-1", Agent: "a"}},
			{Stream: "session/s1", Payload: events.SessionEnded{SessionID: "s1", Outcome: events.OutcomeCompleted}},
		} {
			if _, err := tx.Append(ne); err != nil {
				return nil, err
			}
		}
		return nil, nil
	})
	require.NoError(t, err)
	err = st.Read(ctx, func(r *events.Reader) error {
		for _, stream := range []string{"session/s1", "session/s2", "session/none"} {
			a, b, err := events.LastSeqsOfKinds(r.Conn, stream, events.KindSessionStarted, events.KindSessionEnded)
			require.NoError(t, err)
			for kind, got := range map[events.Kind]int64{events.KindSessionStarted: a, events.KindSessionEnded: b} {
				e, err := events.LastOfKind(r.Conn, stream, kind, 0)
				require.NoError(t, err)
				var want int64
				if e != nil {
					want = e.Seq
				}
				require.Equal(t, want, got, "%s %s", stream, kind)
			}
		}
		a, b, err := events.LastSeqsOfKinds(r.Conn, "session/s1", events.KindSessionStarted, events.KindSessionEnded)
		require.NoError(t, err)
		require.Less(t, a, b)
		require.NotZero(t, a)
		// LastOfKinds gives each kind's latest event whole, as LastOfKind
		// does, nil for a kind the stream lacks, whatever the order asked.
		for _, kinds := range [][3]events.Kind{
			{events.KindSessionStarted, events.KindSessionEnded, events.KindCheckpointRecorded},
			{events.KindCheckpointRecorded, events.KindSessionEnded, events.KindSessionStarted},
		} {
			for _, stream := range []string{"session/s1", "session/s2", "session/none"} {
				got, err := events.LastOfKinds(r.Conn, stream, kinds)
				require.NoError(t, err)
				for i, kind := range kinds {
					want, err := events.LastOfKind(r.Conn, stream, kind, 0)
					require.NoError(t, err)
					require.Equal(t, want, got[i], "%s %s", stream, kind)
				}
			}
		}
		return nil
	})
	require.NoError(t, err)
}

// TestStreamsBetween_ReadsTheRange: the streams of a seq range are read
// from that range of the table (a prefix on the stream must not turn it
// into a walk of a stream index).
func TestStreamsBetween_ReadsTheRange(t *testing.T) {
	st, _ := openStore(t)
	err := st.Read(context.Background(), func(r *events.Reader) error {
		plan, err := events.QueryPlan(r.Conn, events.Statement("streams_between"))
		require.NoError(t, err)
		require.Equal(t, []string{"SEARCH events USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"}, plan)
		return nil
	})
	require.NoError(t, err)
}

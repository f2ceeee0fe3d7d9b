package events_test

import (
	"context"
	"strings"
	"testing"

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

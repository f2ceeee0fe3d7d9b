package projections_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
	"zombiezen.com/go/sqlite"
)

const worklogRows = `SELECT work, seq, kind FROM p_work_log ORDER BY work, seq`

// readWorklog renders, at rev, W-1's events newest first (seq:kind).
func readWorklog(t *testing.T, conn *sqlite.Conn, rev int64) string {
	t.Helper()
	evs, err := projections.WorkEventsAt(conn, "W-1", "", rev, -1)
	require.NoError(t, err)
	var out []string
	for _, e := range evs {
		out = append(out, fmt.Sprintf("%d:%s", e.Seq, e.Kind))
	}
	return strings.Join(out, " ")
}

// TestWorklog_Apply: every event that names a work item is filed under
// it, and nothing else is.
func TestWorklog_Apply(t *testing.T) {
	t.Parallel()
	applyTable(t, worklogRows, readWorklog, []applyCase{
		{
			name: "SessionLifeOnOneItem",
			log: []events.Payload{
				declare("W-1"), start("s1", "W-1"), acquire("c1", "W-1", "s1", 1, 10),
				&events.ClaimRenewed{ClaimID: "c1", Work: "W-1", SessionID: "s1", ExpiresAt: ms(20), TTLms: 15000},
				compiled("s1", "W-1", "h1"), checkpoint("s1", "W-1", "d1"), bind("claude:abc", "s1", "W-1", ""),
				&events.RestatementChecked{SessionID: "s1", Work: "W-1", Verdict: "ok"},
				release("c1", "W-1", "s1", events.ReleaseSessionEnd), end("s1", "W-1", events.OutcomeCompleted),
			},
			rows: []string{
				"W-1 2 session_started",
				"W-1 3 claim_acquired",
				"W-1 4 claim_renewed",
				"W-1 5 context_compiled",
				"W-1 6 checkpoint_recorded",
				"W-1 7 client_bound",
				"W-1 8 restatement_checked",
				"W-1 9 claim_released",
				"W-1 10 session_ended",
			},
			at: map[int64]string{
				1:  "",
				4:  "4:claim_renewed 3:claim_acquired 2:session_started",
				10: "10:session_ended 9:claim_released 8:restatement_checked 7:client_bound 6:checkpoint_recorded 5:context_compiled 4:claim_renewed 3:claim_acquired 2:session_started",
			},
		},
		{
			name: "TwoItemsInterleaved",
			log: []events.Payload{
				declare("W-1", "W-2"), start("s1", "W-1"), start("s2", "W-2"),
				checkpoint("s2", "W-2", "e1"), checkpoint("s1", "W-1", "d1"),
				&events.SessionResumed{SessionID: "s2", FromSession: "s1", Work: "W-2"},
			},
			rows: []string{
				"W-1 2 session_started",
				"W-1 5 checkpoint_recorded",
				"W-2 3 session_started",
				"W-2 4 checkpoint_recorded",
				"W-2 6 session_resumed",
			},
			at: map[int64]string{
				3: "2:session_started",
				6: "5:checkpoint_recorded 2:session_started",
			},
		},
		{
			name: "EvidenceAndVerification",
			log: []events.Payload{
				declare("W-1"), start("s1", "W-1"),
				&events.EvidenceRecorded{EvidenceID: "ev1", Work: "W-1", Criterion: "tests pass", Basis: "command", Level: "ran", Passed: true},
				&events.WorkVerified{Work: "W-1", SessionID: "s1", Level: "ran"},
			},
			rows: []string{
				"W-1 2 session_started",
				"W-1 3 evidence_recorded",
				"W-1 4 work_verified",
			},
			at: map[int64]string{
				4: "4:work_verified 3:evidence_recorded 2:session_started",
			},
		},
		{
			name: "NoWorkItemNoEntry",
			log: []events.Payload{
				declare("W-1"),
				&events.SeatDeclared{Address: "dev@r", Role: "dev", Rig: "r", Runtime: events.RuntimeGeneric, Work: "W-1", Policy: events.PolicyResumeIfPossible},
				&events.RigSnapshotTaken{SnapshotID: "snap", Rig: "r", Seats: []events.SnapshotSeat{}},
			},
			at: map[int64]string{
				3: "",
			},
		},
	})
}

// TestWorklog_Reads: the reads filter by kind and limit, the latest
// checkpoints come oldest first, and the history adds the source_indexed
// events that changed the item.
func TestWorklog_Reads(t *testing.T) {
	t.Parallel()
	st := logOf(t,
		declare("W-1", "W-2"),         // 1
		start("s1", "W-1"),            // 2
		checkpoint("s1", "W-1", "d1"), // 3
		start("s2", "W-2"),            // 4
		checkpoint("s1", "W-1", "d2"), // 5
		checkpoint("s2", "W-2", "e1"), // 6
		checkpoint("s1", "W-1", "d3"), // 7
		index("tasks.md", "h2", events.WorkItem{Key: "W-1", Title: "Do W-1", Status: "done"}, events.WorkItem{Key: "W-2", Title: "Do W-2", Status: "todo"}), // 8
	)
	read(t, st, func(conn *sqlite.Conn) {
		seqs := func(evs []*events.Event) []int64 {
			var out []int64
			for _, e := range evs {
				out = append(out, e.Seq)
			}
			return out
		}
		evs, err := projections.WorkEventsAt(conn, "W-1", events.KindCheckpointRecorded, 8, 2)
		require.NoError(t, err)
		require.Equal(t, []int64{7, 5}, seqs(evs))
		evs, err = projections.WorkEventsAt(conn, "W-1", events.KindCheckpointRecorded, 6, -1)
		require.NoError(t, err)
		require.Equal(t, []int64{5, 3}, seqs(evs))

		cps, err := projections.LatestCheckpointsOfWorkAt(conn, "W-1", 8, 2)
		require.NoError(t, err)
		require.Equal(t, []string{"d2", "d3"}, []string{cps[0].Digest, cps[1].Digest})

		hist, err := projections.WorkHistoryAt(conn, "W-1", 0, 8, nil, 100)
		require.NoError(t, err)
		require.Equal(t, []int64{1, 2, 3, 5, 7, 8}, seqs(hist), "the item's events and the indexes that changed it")
		hist, err = projections.WorkHistoryAt(conn, "W-2", 4, 8, nil, 100)
		require.NoError(t, err)
		require.Equal(t, []int64{6}, seqs(hist), "W-2 did not change at 8")
		hist, err = projections.WorkHistoryAt(conn, "W-1", 0, 8, []string{string(events.KindSessionStarted), string(events.KindSourceIndexed)}, 100)
		require.NoError(t, err)
		require.Equal(t, []int64{1, 2, 8}, seqs(hist))
		hist, err = projections.WorkHistoryAt(conn, "W-1", 0, 8, nil, 2)
		require.NoError(t, err)
		require.Equal(t, []int64{1, 2}, seqs(hist))
	})
}

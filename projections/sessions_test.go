package projections_test

import (
	"context"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
	"zombiezen.com/go/sqlite"
)

const sessionRows = `SELECT session_id, work, agent, provider, model, status, outcome, started_at, start_revision, ended_at,
	predecessor_id, successor_id, work_nth, ended_revision, end_nth, valid_from, valid_to, lvl, node
	FROM p_sessions ORDER BY session_id, valid_from`

// readSessions renders SessionsAt(rev) as "id status outcome pred>succ @revision"
// separated by "; ".
func readSessions(t *testing.T, conn *sqlite.Conn, rev int64) string {
	t.Helper()
	all, err := projections.SessionsAt(conn, rev, "")
	return joinRows(t, all, err, func(s projections.Session) string {
		return fmt.Sprintf("%s %s %s %s>%s @%d", s.ID, s.Status, s.Outcome, s.PredecessorID, s.SuccessorID, s.Revision)
	})
}

func start(id, work string) *events.SessionStarted {
	return &events.SessionStarted{SessionID: id, Work: work, Agent: "ag-" + id, Provider: "anthropic", Model: "m1"}
}

func end(id, work, outcome string) *events.SessionEnded {
	return &events.SessionEnded{SessionID: id, Work: work, Outcome: outcome}
}

// TestSessions_Apply: session_started opens a version, session_resumed
// links predecessor and successor, session_ended closes it; every change
// closes the old version at its seq and stamps the closed interval.
func TestSessions_Apply(t *testing.T) {
	t.Parallel()
	applyTable(t, sessionRows, readSessions, []applyCase{
		{
			name: "Started",
			log:  []events.Payload{declare("W-1"), start("s1", "W-1")},
			rows: []string{
				"s1 W-1 ag-s1 anthropic m1 active '' t+2 2 0 '' '' 1 0 0 2 - - -",
			},
			at: map[int64]string{
				1: "",
				2: "s1 active  > @2",
			},
		},
		{
			name: "StartedThenEnded",
			log:  []events.Payload{declare("W-1"), start("s1", "W-1"), end("s1", "W-1", events.OutcomeCompleted)},
			rows: []string{
				"s1 W-1 ag-s1 anthropic m1 active '' t+2 2 0 '' '' 1 0 0 2 3 0 2",
				"s1 W-1 ag-s1 anthropic m1 ended completed t+2 2 t+3 '' '' 1 3 1 3 - - -",
			},
			at: map[int64]string{
				2: "s1 active  > @2",
				3: "s1 ended completed > @3",
			},
		},
		{
			name: "ResumedLinksBoth",
			log: []events.Payload{
				declare("W-1"),
				start("s1", "W-1"),
				end("s1", "W-1", events.OutcomeInterrupted),
				&events.SessionStarted{SessionID: "s2", Work: "W-1", Agent: "ag-s2", PredecessorID: "s1"},
				&events.SessionResumed{SessionID: "s2", FromSession: "s1", Work: "W-1"},
			},
			rows: []string{
				"s1 W-1 ag-s1 anthropic m1 active '' t+2 2 0 '' '' 1 0 0 2 3 0 2",
				"s1 W-1 ag-s1 anthropic m1 ended interrupted t+2 2 t+3 '' '' 1 3 1 3 5 3 0",
				"s1 W-1 ag-s1 anthropic m1 ended interrupted t+2 2 t+3 '' s2 1 3 1 5 - - -",
				"s2 W-1 ag-s2 '' '' active '' t+4 4 0 s1 '' 2 0 0 4 5 0 4",
				"s2 W-1 ag-s2 '' '' active '' t+4 4 0 s1 '' 2 0 0 5 - - -",
			},
			at: map[int64]string{
				4: "s1 ended interrupted > @3; s2 active  s1> @4",
				5: "s1 ended interrupted >s2 @5; s2 active  s1> @5",
			},
		},
		{
			name: "OrdinalsPerWorkItem",
			log: []events.Payload{
				declare("W-1", "W-2"),
				start("a", "W-1"), start("b", "W-2"), start("c", "W-1"),
				end("c", "W-1", events.OutcomeAbandoned), end("a", "W-1", events.OutcomeCompleted),
			},
			rows: []string{
				"a W-1 ag-a anthropic m1 active '' t+2 2 0 '' '' 1 0 0 2 6 3 0",
				"a W-1 ag-a anthropic m1 ended completed t+2 2 t+6 '' '' 1 6 2 6 - - -",
				"b W-2 ag-b anthropic m1 active '' t+3 3 0 '' '' 1 0 0 3 - - -",
				"c W-1 ag-c anthropic m1 active '' t+4 4 0 '' '' 2 0 0 4 5 0 4",
				"c W-1 ag-c anthropic m1 ended abandoned t+4 4 t+5 '' '' 2 5 1 5 - - -",
			},
			at: map[int64]string{
				3: "a active  > @2; b active  > @3",
				5: "a active  > @2; b active  > @3; c ended abandoned > @5",
				6: "a ended completed > @6; b active  > @3; c ended abandoned > @5",
			},
		},
		{
			// A second end is applied (the command layer refuses it first)
			// and keeps the first end's ordinal and revision; the domain
			// rules refuse to rebuild such a log.
			name: "EndedTwice",
			log: []events.Payload{
				declare("W-1"),
				start("s1", "W-1"), end("s1", "W-1", events.OutcomeIncomplete), end("s1", "W-1", events.OutcomeCompleted),
			},
			invalid: "a session_ended on session s1, which ended at seq 3",
			rows: []string{
				"s1 W-1 ag-s1 anthropic m1 active '' t+2 2 0 '' '' 1 0 0 2 3 0 2",
				"s1 W-1 ag-s1 anthropic m1 ended incomplete t+2 2 t+3 '' '' 1 3 1 3 4 0 3",
				"s1 W-1 ag-s1 anthropic m1 ended completed t+2 2 t+4 '' '' 1 3 1 4 - - -",
			},
			at: map[int64]string{
				3: "s1 ended incomplete > @3",
				4: "s1 ended completed > @4",
			},
		},
		{
			name: "OtherKindsIgnored",
			log: []events.Payload{
				declare("W-1"),
				start("s1", "W-1"),
				&events.ClaimAcquired{ClaimID: "c1", Work: "W-1", SessionID: "s1", Agent: "a", FencingToken: 1},
				&events.ContextCompiled{SessionID: "s1", Work: "W-1", ContextHash: "h"},
			},
			rows: []string{
				"s1 W-1 ag-s1 anthropic m1 active '' t+2 2 0 '' '' 1 0 0 2 - - -",
			},
			at: map[int64]string{
				4: "s1 active  > @2",
			},
		},
		{
			name: "ErrEndUnknownSession",
			log:  []events.Payload{declare("W-1"), start("s1", "W-1"), end("nobody", "W-1", events.OutcomeCompleted)},
			err:  "session nobody: not started",
			rows: []string{
				"s1 W-1 ag-s1 anthropic m1 active '' t+2 2 0 '' '' 1 0 0 2 - - -",
			},
		},
		{
			name: "ErrResumeFromUnknownSession",
			log:  []events.Payload{declare("W-1"), start("s2", "W-1"), &events.SessionResumed{SessionID: "s2", FromSession: "ghost", Work: "W-1"}},
			err:  "session ghost: not started",
			rows: []string{
				"s2 W-1 ag-s2 anthropic m1 active '' t+2 2 0 '' '' 1 0 0 2 - - -",
			},
		},
	})
}

// TestSessions_Reads: the enriched reads see the checkpoints and contexts
// of the session as of the revision asked, and the active reads agree
// between the head path and the history path.
func TestSessions_Reads(t *testing.T) {
	t.Parallel()
	st := logOf(t,
		declare("W-1", "W-2"),
		start("s1", "W-1"),
		&events.ContextCompiled{SessionID: "s1", Work: "W-1", ContextHash: "h1"},
		&events.CheckpointRecorded{CheckpointID: "cp1", SessionID: "s1", Work: "W-1", Agent: "a", Digest: "d1", NextAction: "n1"},
		start("s2", "W-2"),
		end("s1", "W-1", events.OutcomeCompleted),
	)
	read(t, st, func(conn *sqlite.Conn) {
		s, err := projections.SessionAt(conn, "s1", 3)
		require.NoError(t, err)
		require.Equal(t, "h1", s.LastContextHash)
		require.Zero(t, s.LastCheckpointSeq)
		s, err = projections.SessionAt(conn, "s1", 6)
		require.NoError(t, err)
		require.EqualValues(t, 4, s.LastCheckpointSeq)
		require.NotEmpty(t, s.LastCheckpointID)
		require.Equal(t, projections.SessionEnded, s.Status)
		s, err = projections.SessionAt(conn, "s2", 4)
		require.NoError(t, err)
		require.Nil(t, s, "s2 did not exist at 4")

		for rev, want := range map[int64][]string{1: nil, 2: {"s1"}, 5: {"s1", "s2"}, 6: {"s2"}} {
			for _, head := range []bool{false, rev == 6} {
				active, err := projections.ActiveSessionsAt(conn, rev, head)
				require.NoError(t, err)
				var ids []string
				for _, s := range active {
					ids = append(ids, s.ID)
				}
				require.ElementsMatch(t, want, ids, "active at %d (head %v)", rev, head)
				n, err := projections.ActiveSessionCountAt(conn, rev, head)
				require.NoError(t, err)
				require.Equal(t, len(want), n, "count at %d (head %v)", rev, head)
			}
		}
		byWork, err := projections.SessionsAt(conn, 6, "W-2")
		require.NoError(t, err)
		require.Len(t, byWork, 1)
		require.Equal(t, "s2", byWork[0].ID)

		latest, err := projections.LatestSessionOfWorkAt(conn, "W-1", 6)
		require.NoError(t, err)
		require.Equal(t, "s1", latest)
		latest, err = projections.LatestSessionOfWorkAt(conn, "W-2", 4)
		require.NoError(t, err)
		require.Empty(t, latest)
	})
}

// read runs fn on a read snapshot of st.
func read(t *testing.T, st *events.Store, fn func(conn *sqlite.Conn)) {
	t.Helper()
	require.NoError(t, st.Read(t.Context(), func(r *events.Reader) error {
		fn(r.Conn)
		return nil
	}))
}

// TestSessionsAt_SameMillisecondInLogOrder: sessions started in the same
// millisecond list in the order the log holds them, whatever their ids
// say (a later session may carry the smaller id).
func TestSessionsAt_SameMillisecondInLogOrder(t *testing.T) {
	t.Parallel()
	st := openLog(t)
	at := t0.Add(time.Minute)
	for i, p := range []events.Payload{declare("W-1"), start("zz", "W-1"), start("aa", "W-1"), start("mm", "W-1")} {
		opts := events.WriteOptions{Now: at, Entropy: rand.New(rand.NewSource(int64(i))), Actor: "tester"}
		_, err := st.Write(context.Background(), opts, func(tx *events.Tx) (any, error) { return nil, appendIn(tx, p) })
		require.NoError(t, err)
	}
	require.NoError(t, st.Read(context.Background(), func(r *events.Reader) error {
		for _, head := range []bool{false, true} {
			all, err := projections.ActiveSessionsAt(r.Conn, r.Head, head)
			require.NoError(t, err)
			var ids []string
			for _, s := range all {
				ids = append(ids, s.ID)
			}
			require.Equal(t, []string{"zz", "aa", "mm"}, ids, "active sessions, head=%v", head)
		}
		require.Equal(t, "zz active  > @2; aa active  > @3; mm active  > @4", readSessions(t, r.Conn, r.Head))
		return nil
	}))
}

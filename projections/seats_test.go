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

const seatRows = `SELECT 'seat', address, rig, printf('policy=%s session=%s active=%s conv=%s last=%s stop=%s outcome=%s/%s attention=%s decision=%s',
		json_extract(data, '$.policy'), json_extract(data, '$.session_id'), json_extract(data, '$.session_active'),
		json_extract(data, '$.conversation'), json_extract(data, '$.last_conversation'), json_extract(data, '$.stop_requested_seq'),
		json_extract(data, '$.last_outcome'), json_extract(data, '$.restored_outcome'), json_extract(data, '$.attention_seq'),
		json_extract(data, '$.decision')), valid_from, valid_to FROM p_seats
	UNION ALL SELECT 'session', session_id, address, '', seq, NULL FROM p_seat_sessions
	UNION ALL SELECT 'seat_log', address, rig, kind, seq, NULL FROM p_seat_log
	UNION ALL SELECT 'rig_log', rig, ref, kind, seq, NULL FROM p_rig_log
	ORDER BY 1, 5, 2`

// readSeats renders SeatsAt("", rev) as "address session active=B @revision".
func readSeats(t *testing.T, conn *sqlite.Conn, rev int64) string {
	t.Helper()
	all, err := projections.SeatsAt(conn, "", rev)
	return joinRows(t, all, err, func(s projections.Seat) string {
		return fmt.Sprintf("%s %s active=%v @%d", s.Address, s.SessionID, s.SessionActive, s.Revision)
	})
}

func seat(address, policy string) *events.SeatDeclared {
	_, rig, _ := strings.Cut(address, "@")
	return &events.SeatDeclared{Address: address, Role: "dev", Rig: rig, Runtime: events.RuntimeClaude, Work: "W-1", Policy: policy}
}

func launch(address, session string) *events.SeatLaunched {
	_, rig, _ := strings.Cut(address, "@")
	return &events.SeatLaunched{Address: address, Rig: rig, Mode: events.LaunchStart, SessionID: session, TmuxSession: "awr-" + session,
		ContextFile: ".awr/ctx/" + session + ".md", Conversation: "conv-" + session}
}

func restored(address, outcome, reason string) *events.SeatRestored {
	_, rig, _ := strings.Cut(address, "@")
	return &events.SeatRestored{RestoreID: "rs1", Address: address, Rig: rig, Outcome: outcome, Reason: reason}
}

// seated is the log most seats cases start from: W-1 declared, seat
// dev@r declared, session s1 started and launched for it (seqs 1-4).
func seated(more ...events.Payload) []events.Payload {
	return append([]events.Payload{declare("W-1"), seat("dev@r", events.PolicyResumeIfPossible), start("s1", "W-1"), launch("dev@r", "s1")}, more...)
}

// TestSeats_Apply: a seat's declaration, launches, bindings, stops,
// restore outcomes and decisions fold into its versions and its log; a
// session's events change the seat only while it is the seat's session.
func TestSeats_Apply(t *testing.T) {
	t.Parallel()
	applyTable(t, seatRows, readSeats, []applyCase{
		{
			name: "Declared",
			log:  []events.Payload{seat("dev@r", events.PolicyResumeIfPossible)},
			rows: []string{
				"seat dev@r r policy=resume_if_possible session= active=0 conv= last= stop= outcome=/ attention= decision= 1 -",
				"seat_log dev@r r declared 1 -",
			},
			at: map[int64]string{
				0: "",
				1: "dev@r  active=false @1",
			},
		},
		{
			name: "LaunchedBoundStoppedEnded",
			log: seated(
				bind("claude:c-77", "s1", "W-1", ""),
				&events.StopRequested{Address: "dev@r", Rig: "r", SessionID: "s1", Message: "wrap up"},
				end("s1", "W-1", events.OutcomeInterrupted)),
			rows: []string{
				"seat dev@r r policy=resume_if_possible session= active=0 conv= last= stop= outcome=/ attention= decision= 2 4",
				"seat dev@r r policy=resume_if_possible session=s1 active=1 conv= last= stop= outcome=/ attention= decision= 4 5",
				"seat dev@r r policy=resume_if_possible session=s1 active=1 conv=c-77 last=c-77 stop= outcome=/ attention= decision= 5 6",
				"seat dev@r r policy=resume_if_possible session=s1 active=1 conv=c-77 last=c-77 stop=6 outcome=/ attention= decision= 6 7",
				"seat dev@r r policy=resume_if_possible session=s1 active=0 conv=c-77 last=c-77 stop=6 outcome=/ attention= decision= 7 -",
				"seat_log dev@r r declared 2 -",
				"seat_log dev@r r launched 4 -",
				"seat_log dev@r r bound 5 -",
				"seat_log dev@r r stop_requested 6 -",
				"seat_log dev@r r ended 7 -",
				"session s1 dev@r '' 4 -",
			},
			at: map[int64]string{
				4: "dev@r s1 active=true @4",
				7: "dev@r s1 active=false @7",
			},
		},
		{
			// A new declaration keeps what the seat's occupants did.
			name: "RedeclaredKeepsItsSession",
			log:  seated(seat("dev@r", events.PolicyRelaunchFresh)),
			rows: []string{
				"seat dev@r r policy=resume_if_possible session= active=0 conv= last= stop= outcome=/ attention= decision= 2 4",
				"seat dev@r r policy=resume_if_possible session=s1 active=1 conv= last= stop= outcome=/ attention= decision= 4 5",
				"seat dev@r r policy=relaunch_fresh session=s1 active=1 conv= last= stop= outcome=/ attention= decision= 5 -",
				"seat_log dev@r r declared 2 -",
				"seat_log dev@r r launched 4 -",
				"seat_log dev@r r declared 5 -",
				"session s1 dev@r '' 4 -",
			},
			at: map[int64]string{
				5: "dev@r s1 active=true @5",
			},
		},
		{
			// The first attention_required waits for a person; a repeat
			// keeps it; clearing answers it. A running restore changes
			// no outcome.
			name: "RestoreOutcomesAndAttention",
			log: seated(
				restored("dev@r", events.SeatAttentionRequired, "dirty worktree"),
				restored("dev@r", events.SeatAttentionRequired, "still dirty"),
				restored("dev@r", events.SeatRunning, ""),
				&events.SeatAttentionCleared{Address: "dev@r", Rig: "r", Reason: "checked", AttentionSeq: 5},
				restored("dev@r", events.SeatResumed, "")),
			rows: []string{
				"seat dev@r r policy=resume_if_possible session= active=0 conv= last= stop= outcome=/ attention= decision= 2 4",
				"seat dev@r r policy=resume_if_possible session=s1 active=1 conv= last= stop= outcome=/ attention= decision= 4 5",
				"seat dev@r r policy=resume_if_possible session=s1 active=1 conv= last= stop= outcome=attention_required/attention_required attention=5 decision= 5 6",
				"seat dev@r r policy=resume_if_possible session=s1 active=1 conv= last= stop= outcome=attention_required/attention_required attention=5 decision= 6 7",
				"seat dev@r r policy=resume_if_possible session=s1 active=1 conv= last= stop= outcome=attention_required/running attention=5 decision= 7 8",
				"seat dev@r r policy=resume_if_possible session=s1 active=1 conv= last= stop= outcome=attention_required/running attention= decision= 8 9",
				"seat dev@r r policy=resume_if_possible session=s1 active=1 conv= last= stop= outcome=resumed/resumed attention= decision= 9 -",
				"seat_log dev@r r declared 2 -",
				"seat_log dev@r r launched 4 -",
				"seat_log dev@r r restored 5 -",
				"seat_log dev@r r restored 6 -",
				"seat_log dev@r r restored 7 -",
				"seat_log dev@r r attention_cleared 8 -",
				"seat_log dev@r r restored 9 -",
				"session s1 dev@r '' 4 -",
			},
			at: map[int64]string{
				9: "dev@r s1 active=true @9",
			},
		},
		{
			// The agent came back with another conversation: the seat
			// forgets its own, remembering the reported one as the last.
			name: "AwaitingDecisionOnAnotherConversation",
			log: seated(bind("claude:c-77", "s1", "W-1", ""),
				&events.SeatRestored{RestoreID: "rs1", Address: "dev@r", Rig: "r", Outcome: events.SeatAwaitingDecision, Reason: "other conversation",
					Conversation: "c-99", Evidence: &events.SeatEvidence{ExpectedConv: "c-77", ReportedConv: "c-99"}},
				&events.SeatDecided{Address: "dev@r", Rig: "r", Decision: events.DecisionFresh, Scope: "once"}),
			rows: []string{
				"seat dev@r r policy=resume_if_possible session= active=0 conv= last= stop= outcome=/ attention= decision= 2 4",
				"seat dev@r r policy=resume_if_possible session=s1 active=1 conv= last= stop= outcome=/ attention= decision= 4 5",
				"seat dev@r r policy=resume_if_possible session=s1 active=1 conv=c-77 last=c-77 stop= outcome=/ attention= decision= 5 6",
				"seat dev@r r policy=resume_if_possible session=s1 active=1 conv= last=c-99 stop= outcome=awaiting-decision/awaiting-decision attention= decision= 6 7",
				"seat dev@r r policy=resume_if_possible session=s1 active=1 conv= last=c-99 stop= outcome=awaiting-decision/awaiting-decision attention= decision=fresh 7 -",
				"seat_log dev@r r declared 2 -",
				"seat_log dev@r r launched 4 -",
				"seat_log dev@r r bound 5 -",
				"seat_log dev@r r restored 6 -",
				"seat_log dev@r r decided 7 -",
				"session s1 dev@r '' 4 -",
			},
		},
		{
			// The end of the seat's former session is logged for the seat
			// but leaves the seat, now on s2, active; the end of a session
			// no seat launched is not the seat's.
			name: "RelaunchedOldSessionEnds",
			log: seated(&events.SessionStarted{SessionID: "s2", Work: "W-1", Agent: "ag-s2", PredecessorID: "s1"},
				launch("dev@r", "s2"),
				end("s1", "W-1", events.OutcomeInterrupted),
				&events.SessionStarted{SessionID: "s3", Work: "W-1", Agent: "ag-s3"},
				end("s3", "W-1", events.OutcomeAbandoned)),
			rows: []string{
				"seat dev@r r policy=resume_if_possible session= active=0 conv= last= stop= outcome=/ attention= decision= 2 4",
				"seat dev@r r policy=resume_if_possible session=s1 active=1 conv= last= stop= outcome=/ attention= decision= 4 6",
				"seat dev@r r policy=resume_if_possible session=s2 active=1 conv= last= stop= outcome=/ attention= decision= 6 -",
				"seat_log dev@r r declared 2 -",
				"seat_log dev@r r launched 4 -",
				"seat_log dev@r r launched 6 -",
				"seat_log dev@r r ended 7 -",
				"session s1 dev@r '' 4 -",
				"session s2 dev@r '' 6 -",
			},
			at: map[int64]string{
				6: "dev@r s2 active=true @6",
				9: "dev@r s2 active=true @6",
			},
		},
		{
			name: "Reconciled",
			log: seated(end("s1", "W-1", events.OutcomeInterrupted),
				&events.SessionStarted{SessionID: "s2", Work: "W-1", Agent: "ag-s2", PredecessorID: "s1"},
				&events.SeatReconciled{Address: "dev@r", Rig: "r", FromSession: "s1", SessionID: "s2", SessionActive: true,
					Conversation: "c-88", Host: "claude", By: "tester", Reason: "adopt the resumed session"}),
			rows: []string{
				"seat dev@r r policy=resume_if_possible session= active=0 conv= last= stop= outcome=/ attention= decision= 2 4",
				"seat dev@r r policy=resume_if_possible session=s1 active=1 conv= last= stop= outcome=/ attention= decision= 4 5",
				"seat dev@r r policy=resume_if_possible session=s1 active=0 conv= last= stop= outcome=/ attention= decision= 5 7",
				"seat dev@r r policy=resume_if_possible session=s2 active=1 conv=c-88 last=c-88 stop= outcome=/ attention= decision= 7 -",
				"seat_log dev@r r declared 2 -",
				"seat_log dev@r r launched 4 -",
				"seat_log dev@r r ended 5 -",
				"seat_log dev@r r reconciled 7 -",
				"session s1 dev@r '' 4 -",
				"session s2 dev@r '' 7 -",
			},
			at: map[int64]string{
				7: "dev@r s2 active=true @7",
			},
		},
		{
			// A seat's own event for a removed seat is logged only; the end
			// of the session it launched, not even that.
			name: "RemovedThenStopped",
			log: seated(&events.SeatRemoved{Address: "dev@r", Rig: "r"},
				&events.StopRequested{Address: "dev@r", Rig: "r", SessionID: "s1", Message: "stop"},
				end("s1", "W-1", events.OutcomeAbandoned)),
			rows: []string{
				"seat dev@r r policy=resume_if_possible session= active=0 conv= last= stop= outcome=/ attention= decision= 2 4",
				"seat dev@r r policy=resume_if_possible session=s1 active=1 conv= last= stop= outcome=/ attention= decision= 4 5",
				"seat_log dev@r r declared 2 -",
				"seat_log dev@r r launched 4 -",
				"seat_log dev@r r removed 5 -",
				"seat_log dev@r r stop_requested 6 -",
				"session s1 dev@r '' 4 -",
			},
			at: map[int64]string{
				4: "dev@r s1 active=true @4",
				5: "",
			},
		},
		{
			name: "SessionsOfNoSeatIgnored",
			log:  []events.Payload{declare("W-1"), seat("dev@r", events.PolicyCheckpointOnly), start("s1", "W-1"), bind("claude:c-1", "s1", "W-1", ""), end("s1", "W-1", events.OutcomeCompleted)},
			rows: []string{
				"seat dev@r r policy=checkpoint_only session= active=0 conv= last= stop= outcome=/ attention= decision= 2 -",
				"seat_log dev@r r declared 2 -",
			},
			at: map[int64]string{
				5: "dev@r  active=false @2",
			},
		},
		{
			name: "RigLog",
			log: []events.Payload{seat("dev@r", events.PolicyResumeIfPossible),
				&events.RigSnapshotTaken{SnapshotID: "snap1", Rig: "r", Watermark: 1, Seats: []events.SnapshotSeat{{Address: "dev@r", Cwd: "/w"}}},
				&events.RestoreStarted{RestoreID: "rs1", Rig: "r", SnapshotID: "snap1", Seats: []string{"dev@r"}},
				&events.RestoreCompleted{RestoreID: "rs1", Rig: "r", Result: "ok"}},
			rows: []string{
				"rig_log r snap1 rig_snapshot_taken 2 -",
				"rig_log r rs1 restore_started 3 -",
				"rig_log r rs1 restore_completed 4 -",
				"seat dev@r r policy=resume_if_possible session= active=0 conv= last= stop= outcome=/ attention= decision= 1 -",
				"seat_log dev@r r declared 1 -",
			},
			at: map[int64]string{
				4: "dev@r  active=false @1",
			},
		},
		{
			name: "ReconciledRunningSessionAsEnded",
			log: seated(&events.SessionStarted{SessionID: "s2", Work: "W-1", Agent: "ag-s2", PredecessorID: "s1"},
				&events.SeatReconciled{Address: "dev@r", Rig: "r", FromSession: "s1", SessionID: "s2", SessionActive: false, By: "t", Reason: "r"}),
			invalid: "seat dev@r adopts session s2 as running=false, but it ended at seq 0",
			rows: []string{
				"seat dev@r r policy=resume_if_possible session= active=0 conv= last= stop= outcome=/ attention= decision= 2 4",
				"seat dev@r r policy=resume_if_possible session=s1 active=1 conv= last= stop= outcome=/ attention= decision= 4 6",
				"seat dev@r r policy=resume_if_possible session=s2 active=0 conv= last= stop= outcome=/ attention= decision= 6 -",
				"seat_log dev@r r declared 2 -",
				"seat_log dev@r r launched 4 -",
				"seat_log dev@r r reconciled 6 -",
				"session s1 dev@r '' 4 -",
				"session s2 dev@r '' 6 -",
			},
			at: map[int64]string{
				6: "dev@r s2 active=false @6",
			},
		},
	})
}

// TestSeats_Reads: the seat read back is the declaration and what its
// occupants did; the logs and the restore lookups read as of a revision.
func TestSeats_Reads(t *testing.T) {
	t.Parallel()
	st := logOf(t, seated(
		bind("claude:c-77", "s1", "W-1", ""),                                         // 5
		seat("ops@q", events.PolicyCheckpointOnly),                                   // 6
		&events.RestoreStarted{RestoreID: "rs1", Rig: "r", Seats: []string{"dev@r"}}, // 7
		restored("dev@r", events.SeatResumed, "same conversation"),                   // 8
		&events.RestoreCompleted{RestoreID: "rs1", Rig: "r", Result: "ok"},           // 9
	)...)
	read(t, st, func(conn *sqlite.Conn) {
		s, err := projections.SeatAt(conn, "dev@r", 9)
		require.NoError(t, err)
		require.Equal(t, &projections.Seat{
			SeatDeclared: *seat("dev@r", events.PolicyResumeIfPossible),
			SessionID:    "s1", TmuxSession: "awr-s1", ContextFile: ".awr/ctx/s1.md", LaunchMode: events.LaunchStart, LaunchedSeq: 4,
			ExpectedConversation: "conv-s1", Conversation: "c-77", Host: "claude", LastConversation: "c-77", LastHost: "claude",
			SessionActive: true, LastOutcome: events.SeatResumed, LastReason: "same conversation", LastRestoreID: "rs1", LastOutcomeSeq: 8,
			RestoredIn: "rs1", RestoredSeq: 8, RestoredOutcome: events.SeatResumed, RestoredReason: "same conversation",
			Revision: 8,
		}, s)
		s, err = projections.SeatAt(conn, "dev@r", 1)
		require.NoError(t, err)
		require.Nil(t, s)

		r, err := projections.SeatsAt(conn, "q", 9)
		require.NoError(t, err)
		require.Len(t, r, 1)
		require.Equal(t, "ops@q", r[0].Address)
		all, err := projections.SeatsAt(conn, "", 9)
		require.NoError(t, err)
		require.Equal(t, []string{"ops@q", "dev@r"}, []string{all[0].Address, all[1].Address}, "by rig, then address")

		log, err := projections.SeatLogAt(conn, "dev@r", 9)
		require.NoError(t, err)
		var kinds []string
		for _, e := range log {
			kinds = append(kinds, fmt.Sprintf("%d:%s", e.Seq, e.Kind))
		}
		require.Equal(t, []string{"2:declared", "4:launched", "5:bound", "8:restored"}, kinds)
		require.JSONEq(t, `{"session_id":"s1","conversation":"c-77","host":"claude"}`, string(log[2].Data))

		rig, err := projections.RigLogAt(conn, "r", 8)
		require.NoError(t, err)
		require.Len(t, rig, 1)
		require.Equal(t, "restore_started", rig[0].Kind)
		for rev, want := range map[int64]bool{8: false, 9: true} {
			done, err := projections.RestoreCompletedAt(conn, "r", "rs1", rev)
			require.NoError(t, err)
			require.Equal(t, want, done, "at %d", rev)
		}

		address, err := projections.SeatOfSession(conn, "s1")
		require.NoError(t, err)
		require.Equal(t, "dev@r", address)
		address, err = projections.SeatOfSession(conn, "s9")
		require.NoError(t, err)
		require.Empty(t, address)
	})
}

package projections_test

import (
	"fmt"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
	"zombiezen.com/go/sqlite"
)

const knowledgeRows = `SELECT work, item_id, kind, num, text, state, note, opened_seq, opened_session, opened_at,
	closed_seq, closed_session, confirmed_seq, supersedes, superseded_by, valid_from, valid_to
	FROM p_knowledge ORDER BY work, item_id, valid_from`

// readKnowledge renders KnowledgeAt(W-1, rev) as "id kind state
// sessions=N @revision" separated by "; ".
func readKnowledge(t *testing.T, conn *sqlite.Conn, rev int64) string {
	t.Helper()
	all, err := projections.KnowledgeAt(conn, "W-1", rev)
	return joinRows(t, all, err, func(k projections.Knowledge) string {
		return fmt.Sprintf("%s %s %s sessions=%d @%d", k.ID, k.Kind, k.State, k.Sessions, k.Revision)
	})
}

func opens(id, kind, text string) events.KnowledgeChange {
	return events.KnowledgeChange{Op: events.ChangeOpen, ID: id, Kind: kind, Text: text}
}

func closes(op, id, note string) events.KnowledgeChange {
	return events.KnowledgeChange{Op: op, ID: id, Note: note}
}

// onW1 is the log every knowledge case starts from: W-1 and W-2 declared,
// s1 started on W-1 (seqs 1, 2).
func onW1(more ...events.Payload) []events.Payload {
	return append([]events.Payload{declare("W-1", "W-2"), start("s1", "W-1")}, more...)
}

// TestKnowledge_Apply: a checkpoint's changes open, resolve, drop,
// retract, supersede and confirm the work item's knowledge, one version
// per change; loops given as bare texts open once per distinct text.
func TestKnowledge_Apply(t *testing.T) {
	t.Parallel()
	applyTable(t, knowledgeRows, readKnowledge, []applyCase{
		{
			name: "OpenedEachKind",
			log: onW1(checkpoint("s1", "W-1", "d1",
				opens("L-1", events.KnowledgeLoop, "Why is it slow?"), opens("D-1", events.KnowledgeDecision, "Use SQLite"),
				opens("F-1", events.KnowledgeFact, "CI has 2 cores"), opens("H-1", events.KnowledgeHypothesis, "The index is missing"))),
			rows: []string{
				"W-1 D-1 decision 1 Use SQLite active '' 3 s1 t+3 0 '' 0 '' '' 3 -",
				"W-1 F-1 fact 1 CI has 2 cores active '' 3 s1 t+3 0 '' 0 '' '' 3 -",
				"W-1 H-1 hypothesis 1 The index is missing active '' 3 s1 t+3 0 '' 0 '' '' 3 -",
				"W-1 L-1 loop 1 Why is it slow? open '' 3 s1 t+3 0 '' 0 '' '' 3 -",
			},
			at: map[int64]string{
				2: "",
				3: "D-1 decision active sessions=1 @3; F-1 fact active sessions=1 @3; H-1 hypothesis active sessions=1 @3; L-1 loop open sessions=1 @3",
			},
		},
		{
			name: "LoopResolvedAndDropped",
			log: onW1(
				checkpoint("s1", "W-1", "d1", opens("L-1", events.KnowledgeLoop, "Why?"), opens("L-2", events.KnowledgeLoop, "Who?")),
				checkpoint("s1", "W-1", "d2", closes(events.ChangeResolve, "L-1", "the cache"), closes(events.ChangeDrop, "L-2", "nobody asks"))),
			rows: []string{
				"W-1 L-1 loop 1 Why? open '' 3 s1 t+3 0 '' 0 '' '' 3 4",
				"W-1 L-1 loop 1 Why? resolved the cache 3 s1 t+3 4 s1 0 '' '' 4 -",
				"W-1 L-2 loop 2 Who? open '' 3 s1 t+3 0 '' 0 '' '' 3 4",
				"W-1 L-2 loop 2 Who? dropped nobody asks 3 s1 t+3 4 s1 0 '' '' 4 -",
			},
			at: map[int64]string{
				3: "L-1 loop open sessions=1 @3; L-2 loop open sessions=1 @3",
				4: "L-1 loop resolved sessions=1 @4; L-2 loop dropped sessions=1 @4",
			},
		},
		{
			name: "DecisionSuperseded",
			log: onW1(
				checkpoint("s1", "W-1", "d1", opens("D-1", events.KnowledgeDecision, "Use Postgres")),
				checkpoint("s1", "W-1", "d2",
					events.KnowledgeChange{Op: events.ChangeOpen, ID: "D-2", Kind: events.KnowledgeDecision, Text: "Use SQLite", Supersedes: "D-1"},
					events.KnowledgeChange{Op: events.ChangeSupersede, ID: "D-1", By: "D-2", Note: "one machine"})),
			rows: []string{
				"W-1 D-1 decision 1 Use Postgres active '' 3 s1 t+3 0 '' 0 '' '' 3 4",
				"W-1 D-1 decision 1 Use Postgres superseded one machine 3 s1 t+3 4 s1 0 '' D-2 4 -",
				"W-1 D-2 decision 2 Use SQLite active '' 4 s1 t+4 0 '' 0 D-1 '' 4 -",
			},
			at: map[int64]string{
				3: "D-1 decision active sessions=1 @3",
				4: "D-1 decision superseded sessions=1 @4; D-2 decision active sessions=1 @4",
			},
		},
		{
			// A confirmed hypothesis becomes a fact and stays active; a
			// retracted fact is no longer in force.
			name: "HypothesisConfirmedFactRetracted",
			log: onW1(
				checkpoint("s1", "W-1", "d1", opens("H-1", events.KnowledgeHypothesis, "The index is missing"), opens("F-1", events.KnowledgeFact, "Tests are green")),
				checkpoint("s1", "W-1", "d2", closes(events.ChangeConfirm, "H-1", "EXPLAIN shows a scan"), closes(events.ChangeRetract, "F-1", "one is red"))),
			rows: []string{
				"W-1 F-1 fact 1 Tests are green active '' 3 s1 t+3 0 '' 0 '' '' 3 4",
				"W-1 F-1 fact 1 Tests are green retracted one is red 3 s1 t+3 4 s1 0 '' '' 4 -",
				"W-1 H-1 hypothesis 1 The index is missing active '' 3 s1 t+3 0 '' 0 '' '' 3 4",
				"W-1 H-1 fact 1 The index is missing active '' 3 s1 t+3 0 '' 4 '' '' 4 -",
			},
			at: map[int64]string{
				4: "F-1 fact retracted sessions=1 @4; H-1 fact active sessions=1 @4",
			},
		},
		{
			// Bare loop texts (logs written before knowledge ids) open a
			// loop each, numbered after the highest loop, unless an open
			// loop has the same text (spacing aside).
			name: "BareLoopTexts",
			log: onW1(
				checkpoint("s1", "W-1", "d1", opens("L-3", events.KnowledgeLoop, "Old question")),
				&events.CheckpointRecorded{SessionID: "s1", Work: "W-1", Agent: "a", Digest: "d2", NextAction: "n", OpenLoops: []string{"Why  slow?", "Why slow?", "Old   question"}},
				&events.CheckpointRecorded{SessionID: "s1", Work: "W-1", Agent: "a", Digest: "d3", NextAction: "n", OpenLoops: []string{"Why slow?", "Who pays?"}}),
			rows: []string{
				"W-1 L-3 loop 3 Old question open '' 3 s1 t+3 0 '' 0 '' '' 3 -",
				"W-1 L-4 loop 4 Why  slow? open '' 4 s1 t+4 0 '' 0 '' '' 4 -",
				"W-1 L-5 loop 5 Who pays? open '' 5 s1 t+5 0 '' 0 '' '' 5 -",
			},
			at: map[int64]string{
				5: "L-3 loop open sessions=1 @3; L-4 loop open sessions=1 @4; L-5 loop open sessions=1 @5",
			},
		},
		{
			// Items belong to the work item: W-2's L-1 is another item.
			name: "SameIDOnTwoItems",
			log: onW1(start("s2", "W-2"),
				checkpoint("s1", "W-1", "d1", opens("L-1", events.KnowledgeLoop, "Here?")),
				checkpoint("s2", "W-2", "e1", opens("L-1", events.KnowledgeLoop, "There?")),
				checkpoint("s2", "W-2", "e2", closes(events.ChangeResolve, "L-1", "yes"))),
			rows: []string{
				"W-1 L-1 loop 1 Here? open '' 4 s1 t+4 0 '' 0 '' '' 4 -",
				"W-2 L-1 loop 1 There? open '' 5 s2 t+5 0 '' 0 '' '' 5 6",
				"W-2 L-1 loop 1 There? resolved yes 5 s2 t+5 6 s2 0 '' '' 6 -",
			},
			at: map[int64]string{
				6: "L-1 loop open sessions=1 @4",
			},
		},
		{
			// An item lives across sessions: it counts each session on
			// the work item during which it was in force.
			name: "CarriedAcrossSessions",
			log: onW1(
				checkpoint("s1", "W-1", "d1", opens("L-1", events.KnowledgeLoop, "Why?"), opens("D-1", events.KnowledgeDecision, "Keep it")),
				end("s1", "W-1", events.OutcomeInterrupted),
				&events.SessionStarted{SessionID: "s2", Work: "W-1", Agent: "ag-s2", PredecessorID: "s1"},
				checkpoint("s2", "W-1", "e1", closes(events.ChangeResolve, "L-1", "found")),
				end("s2", "W-1", events.OutcomeInterrupted),
				&events.SessionStarted{SessionID: "s3", Work: "W-1", Agent: "ag-s3", PredecessorID: "s2"}),
			rows: []string{
				"W-1 D-1 decision 1 Keep it active '' 3 s1 t+3 0 '' 0 '' '' 3 -",
				"W-1 L-1 loop 1 Why? open '' 3 s1 t+3 0 '' 0 '' '' 3 6",
				"W-1 L-1 loop 1 Why? resolved found 3 s1 t+3 6 s2 0 '' '' 6 -",
			},
			at: map[int64]string{
				3: "D-1 decision active sessions=1 @3; L-1 loop open sessions=1 @3",
				5: "D-1 decision active sessions=2 @3; L-1 loop open sessions=2 @3",
				8: "D-1 decision active sessions=3 @3; L-1 loop resolved sessions=2 @6",
			},
		},
		{
			name: "ErrChangeOfItemNeverOpened",
			log:  onW1(checkpoint("s1", "W-1", "d1", closes(events.ChangeResolve, "L-9", "done"))),
			err:  "knowledge L-9 of W-1: resolve of an item never opened",
		},
		{
			name: "ErrUnknownChange",
			log: onW1(checkpoint("s1", "W-1", "d1", opens("L-1", events.KnowledgeLoop, "Why?")),
				checkpoint("s1", "W-1", "d2", closes("frobnicate", "L-1", ""))),
			err: `knowledge L-1: unknown change "frobnicate"`,
			rows: []string{
				"W-1 L-1 loop 1 Why? open '' 3 s1 t+3 0 '' 0 '' '' 3 -",
			},
		},
		{
			// Two versions of one item at one seq cannot be stamped: the
			// checkpoint is refused whole.
			name: "ErrOpenedAndResolvedAtOnce",
			log:  onW1(checkpoint("s1", "W-1", "d1", opens("L-1", events.KnowledgeLoop, "Why?"), closes(events.ChangeResolve, "L-1", "because"))),
			err:  "UNIQUE constraint failed",
		},
		{
			name: "ErrMalformedID",
			log:  onW1(checkpoint("s1", "W-1", "d1", opens("loop-one", events.KnowledgeLoop, "Why?"))),
			err:  "loop-one",
		},
	})
}

// TestKnowledge_Reads: the state at a revision sorts the live items by
// kind and number and lists what closed since a checkpoint; numbering
// and the list of work items follow the log.
func TestKnowledge_Reads(t *testing.T) {
	t.Parallel()
	st := logOf(t, onW1(
		checkpoint("s1", "W-1", "d1", opens("L-2", events.KnowledgeLoop, "Two?"), opens("L-10", events.KnowledgeLoop, "Ten?"),
			opens("D-1", events.KnowledgeDecision, "Use SQLite"), opens("H-1", events.KnowledgeHypothesis, "Slow disk")), // 3
		checkpoint("s1", "W-1", "d2", closes(events.ChangeResolve, "L-2", "yes"), closes(events.ChangeConfirm, "H-1", "measured")), // 4
	)...)
	read(t, st, func(conn *sqlite.Conn) {
		ids := func(ks []projections.Knowledge) []string {
			out := []string{}
			for _, k := range ks {
				out = append(out, k.ID)
			}
			return out
		}
		state, err := projections.KnowledgeStateAt(conn, "W-1", 4, 3)
		require.NoError(t, err)
		require.Equal(t, []string{"L-10"}, ids(state.OpenLoops))
		require.Equal(t, []string{"D-1"}, ids(state.Decisions))
		require.Equal(t, []string{"H-1"}, ids(state.Facts), "confirmed")
		require.Equal(t, []string{}, ids(state.Hypotheses))
		require.Equal(t, []string{"L-2"}, ids(state.Closed), "closed since 3")
		require.EqualValues(t, 3, state.Since)
		require.Equal(t, 1, state.Closed[0].Sessions)

		state, err = projections.KnowledgeStateAt(conn, "W-1", 3, 3)
		require.NoError(t, err)
		require.Equal(t, []string{"L-2", "L-10"}, ids(state.OpenLoops), "by number, not by text")
		require.Equal(t, []string{"H-1"}, ids(state.Hypotheses))
		require.Empty(t, state.Closed)

		state, err = projections.KnowledgeStateAt(conn, "W-1", 4, 4)
		require.NoError(t, err)
		require.Empty(t, state.Closed, "nothing closed after 4")

		live, err := projections.LiveKnowledgeAt(conn, "W-1", 4)
		require.NoError(t, err)
		require.Equal(t, []string{"D-1", "H-1", "L-10"}, ids(live))

		for kind, want := range map[string]int64{events.KnowledgeLoop: 11, events.KnowledgeDecision: 2, events.KnowledgeFact: 1} {
			n, err := projections.NextKnowledgeNum(conn, "W-1", kind, 4)
			require.NoError(t, err)
			require.Equal(t, want, n, kind)
		}
		n, err := projections.NextKnowledgeNum(conn, "W-1", events.KnowledgeLoop, 2)
		require.NoError(t, err)
		require.EqualValues(t, 1, n, "no loop yet at 2")

		works, err := projections.AllKnowledgeWorkAt(conn, 4)
		require.NoError(t, err)
		require.Equal(t, []string{"W-1"}, works)
		works, err = projections.AllKnowledgeWorkAt(conn, 2)
		require.NoError(t, err)
		require.Empty(t, works)

		k, err := projections.KnowledgeItem(conn, "W-1", "H-1")
		require.NoError(t, err)
		require.Equal(t, events.KnowledgeFact, k.Kind)
		require.EqualValues(t, 4, k.ConfirmedSeq)
		require.True(t, k.Live())
		k, err = projections.KnowledgeItem(conn, "W-2", "H-1")
		require.NoError(t, err)
		require.Nil(t, k)

		current, err := projections.OpenKnowledge(conn, "W-1")
		require.NoError(t, err)
		require.ElementsMatch(t, []string{"D-1", "H-1", "L-2", "L-10"}, ids(current), "current versions, closed ones included")
	})
	require.Equal(t, "a b c", projections.NormalizeText("  a\tb \n c "))
}

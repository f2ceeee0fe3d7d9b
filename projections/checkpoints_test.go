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

const checkpointRows = `SELECT 'checkpoint', seq, session_id, '' FROM p_checkpoints
	UNION ALL SELECT 'context', seq, session_id, context_hash FROM p_contexts ORDER BY 2`

// readCheckpoints renders, at rev, the digests of s1's and s2's own
// checkpoints, the digest of s2's chain checkpoint and the seq where
// context h1 was compiled for s1.
func readCheckpoints(t *testing.T, conn *sqlite.Conn, rev int64) string {
	t.Helper()
	var out []string
	for _, s := range []string{"s1", "s2"} {
		cps, err := projections.SessionCheckpointsAt(conn, s, rev)
		require.NoError(t, err)
		var ds []string
		for _, c := range cps {
			ds = append(ds, c.Digest)
		}
		out = append(out, s+"="+strings.Join(ds, ","))
	}
	chain, err := projections.ChainCheckpointAt(conn, "s2", rev)
	require.NoError(t, err)
	if chain != nil {
		out = append(out, "chain(s2)="+chain.Digest)
	}
	seq, err := projections.ContextCompiledFor(conn, "s1", "h1", rev)
	require.NoError(t, err)
	return strings.Join(append(out, fmt.Sprintf("h1@%d", seq)), " ")
}

func checkpoint(session, work, digest string, changes ...events.KnowledgeChange) *events.CheckpointRecorded {
	return &events.CheckpointRecorded{SessionID: session, Work: work, Agent: "ag-" + session, Digest: digest, NextAction: "next after " + digest, Changes: changes}
}

func compiled(session, work, hash string) *events.ContextCompiled {
	return &events.ContextCompiled{SessionID: session, Work: work, ContextHash: hash, TokenEstimate: 100, TokenBudget: 1000, Complete: true}
}

// TestCheckpoints_Apply: checkpoint_recorded and context_compiled are
// indexed by session at their seq, and nothing else is.
func TestCheckpoints_Apply(t *testing.T) {
	t.Parallel()
	applyTable(t, checkpointRows, readCheckpoints, []applyCase{
		{
			name: "Recorded",
			log:  []events.Payload{declare("W-1"), start("s1", "W-1"), checkpoint("s1", "W-1", "d1")},
			rows: []string{
				"checkpoint 3 s1 ''",
			},
			at: map[int64]string{
				2: "s1= s2= h1@0",
				3: "s1=d1 s2= h1@0",
			},
		},
		{
			name: "ContextThenCheckpoints",
			log: []events.Payload{declare("W-1"), start("s1", "W-1"), compiled("s1", "W-1", "h1"),
				checkpoint("s1", "W-1", "d1"), compiled("s1", "W-1", "h2"), checkpoint("s1", "W-1", "d2")},
			rows: []string{
				"context 3 s1 h1",
				"checkpoint 4 s1 ''",
				"context 5 s1 h2",
				"checkpoint 6 s1 ''",
			},
			at: map[int64]string{
				2: "s1= s2= h1@0",
				3: "s1= s2= h1@3",
				4: "s1=d1 s2= h1@3",
				6: "s1=d1,d2 s2= h1@3",
			},
		},
		{
			name: "SessionsKeptApart",
			log: []events.Payload{declare("W-1", "W-2"), start("s1", "W-1"), start("s2", "W-2"),
				checkpoint("s2", "W-2", "e1"), checkpoint("s1", "W-1", "d1"), checkpoint("s2", "W-2", "e2")},
			rows: []string{
				"checkpoint 4 s2 ''",
				"checkpoint 5 s1 ''",
				"checkpoint 6 s2 ''",
			},
			at: map[int64]string{
				4: "s1= s2=e1 chain(s2)=e1 h1@0",
				6: "s1=d1 s2=e1,e2 chain(s2)=e2 h1@0",
			},
		},
		{
			// A successor that has not checkpointed yet inherits its
			// predecessor's latest checkpoint, until it records its own.
			name: "ChainInherited",
			log: []events.Payload{declare("W-1"), start("s1", "W-1"), checkpoint("s1", "W-1", "d1"),
				end("s1", "W-1", events.OutcomeInterrupted),
				&events.SessionStarted{SessionID: "s2", Work: "W-1", Agent: "ag-s2", PredecessorID: "s1"},
				checkpoint("s2", "W-1", "e1")},
			rows: []string{
				"checkpoint 3 s1 ''",
				"checkpoint 6 s2 ''",
			},
			at: map[int64]string{
				5: "s1=d1 s2= chain(s2)=d1 h1@0",
				6: "s1=d1 s2=e1 chain(s2)=e1 h1@0",
			},
		},
		{
			name: "OtherKindsIgnored",
			log:  []events.Payload{declare("W-1"), start("s1", "W-1"), end("s1", "W-1", events.OutcomeCompleted)},
		},
		{
			name: "CheckpointAfterEnd",
			log: []events.Payload{declare("W-1"), start("s1", "W-1"), end("s1", "W-1", events.OutcomeCompleted),
				checkpoint("s1", "W-1", "late")},
			invalid: "a checkpoint_recorded on session s1, which ended at seq 3",
			rows: []string{
				"checkpoint 4 s1 ''",
			},
			at: map[int64]string{
				4: "s1=late s2= h1@0",
			},
		},
		{
			name:    "CheckpointOfUnknownSession",
			log:     []events.Payload{declare("W-1"), checkpoint("ghost", "W-1", "d0")},
			invalid: "which never started",
			rows: []string{
				"checkpoint 2 ghost ''",
			},
		},
	})
}

// TestCheckpoints_Reads: a checkpoint read back is the event recorded,
// found by its id (the event's id) only from its seq on, and the latest n
// of a session come oldest first.
func TestCheckpoints_Reads(t *testing.T) {
	t.Parallel()
	st := openLog(t)
	var ids []string
	for i, p := range []events.Payload{declare("W-1"), start("s1", "W-1"),
		checkpoint("s1", "W-1", "d1", events.KnowledgeChange{Op: events.ChangeOpen, ID: "L-1", Kind: events.KnowledgeLoop, Text: "why?"}),
		checkpoint("s1", "W-1", "d2"), checkpoint("s1", "W-1", "d3")} {
		res, err := appendOne(st, int64(i+1), p)
		require.NoError(t, err)
		ids = append(ids, res.Events[0].ID)
	}
	read(t, st, func(conn *sqlite.Conn) {
		cp, err := projections.CheckpointAt(conn, ids[2], 2)
		require.NoError(t, err)
		require.Nil(t, cp, "not yet recorded at 2")
		cp, err = projections.CheckpointAt(conn, ids[2], 5)
		require.NoError(t, err)
		require.Equal(t, &projections.Checkpoint{
			ID: ids[2], Seq: 3, SessionID: "s1", Work: "W-1", Agent: "ag-s1", Digest: "d1", NextAction: "next after d1",
			Changes:    []events.KnowledgeChange{{Op: events.ChangeOpen, ID: "L-1", Kind: events.KnowledgeLoop, Text: "why?"}},
			RecordedAt: ms(3),
		}, cp)

		latest, err := projections.SessionLatestCheckpointsAt(conn, "s1", 5, 2)
		require.NoError(t, err)
		require.Equal(t, []string{"d2", "d3"}, []string{latest[0].Digest, latest[1].Digest})
		latest, err = projections.SessionLatestCheckpointsAt(conn, "s1", 4, 5)
		require.NoError(t, err)
		require.Len(t, latest, 2)
		latest, err = projections.SessionLatestCheckpointsAt(conn, "s1", 5, 0)
		require.NoError(t, err)
		require.Empty(t, latest)

		s, err := projections.SessionAt(conn, "s1", 5)
		require.NoError(t, err)
		start, err := projections.SessionStartOf(conn, s)
		require.NoError(t, err)
		require.Equal(t, "ag-s1", start.Agent)
	})
}

package bench_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fixtures/testkit"
	"github.com/awr-dev/awr/internal/lab/bench"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
)

// TestKnowledgeStateAt_EqualsTheWholeHistory: the read of a work item's
// knowledge that looks only at the items in force and those closed since
// a seq gives what filing every item the work ever had gives, at every
// revision of a generated history whose agents open, resolve and drop
// loops, for several "since" seqs.
// Slow: it compares two ways of reading at every revision of a generated history.
func TestKnowledgeStateAt_EqualsTheWholeHistory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := history(t, 12, 4, bench.GenerateOptions{Events: int64(testkit.Size(2500, 700)), Seed: 9, Agents: 4, Batch: 40})
	compared, closed := 0, 0
	require.NoError(t, st.Read(ctx, func(r *events.Reader) error {
		works, err := projections.AllKnowledgeWorkAt(r.Conn, r.Head)
		if err != nil {
			return err
		}
		require.NotEmpty(t, works)
		for rev := int64(1); rev <= r.Head; rev += 7 {
			for _, work := range works {
				all, err := projections.KnowledgeAt(r.Conn, work, rev)
				if err != nil {
					return err
				}
				for _, since := range []int64{0, rev - 1, rev - 60, rev / 2, rev} {
					since = max(since, 0)
					want, err := json.Marshal(projections.SortKnowledge(all, since))
					if err != nil {
						return err
					}
					state, err := projections.KnowledgeStateAt(r.Conn, work, rev, since)
					if err != nil {
						return err
					}
					got, err := json.Marshal(state)
					if err != nil {
						return err
					}
					require.JSONEq(t, string(want), string(got), "work %s at %d since %d", work, rev, since)
					compared++
					closed += len(state.Closed)
				}
			}
		}
		return nil
	}))
	require.Positive(t, compared)
	require.Positive(t, closed, "the history closes loops")
}

// TestKnowledgeSessions_CountedFromTheLog: each knowledge item's
// sessions count, at every 11th revision of a generated history, is the
// number of sessions on its work item alive at some point while it was in
// force, counted from the log's own session_started and session_ended
// events: started by the seq it closed at (or by the revision read), and
// not ended before the seq that opened it.
func TestKnowledgeSessions_CountedFromTheLog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := history(t, 6, 4, bench.GenerateOptions{Events: int64(testkit.Size(2500, 700)), Seed: 5, Agents: 4, Batch: 30})
	type life struct{ start, end int64 }
	byWork := map[string][]*life{}
	byID := map[string]*life{}
	require.NoError(t, st.Scan(ctx, 1, 1<<62, func(e *events.Event) error {
		v, err := events.Decode(e)
		if err != nil {
			return err
		}
		switch pl := v.(type) {
		case *events.SessionStarted:
			l := &life{start: e.Seq}
			byWork[pl.Work], byID[pl.SessionID] = append(byWork[pl.Work], l), l
		case *events.SessionEnded:
			byID[pl.SessionID].end = e.Seq
		}
		return nil
	}))
	counted, ended := 0, 0
	require.NoError(t, st.Read(ctx, func(r *events.Reader) error {
		works, err := projections.AllKnowledgeWorkAt(r.Conn, r.Head)
		if err != nil {
			return err
		}
		for rev := int64(1); rev <= r.Head; rev += 11 {
			for _, work := range works {
				items, err := projections.KnowledgeAt(r.Conn, work, rev)
				if err != nil {
					return err
				}
				for _, k := range items {
					until := rev
					if k.ClosedSeq > 0 {
						until = k.ClosedSeq
					}
					want := 0
					for _, l := range byWork[work] {
						if l.start <= until && !(l.end > 0 && l.end < k.OpenedSeq) {
							want++
						}
						if l.end > 0 && l.end < k.OpenedSeq {
							ended++
						}
					}
					require.Equal(t, want, k.Sessions, "%s %s at %d", work, k.ID, rev)
					counted++
				}
			}
		}
		return nil
	}))
	require.Positive(t, counted)
	require.Positive(t, ended, "some items open after sessions on their work ended")
}

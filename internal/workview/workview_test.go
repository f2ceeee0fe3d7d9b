package workview_test

import (
	"context"
	"math/rand"
	"testing"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/workview"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
)

// TestAt: an item read at the head and at a revision before it changed,
// its provenance, readiness and executability, and NotFound for a key
// the log does not know there.
func TestAt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := events.Open(ctx, events.DBPath(t.TempDir()), events.Options{Create: true, Projectors: projections.Projectors()})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	index := func(seq int64, hash string, it events.WorkItem) {
		t.Helper()
		opts := events.WriteOptions{Now: t0.Add(time.Duration(seq) * time.Second), Entropy: rand.New(rand.NewSource(seq)), Actor: "tester"}
		_, err := st.Write(ctx, opts, func(tx *events.Tx) (any, error) {
			it.Source = events.SourceRef{Path: "tasks.md", LineStart: 3, LineEnd: 5, ContentHash: hash}
			return tx.Append(events.NewEvent{Stream: "source/tasks.md", Payload: &events.SourceIndexed{Path: "tasks.md", Adapter: "markdown", ContentHash: hash,
				Items: []events.WorkItem{it}}})
		})
		require.NoError(t, err)
	}
	index(1, "h1", events.WorkItem{Key: "W-1", Title: "Do it", Status: "todo"})
	index(2, "h2", events.WorkItem{Key: "W-1", Title: "Do it", Status: "planned", NextAction: "start", Acceptance: []string{"it works"}})
	require.NoError(t, st.Read(ctx, func(r *events.Reader) error {
		now := t0.Add(time.Hour).UnixMilli()
		head, err := workview.At(r.Conn, "W-1", 2, now, true, workview.Page{})
		require.NoError(t, err)
		require.Equal(t, workview.Provenance{Source: "tasks.md", LineStart: 3, LineEnd: 5, ContentHash: "h2", IndexedSeq: 2, ChangedSeq: 2}, head.Provenance)
		require.True(t, head.Ready, "%+v", head.NotReady)
		require.False(t, head.Executable, "no goal")
		require.Equal(t, "no goal", head.NotExecutable[0].Message)
		require.Empty(t, head.Sessions)
		require.Nil(t, head.CurrentSession())
		head.Judge(commands.Observed{LevelNeed: events.LevelNote})
		require.Equal(t, commands.CompletionEvidenceMissing, head.Completion.State)

		past, err := workview.At(r.Conn, "W-1", 1, now, false, workview.Page{})
		require.NoError(t, err)
		require.Equal(t, int64(1), past.Provenance.ChangedSeq)
		require.Empty(t, past.Work.Acceptance)
		past.Judge(commands.Observed{LevelNeed: events.LevelNote})
		require.Equal(t, commands.CompletionNoCriteria, past.Completion.State)

		_, err = workview.At(r.Conn, "W-2", 2, now, true, workview.Page{})
		require.True(t, fault.Is(err, fault.NotFound), "%v", err)
		return nil
	}))
}

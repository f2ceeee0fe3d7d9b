package diff_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fixtures/testkit"
	"github.com/awr-dev/awr/internal/lab/bench"
	"github.com/awr-dev/awr/internal/project"
	"github.com/stretchr/testify/require"
)

// diffAfter writes a generated history of about n events, then one small
// change after revision from: a register edit of DIFF-1 (in its own
// source), a session on it with a claim and a checkpoint. It returns the
// open project and from.
func diffAfter(tb testing.TB, n int64) (*project.Project, int64) {
	tb.Helper()
	ctx := context.Background()
	dir := tb.TempDir()
	st, err := bench.NewProject(ctx, events.DBPath(dir), 40, 7)
	require.NoError(tb, err)
	_, err = bench.Generate(ctx, st, bench.GenerateOptions{Events: n, Seed: 7, Batch: 500})
	require.NoError(tb, err)
	require.NoError(tb, st.Close())
	p, err := project.Open(ctx, dir, project.Options{})
	require.NoError(tb, err)
	tb.Cleanup(func() { p.Close() })
	env, err := p.Env(ctx)
	require.NoError(tb, err)
	index := func(status string) int64 {
		res, err := commands.IndexSource(ctx, env, commands.IndexRequest{Source: events.SourceIndexed{Path: "diff.md", Adapter: "markdown_checklist", ContentHash: "h-" + status,
			Items: []events.WorkItem{{Key: "DIFF-1", Title: "Diff me", Status: status}}}}, false)
		require.NoError(tb, err)
		return res.ProjectRevision
	}
	from := index("planned")
	index("ready")
	s, err := p.SessionStart(ctx, project.SessionStartRequest{Work: "DIFF-1", Agent: "auditor", Claim: true})
	require.NoError(tb, err)
	req := project.SessionCheckpointRequest{SessionID: s.Session.ID, Agent: "auditor", Digest: "d", NextAction: "n"}
	req.OpenLoops = []string{"why?"}
	_, err = p.SessionCheckpoint(ctx, req)
	require.NoError(tb, err)
	return p, from
}

// TestDiff_CostFollowsTheChange: the same small change diffed after a
// 1k-event and after a 5k-event history reads the same events and the
// same entity versions, and finds the same changes: the cost of a diff
// depends on what changed, not on the log's length. (BenchmarkDiff times
// it at 20k; generating 20k events here took minutes under -race.)
func TestDiff_CostFollowsTheChange(t *testing.T) {
	t.Parallel()
	type run struct {
		read    project.DiffRead
		changed int
		fields  []string
	}
	measure := func(n int64) map[string]run {
		p, from := diffAfter(t, n)
		out := map[string]run{}
		for name, req := range map[string]project.DiffRequest{"all": {From: from}, "work": {From: from, Work: "DIFF-1"}} {
			res, err := p.Diff(context.Background(), req)
			require.NoError(t, err)
			var fields []string
			for _, e := range res.Changes.WorkItems {
				for _, f := range e.Fields {
					fields = append(fields, fmt.Sprintf("%s %s: %s -> %s", e.ID, f.Field, f.Before, f.After))
				}
			}
			out[name] = run{read: res.Read, changed: res.Changed, fields: fields}
		}
		return out
	}
	// Under -race, 300 and 1,500 events: still five times as long.
	small, large := measure(int64(testkit.Size(1000, 300))), measure(int64(testkit.Size(5000, 1500)))
	require.Equal(t, small, large)
	require.Equal(t, []string{`DIFF-1 status: "planned" -> "ready"`}, small["work"].fields)
	// The reindex (a delta, which names what it changed, so the
	// source's previous index is not read), the session's start, claim
	// and checkpoint; nothing else of the log.
	require.Equal(t, 4, small["work"].read.Events, "%+v", small["work"].read)
}

// BenchmarkDiff diffs the same small change after histories of 1k and
// 20k events; the time per diff should not grow with the history.
func BenchmarkDiff(b *testing.B) {
	for _, n := range []int64{1000, 20000} {
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			p, from := diffAfter(b, n)
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res, err := p.Diff(ctx, project.DiffRequest{From: from})
				require.NoError(b, err)
				b.ReportMetric(float64(res.Read.Events+res.Read.Entities), "rows/op")
			}
		})
	}
}

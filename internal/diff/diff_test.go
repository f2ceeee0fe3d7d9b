package diff_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fixtures/testkit"
	"github.com/awr-dev/awr/internal/fault"
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

// entitiesOf lists a diff's changed entities in the answer's order.
func entitiesOf(c project.DiffChanges) []string {
	var out []string
	for _, m := range [][]project.DiffEntity{c.Sessions, c.Claims, c.Checkpoints, c.Knowledge, c.WorkItems, c.Bindings, c.Seats} {
		for _, e := range m {
			out = append(out, fmt.Sprintf("%s %s %s %d", e.ID, e.Work, e.Change, len(e.Fields)))
		}
	}
	return out
}

// TestDiff_Paged: a diff over a long span answers a page of its events
// and one of its changed entities, each counted whole; following the
// cursors gives every event and every entity of the whole diff once, in
// its order; a cursor awr did not give, and --limit with --whole, are
// refused naming the flag.
func TestDiff_Paged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p, _ := diffAfter(t, int64(testkit.Size(400, 200)))
	whole, err := p.Diff(ctx, project.DiffRequest{From: 1, Whole: true})
	require.NoError(t, err)
	require.Greater(t, whole.EventsTotal, commands.DefaultPage)
	require.Greater(t, whole.Changed, commands.DefaultPage)
	require.Len(t, whole.Events, whole.EventsTotal)
	require.Empty(t, whole.EventsNextCursor+whole.ChangesNextCursor)
	wantEntities := entitiesOf(whole.Changes)
	require.Len(t, wantEntities, whole.Changed)

	first, err := p.Diff(ctx, project.DiffRequest{From: 1})
	require.NoError(t, err)
	require.Len(t, first.Events, commands.DefaultPage)
	require.Len(t, entitiesOf(first.Changes), commands.DefaultPage)
	require.Equal(t, whole.EventsTotal, first.EventsTotal)
	require.Equal(t, whole.Changed, first.Changed)
	require.Equal(t, whole.Hidden, first.Hidden)

	// Each list followed by its own cursor, the other left at its
	// first page.
	limit := 7
	follow := func(cursorOf func(*project.DiffResult) string, set func(*project.DiffRequest, string), add func(*project.DiffResult)) {
		req := project.DiffRequest{From: 1, To: &whole.To, Limit: &limit}
		for pages := 0; ; pages++ {
			require.LessOrEqual(t, pages, whole.EventsTotal+whole.Changed, "the cursors do not end")
			res, err := p.Diff(ctx, req)
			require.NoError(t, err)
			require.LessOrEqual(t, len(res.Events), limit)
			require.LessOrEqual(t, len(entitiesOf(res.Changes)), limit)
			require.Equal(t, whole.EventsTotal, res.EventsTotal)
			require.Equal(t, whole.Changed, res.Changed)
			add(res)
			if cursorOf(res) == "" {
				return
			}
			set(&req, cursorOf(res))
		}
	}
	var events []project.DiffEvent
	follow(func(r *project.DiffResult) string { return r.EventsNextCursor }, func(q *project.DiffRequest, c string) { q.EventsCursor = c },
		func(r *project.DiffResult) { events = append(events, r.Events...) })
	require.Equal(t, whole.Events, events)
	var entities []string
	follow(func(r *project.DiffResult) string { return r.ChangesNextCursor }, func(q *project.DiffRequest, c string) { q.ChangesCursor = c },
		func(r *project.DiffResult) { entities = append(entities, entitiesOf(r.Changes)...) })
	require.Equal(t, wantEntities, entities)

	for _, bad := range []struct {
		req  project.DiffRequest
		flag string
	}{
		{project.DiffRequest{From: 1, EventsCursor: "nonsense"}, "--events-cursor"},
		{project.DiffRequest{From: 1, ChangesCursor: first.EventsNextCursor + "x"}, "--changes-cursor"},
		{project.DiffRequest{From: 1, Limit: &limit, Whole: true}, "--whole"},
		{project.DiffRequest{From: 1, Limit: new(0)}, "--limit"},
	} {
		_, err := p.Diff(ctx, bad.req)
		require.Equal(t, fault.InvalidInput, fault.CodeOf(err), "%+v: %v", bad.req, err)
		require.Contains(t, err.Error(), bad.flag)
		require.Equal(t, bad.flag, fault.As(err).Details["flag"], "%v", err)
	}
}

package workcontext_test

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fixtures/logkit"
	"github.com/awr-dev/awr/internal/workcontext"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
	"zombiezen.com/go/sqlite"
)

// TestGather_AsTheWholeRegister: Gather reads the item and its
// dependencies by key and only the columns of the rest, yet gives what
// reading and decoding the whole register gave (the reference below, the
// code it replaced): the item, each dependency's status, the related
// items (same goal or milestone, a key two sources declare, statuses of
// every rank) and what it left out, the goals' counts; at the head and
// at a past revision whose register differs.
func TestGather_AsTheWholeRegister(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	statuses := []string{"planned", "in_progress", "completed", "blocked", "cancelled", "ready", "completed", "planned"}
	var items []events.WorkItem
	for i := 1; i <= 40; i++ {
		it := events.WorkItem{Key: fmt.Sprintf("W-%02d", i), Title: fmt.Sprintf("item %d", i), Status: statuses[i%len(statuses)]}
		switch {
		case i%3 == 0:
			it.Goal = "G-1"
		case i%3 == 1:
			it.Goal = "G-2"
		}
		if i%4 == 0 {
			it.Milestone = "M-1"
		}
		if i%5 == 0 {
			it.DependsOn = []events.Dependency{{Key: fmt.Sprintf("W-%02d", i-1), Required: true}, {Key: "NOPE-1"}}
		}
		items = append(items, it)
	}
	env := logkit.Seeded(t, dir, func() time.Time { return now }, 1, items...)
	// A second source declares W-03 and W-08 again, with other statuses.
	_, err := commands.IndexSource(ctx, env, commands.IndexRequest{Source: events.SourceIndexed{Path: "more.md", Adapter: "markdown_checklist", ContentHash: "h2",
		Items: []events.WorkItem{{Key: "W-03", Title: "again", Status: "ready", Goal: "G-1"}, {Key: "W-08", Title: "again", Status: "completed", Milestone: "M-1"}},
		// G-1 and G-3 declared (G-3 served by no item), G-2 not: an
		// item of G-2 or of no goal shows the declared goals' counts.
		Goals: []events.Goal{{Key: "G-1", Title: "one"}, {Key: "G-3", Title: "three"}}}}, false)
	require.NoError(t, err)
	past := int64(2)
	// The register moves on: statuses change, an item goes.
	items[5].Status, items[11].Status = "completed", "in_progress"
	_, err = commands.IndexSource(ctx, env, commands.IndexRequest{Source: events.SourceIndexed{Path: "todo.md", Adapter: "markdown_checklist", ContentHash: "h3",
		Items: items[:38]}}, false)
	require.NoError(t, err)

	err = env.Store.Read(ctx, func(r *events.Reader) error {
		for _, rev := range []int64{r.Head, past} {
			for _, work := range []string{"W-01", "W-03", "W-05", "W-08", "W-12", "W-15", "W-39", "NOPE-1"} {
				got, err := workcontext.Gather(r.Conn, rev, rev == r.Head, work, "")
				require.NoError(t, err)
				want := reference(t, r.Conn, rev, work)
				require.Equal(t, want.Item, got.Item, "%s at %d", work, rev)
				require.Equal(t, want.Dependencies, got.Dependencies, "%s at %d", work, rev)
				require.Equal(t, want.Related, got.Related, "%s at %d", work, rev)
				require.Equal(t, want.RelatedMore, got.RelatedMore, "%s at %d", work, rev)
				require.Equal(t, want.GoalLinks, got.GoalLinks, "%s at %d", work, rev)
			}
		}
		return nil
	})
	require.NoError(t, err)
}

// reference is what Gather read of the register before: every item
// decoded (projections.WorkItemsAt), the item and its dependencies the
// first of their key, the related items filtered from all of them.
func reference(t *testing.T, conn *sqlite.Conn, rev int64, work string) workcontext.Input {
	all, err := projections.WorkItemsAt(conn, rev, false)
	require.NoError(t, err)
	var in workcontext.Input
	byKey := map[string]projections.WorkItem{}
	for _, it := range all {
		if _, dup := byKey[it.Key]; !dup {
			byKey[it.Key] = it
		}
	}
	goals, err := projections.GoalsAt(conn, rev)
	require.NoError(t, err)
	// The goals' counts, for a packet that lists the goals: the item
	// (if any) serves none of the declared goals.
	linked := map[string]workcontext.GoalLink{}
	declared := map[string]bool{}
	for _, g := range goals {
		declared[g.Key] = true
	}
	for _, it := range all {
		if !declared[it.Goal] {
			continue
		}
		l := linked[it.Goal]
		l.Work++
		if it.Status == projections.StatusCompleted {
			l.Completed++
		}
		linked[it.Goal] = l
	}
	if it, ok := byKey[work]; len(goals) > 0 && (!ok || !declared[it.Goal]) {
		in.GoalLinks = linked
	}
	it, ok := byKey[work]
	if !ok {
		return in
	}
	in.Item = &it
	for _, d := range it.DependsOn {
		dep, found := byKey[d.Key]
		in.Dependencies = append(in.Dependencies, workcontext.Dependency{Key: d.Key, Required: d.Required, Status: dep.Status, Found: found})
	}
	rank := func(s string) int {
		switch s {
		case projections.StatusInProgress, projections.StatusBlocked:
			return 0
		case projections.StatusCompleted, projections.StatusCancelled:
			return 2
		}
		return 1
	}
	var rel []projections.WorkItem
	for _, o := range all {
		if o.Key == it.Key || (it.Goal == "" || o.Goal != it.Goal) && (it.Milestone == "" || o.Milestone != it.Milestone) {
			continue
		}
		rel = append(rel, o)
	}
	sort.SliceStable(rel, func(i, j int) bool { return rank(rel[i].Status) < rank(rel[j].Status) })
	left := map[string]int{}
	closed := 0
	for _, r := range rel {
		if rank(r.Status) == 2 {
			closed++
		}
		if len(in.Related) >= 8 || closed > 3 && rank(r.Status) == 2 {
			left[r.Status]++
			continue
		}
		in.Related = append(in.Related, r)
	}
	in.RelatedMore = []workcontext.StatusCount{}
	for st, n := range left {
		in.RelatedMore = append(in.RelatedMore, workcontext.StatusCount{Status: st, Count: n})
	}
	sort.Slice(in.RelatedMore, func(i, j int) bool {
		if in.RelatedMore[i].Count != in.RelatedMore[j].Count {
			return in.RelatedMore[i].Count > in.RelatedMore[j].Count
		}
		return in.RelatedMore[i].Status < in.RelatedMore[j].Status
	})
	return in
}

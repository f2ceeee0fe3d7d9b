package projections_test

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
)

// TestKnowledgePageAt_SameAsLoadAll: on a history of checkpoints that
// open, resolve, drop, confirm, retract and supersede items, the page of
// the items in force read in SQL (KnowledgePageAt) equals the one cut
// from every item in force (KnowledgeStateAt, Listed, InForcePage) at
// every revision, for pages of 4 and of every item, following the
// cursors to the end: the same items, totals, closed items and places.
func TestKnowledgePageAt_SameAsLoadAll(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := events.Open(ctx, events.DBPath(t.TempDir()), events.Options{Create: true, Projectors: projections.Projectors()})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	env := commands.NewEnv(st)
	_, err = commands.Init(ctx, env, commands.InitRequest{Name: "pages"})
	require.NoError(t, err)
	_, err = commands.IndexSource(ctx, env, commands.IndexRequest{Source: events.SourceIndexed{Path: "todo.md", Adapter: "markdown_checklist", ContentHash: "h",
		Items: []events.WorkItem{{Key: "W-1", Title: "Persist orders", Status: "planned", NextAction: "Write the store"}}}}, false)
	require.NoError(t, err)
	s, err := commands.StartSession(ctx, env, commands.StartRequest{Work: "W-1", Agent: "a", Claim: true})
	require.NoError(t, err)
	rng := rand.New(rand.NewSource(44))
	open := map[string][]string{} // the items in force by prefix
	n := 0
	text := func() string { n++; return fmt.Sprintf("Item text %d", n) }
	pick := func(prefix string) (string, bool) {
		l := open[prefix]
		if len(l) == 0 {
			return "", false
		}
		i := rng.Intn(len(l))
		id := l[i]
		open[prefix] = append(l[:i:i], l[i+1:]...)
		return id, true
	}
	for range 30 {
		var f commands.KnowledgeFlags
		for range rng.Intn(4) {
			f.OpenLoops = append(f.OpenLoops, text())
		}
		for range rng.Intn(2) {
			f.Decisions = append(f.Decisions, text())
		}
		for range rng.Intn(2) {
			f.Facts = append(f.Facts, text())
		}
		for range rng.Intn(3) {
			f.Hypotheses = append(f.Hypotheses, text())
		}
		if id, ok := pick("L"); ok && rng.Intn(2) == 0 {
			f.ResolveLoops = append(f.ResolveLoops, id)
		} else if ok {
			open["L"] = append(open["L"], id)
		}
		if id, ok := pick("H"); ok {
			if rng.Intn(2) == 0 {
				f.Confirm = append(f.Confirm, id) // a fact that keeps its id
			} else {
				f.Retract = append(f.Retract, id)
			}
		}
		if id, ok := pick("D"); ok && rng.Intn(3) == 0 {
			f.Supersede = append(f.Supersede, id+"="+text())
		} else if ok {
			open["D"] = append(open["D"], id)
		}
		res, err := commands.RecordCheckpoint(ctx, env, commands.CheckpointRequest{SessionID: s.Session.ID, Agent: "a", Digest: "step", NextAction: "go on", KnowledgeFlags: f})
		require.NoError(t, err)
		for _, c := range res.Checkpoint.Changes {
			if c.Op == "open" {
				p := c.ID[:1]
				open[p] = append(open[p], c.ID)
			}
		}
	}
	err = st.Read(ctx, func(r *events.Reader) error {
		for rev := int64(1); rev <= r.Head; rev++ {
			for _, since := range []int64{rev, max(rev-7, 0)} {
				for _, limit := range []int{4, 0} {
					var after *projections.KnowledgePlace
					for pages := 0; ; pages++ {
						require.Less(t, pages, 200)
						all, err := projections.KnowledgeStateAt(r.Conn, "W-1", rev, since)
						require.NoError(t, err)
						want, wantTotal, wantLast := all.Listed(projections.MaxClosedListed).InForcePage(after, limit)
						got, total, last, err := projections.KnowledgePageAt(r.Conn, "W-1", rev, since, rev == r.Head, after, limit)
						require.NoError(t, err)
						require.Equal(t, want, got, "rev %d since %d limit %d after %v", rev, since, limit, after)
						require.Equal(t, wantTotal, total)
						require.Equal(t, wantLast, last)
						if last == nil {
							break
						}
						after = last
					}
				}
			}
		}
		return nil
	})
	require.NoError(t, err)
}

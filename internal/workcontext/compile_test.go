package workcontext

import (
	"fmt"
	"strings"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
)

func input() Input {
	return Input{
		Work: "CART-1",
		Item: &projections.WorkItem{WorkItem: events.WorkItem{Key: "CART-1", Title: "Persist the cart", Status: "planned", Goal: "G-1",
			NextAction: "Add a carts table", Acceptance: []string{"Cart survives a restart"}, Source: events.SourceRef{Path: "ledger.yaml", LineStart: 3, LineEnd: 9}}},
		Goals: []events.Goal{{Key: "G-1", Title: "Resumable checkout", Status: "active"}},
		Rules: []events.Rule{{Key: "R-1", Text: "Never log card numbers.", Strength: "hard"}, {Key: "R-2", Text: "Prefer small PRs.", Strength: "soft"}},
		Latest: &projections.Checkpoint{ID: "cp1", Seq: 7, SessionID: "s1", Agent: "builder", Digest: "Wrote the migration.",
			NextAction: "Run the tests"},
		Knowledge: &projections.KnowledgeState{OpenLoops: []projections.Knowledge{{ID: "L-1", Kind: "loop", Text: "Decide the TTL", State: "open", OpenedSeq: 7, Sessions: 1}}},
		Related:   []projections.WorkItem{{WorkItem: events.WorkItem{Key: "CART-2", Title: "Restore at sign-in", Status: "planned"}}},
		History:   []string{"- seq 4 claim_acquired by builder"},
	}
}

func TestCompile(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		p, c, err := Compile(input())
		require.NoError(t, err)
		require.True(t, c.Complete, c.Issues)
		require.Equal(t, "o200k_base", p.Tokenizer)
		require.Equal(t, DefaultBudget, p.TokenBudget)
		for _, fact := range []string{"Resumable checkout", "Status: planned", "Cart survives a restart", "Add a carts table", "Never log card numbers.",
			"Wrote the migration.", "Run the tests", "Decide the TTL", "Prefer small PRs.", "CART-2"} {
			require.Contains(t, p.RenderedContext, fact)
		}
		n, err := Count(p.RenderedContext)
		require.NoError(t, err)
		require.Equal(t, n, p.TokenEstimate)
		again, _, err := Compile(input())
		require.NoError(t, err)
		require.Equal(t, p.ContextHash, again.ContextHash, "deterministic")
	})
	t.Run("OptionalDroppedWhole", func(t *testing.T) {
		full, _, err := Compile(input())
		require.NoError(t, err)
		in := input()
		in.Budget = full.RequiredTokens + 3
		p, _, err := Compile(in)
		require.NoError(t, err)
		require.LessOrEqual(t, p.TokenEstimate, in.Budget)
		require.NotEmpty(t, p.Omitted)
		require.Contains(t, p.RenderedContext, "Decide the TTL", "required facts are never cut")
		for _, o := range p.Omitted {
			require.False(t, strings.Contains(p.RenderedContext, "## Soft rules") && o.ID == "soft_rules")
		}
	})
	t.Run("ErrBudgetExceeded", func(t *testing.T) {
		in := input()
		in.Budget = 10
		_, _, err := Compile(in)
		require.True(t, fault.Is(err, fault.BudgetExceeded), "%v", err)
		require.Equal(t, 10, fault.As(err).Details["budget"])
		require.Greater(t, fault.As(err).Details["required"], 10)
	})
	t.Run("Incomplete", func(t *testing.T) {
		in := input()
		in.Item.Acceptance = nil
		in.StaleSources = []string{"ledger.yaml"}
		p, c, err := Compile(in)
		require.NoError(t, err)
		require.False(t, c.Complete)
		require.False(t, c.AcceptanceComplete)
		require.False(t, c.SourceFresh)
		require.True(t, strings.HasPrefix(p.RenderedContext, "CONTEXT INCOMPLETE"))
	})
}

func TestCount(t *testing.T) {
	t.Parallel()
	n, err := Count("hello world")
	require.NoError(t, err)
	require.Equal(t, 2, n, "o200k_base encodes \"hello world\" as two tokens")
}

// TestRelated: the related section lists work under way or blocked
// first, then work to do, then at most maxRelatedClosed closed items, at
// most maxRelated in all, and counts what it leaves out by status; items
// of another goal and milestone, and the item itself, are not related.
func TestRelated(t *testing.T) {
	t.Parallel()
	item := func(key, status, goal string) projections.WorkItem {
		return projections.WorkItem{WorkItem: events.WorkItem{Key: key, Title: "t " + key, Status: status, Goal: goal}}
	}
	it := item("K-00", "ready", "G")
	brief := func(key, status, goal string) projections.ItemBrief {
		return projections.ItemBrief{Key: key, Status: status, Goal: goal}
	}
	var items []projections.ItemBrief
	items = append(items, brief("K-13", "ready", "G"), brief(it.Key, it.Status, it.Goal), brief("X-1", "in_progress", "OTHER"))
	for i, st := range []string{"completed", "completed", "planned", "cancelled", "completed", "ready", "in_progress", "completed", "blocked", "ready", "ready", "planned"} {
		items = append(items, brief(fmt.Sprintf("K-%02d", i+1), st, "G"))
	}
	briefs, more := related(it, items)
	var listed []projections.WorkItem
	for _, b := range briefs {
		listed = append(listed, item(b.Key, b.Status, b.Goal))
	}
	var got []string
	for _, r := range listed {
		got = append(got, r.Key+":"+r.Status)
	}
	require.Equal(t, []string{"K-07:in_progress", "K-09:blocked", "K-03:planned", "K-06:ready", "K-10:ready", "K-11:ready", "K-12:planned", "K-13:ready"}, got)
	require.Equal(t, []StatusCount{{"completed", 4}, {"cancelled", 1}}, more)

	in := input()
	in.Related, in.RelatedMore = listed[:2], more
	out, _, err := Compile(in)
	require.NoError(t, err)
	require.Contains(t, out.RenderedContext, "## Related work\n- K-07 (in_progress): t K-07\n- K-09 (blocked): t K-09\n- and 5 more: 4 completed, 1 cancelled\n")

	few, none := related(it, items[1:7])
	require.Len(t, few, 4, "closed items fit when there are few")
	require.Empty(t, none)
}

// TestClosedLines: a packet lists at most MaxClosedShown items closed
// since the checkpoint, the latest to close (of those closed at the
// earliest seq shown, the first in the state's order while there is
// room), in the state's order, and counts the rest with the command that
// lists every close; a short list is whole.
func TestClosedLines(t *testing.T) {
	t.Parallel()
	k := &projections.KnowledgeState{Since: 9}
	closed := func(id string, seq int64) projections.Knowledge {
		return projections.Knowledge{ID: id, Kind: "loop", Text: "q", State: "resolved", ClosedSeq: seq}
	}
	// L-30 … L-1 closed at seqs 129 … 100; L-31 and L-32 at 120 (as
	// L-21), L-33 at 112 (as L-13).
	for i := 30; i >= 1; i-- {
		k.Closed = append(k.Closed, closed(fmt.Sprintf("L-%d", i), int64(99+i)))
	}
	k.Closed = append(k.Closed, closed("L-31", 120), closed("L-32", 120), closed("L-33", 112))
	lines := closedLines("T-5", 200, k)
	require.Equal(t, "## Closed since the previous checkpoint (shown once)", lines[0])
	require.Equal(t, "- 13 closed before the 20 below (every close: awr log --work T-5 --kind checkpoint_recorded --since 9 --until 200 --json)", lines[1])
	var ids []string
	for _, l := range lines[2:] {
		ids = append(ids, strings.SplitN(strings.TrimPrefix(l, "- "), ":", 2)[0])
	}
	// After 112: L-30 … L-14 and L-31, L-32 (19); at 112, room for one:
	// L-13, listed before L-33.
	want := []string{"L-30", "L-29", "L-28", "L-27", "L-26", "L-25", "L-24", "L-23", "L-22", "L-21", "L-20", "L-19", "L-18", "L-17", "L-16", "L-15", "L-14", "L-13", "L-31", "L-32"}
	require.Equal(t, want, ids)

	// A state already Listed counts what it left out.
	listed := k.Listed(25)
	require.Len(t, listed.Closed, 25)
	require.Equal(t, 8, listed.ClosedMore)
	require.Len(t, k.Closed, 33, "Listed copies, it does not cut k")
	require.Equal(t, lines, closedLines("T-5", 200, listed))

	short := &projections.KnowledgeState{Since: 3, Closed: k.Closed[:4]}
	require.Len(t, closedLines("T-5", 200, short), 5, "a short list is whole, with no count line")
}

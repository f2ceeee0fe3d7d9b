package projections

import (
	"testing"

	"pgregory.net/rapid"
)

// TestInterval checks the dyadic placement: a closed version [from, to)
// lands on the node of its level that contains it, and the stabbing rule
// (left of the node's midpoint compare valid_from, right of it valid_to)
// decides containment exactly for every revision in the node.
func TestInterval(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		from := rapid.Int64Range(0, 1<<40).Draw(t, "from")
		to := from + 1 + rapid.Int64Range(0, 1<<20).Draw(t, "len")
		lvl, node := interval(from, to)
		if from>>lvl != node || (to-1)>>lvl != node {
			t.Fatalf("[%d,%d) not inside node %d at level %d", from, to, node, lvl)
		}
		rev := node<<lvl + rapid.Int64Range(0, 1<<lvl-1).Draw(t, "offset")
		var found bool
		if lvl == 0 || (rev>>(lvl-1))&1 == 0 {
			found = from <= rev
		} else {
			found = to > rev
		}
		if want := from <= rev && rev < to; found != want {
			t.Fatalf("[%d,%d) at rev %d: index says %v, want %v", from, to, rev, found, want)
		}
	})
}

func TestPriorityRank(t *testing.T) {
	t.Parallel()
	order := []string{"P0", "critical", "p1", "high", "p2", "medium", "p3", "low", "p10", "someday", ""}
	for i := 1; i < len(order); i++ {
		if PriorityRank(order[i-1]) > PriorityRank(order[i]) {
			t.Errorf("%q ranks after %q", order[i-1], order[i])
		}
	}
}

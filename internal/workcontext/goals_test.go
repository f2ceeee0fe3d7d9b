package workcontext

import (
	"strings"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/stretchr/testify/require"
)

// TestCompile_Goals: the item's own goal stays, short (its summary's
// first line, at most 240 runes), with no list of the other goals; an
// item that serves no declared goal gets the project's goals with the
// work serving each, the served ones first.
func TestCompile_Goals(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a shopper keeps the cart ", 20) // 500 runes
	t.Run("own goal, short", func(t *testing.T) {
		in := input()
		in.Goals = []events.Goal{{Key: "G-1", Title: "Resumable checkout", Status: "active", Summary: long + "\nSecond line."}, {Key: "G-2", Title: "Billing"}}
		in.GoalLinks = map[string]GoalLink{"G-1": {Work: 2}}
		p, _, err := Compile(in)
		require.NoError(t, err)
		want := "## Goal G-1: Resumable checkout\nStatus: active\n" + strings.TrimSpace(long[:240]) + " …\n"
		require.Contains(t, p.RenderedContext, want)
		require.NotContains(t, p.RenderedContext, "Second line.")
		require.NotContains(t, p.RenderedContext, "Billing", "the other goals are not listed")
	})
	t.Run("no goal of its own", func(t *testing.T) {
		in := input()
		in.Item.Goal = ""
		in.Goals = []events.Goal{{Key: "G-1", Title: "Resumable checkout"}, {Key: "G-2", Title: "Billing"}}
		in.GoalLinks = map[string]GoalLink{"G-2": {Work: 3, Completed: 1}}
		p, _, err := Compile(in)
		require.NoError(t, err)
		require.Contains(t, p.RenderedContext, "\n## Goals of the project (2)\n- G-2: Billing (3 items, 1 completed)\n- G-1: Resumable checkout (no work item)\n")
		var ids []string
		for _, s := range p.Selected {
			ids = append(ids, s.ID)
		}
		require.Contains(t, ids, "goals")
	})
}

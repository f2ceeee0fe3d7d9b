package projections

import (
	"context"
	"strings"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/stretchr/testify/require"
)

// TestPlans_RelatedByIndex: the reads of a context packet's related
// work at the head seek the goal or milestone asked, in an index that
// holds what they read, and scan no table: they cost the items of that
// goal or milestone, not the register (the whole-register brief, the
// check of the check, scans).
func TestPlans_RelatedByIndex(t *testing.T) {
	st, err := events.Open(context.Background(), events.DBPath(t.TempDir()), events.Options{Create: true, Projectors: Projectors()})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	plan := func(name string) string {
		var joined string
		require.NoError(t, st.Read(context.Background(), func(r *events.Reader) error {
			lines, err := events.QueryPlan(r.Conn, mustStatement(t, name))
			joined = strings.Join(lines, "\n")
			return err
		}))
		return joined
	}
	for name, want := range map[string]string{
		"item_brief_goal_current":      "SEARCH p_work_items USING COVERING INDEX p_work_items_goal (goal=?)",
		"item_goal_count_current":      "SEARCH p_work_items USING COVERING INDEX p_work_items_goal (goal=?)",
		"item_brief_milestone_current": "SEARCH p_work_items USING COVERING INDEX p_work_items_milestone (<expr>=?)",
	} {
		got := plan(name)
		require.Contains(t, got, want, "%s:\n%s", name, got)
		require.NotContains(t, got, "SCAN", "%s:\n%s", name, got)
	}
	require.Contains(t, plan("item_brief_current"), "SCAN p_work_items", "the whole register's briefs")
}

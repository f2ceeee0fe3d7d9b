package projections

import (
	"zombiezen.com/go/sqlite"
)

// RelatedBriefsHead lists, at the head, the current work items whose
// goal is goal or whose milestone is milestone (either empty: none by
// it), each once, as briefs, in no set order: what ItemBriefsAt gives of
// them (Milestone set on those found by their milestone alone, the items
// of goal being found by it first), read from the goal and milestone
// indexes, which hold the columns: it costs the items it returns, not the
// register.
func RelatedBriefsHead(conn *sqlite.Conn, goal, milestone string) ([]ItemBrief, error) {
	var out []ItemBrief
	add := func(st *sqlite.Stmt, onMilestone string) {
		out = append(out, ItemBrief{Key: st.GetText("key"), SourcePath: st.GetText("source_path"), Ordinal: int(st.GetInt64("ordinal")),
			Status: st.GetText("status"), Goal: st.GetText("goal"), Milestone: onMilestone})
	}
	if goal != "" {
		if err := query(conn, "item_brief_goal_current", func(st *sqlite.Stmt) { st.SetText(":goal", goal) },
			func(st *sqlite.Stmt) error { add(st, ""); return nil }); err != nil {
			return nil, err
		}
	}
	if milestone != "" {
		// The items of goal were listed above: only the others.
		if err := query(conn, "item_brief_milestone_current", func(st *sqlite.Stmt) {
			st.SetText(":milestone", milestone)
			st.SetText(":goal", goal)
		}, func(st *sqlite.Stmt) error { add(st, milestone); return nil }); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// GoalCountHead counts, at the head, the current work items whose goal
// is goal, and how many of those are completed, through the goal index
// (the items of that goal, not the register).
func GoalCountHead(conn *sqlite.Conn, goal string) (work, completed int, err error) {
	err = query(conn, "item_goal_count_current", func(st *sqlite.Stmt) {
		st.SetText(":goal", goal)
		st.SetText(":completed", StatusCompleted)
	}, func(st *sqlite.Stmt) error {
		work, completed = int(st.GetInt64("n")), int(st.GetInt64("done"))
		return nil
	})
	return work, completed, err
}

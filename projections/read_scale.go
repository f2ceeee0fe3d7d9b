package projections

import (
	"zombiezen.com/go/sqlite"
)

// RelatedBriefsHead lists, at the head, the current work items whose
// goal is goal or whose milestone is milestone (either empty: none by
// it), each once, as briefs (Milestone set for those on it), in no set
// order: what ItemBriefsAt gives of them, read through the goal and
// milestone indexes, so that it costs the items it returns, not the
// register.
func RelatedBriefsHead(conn *sqlite.Conn, goal, milestone string) ([]ItemBrief, error) {
	type place struct {
		key, source string
		ordinal     int
	}
	var out []ItemBrief
	at := map[place]int{}
	add := func(st *sqlite.Stmt, onMilestone bool) error {
		b := ItemBrief{Key: st.GetText("key"), SourcePath: st.GetText("source_path"), Ordinal: int(st.GetInt64("ordinal")),
			Status: st.GetText("status"), Goal: st.GetText("goal")}
		id := place{b.Key, b.SourcePath, b.Ordinal}
		i, seen := at[id]
		if !seen {
			i = len(out)
			at[id] = i
			out = append(out, b)
		}
		if onMilestone {
			out[i].Milestone = milestone
		}
		return nil
	}
	if goal != "" {
		if err := query(conn, "item_brief_goal_current", func(st *sqlite.Stmt) { st.SetText(":goal", goal) },
			func(st *sqlite.Stmt) error { return add(st, false) }); err != nil {
			return nil, err
		}
	}
	if milestone != "" {
		if err := query(conn, "item_brief_milestone_current", func(st *sqlite.Stmt) { st.SetText(":milestone", milestone) },
			func(st *sqlite.Stmt) error { return add(st, true) }); err != nil {
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

package workcontext

import (
	"fmt"
	"strings"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/projections"
)

// maxGoals bounds the goals the optional goals chunk lists.
const maxGoals = 12

// maxGoalSummary bounds, in runes, the summary of the work item's own
// goal in the required goal chunk: the goal stays in every packet, short
// (awr intake inspect shows it whole).
const maxGoalSummary = 240

// GoalLink is how many work items serve a goal (name it as theirs), and
// how many of those are completed.
type GoalLink struct {
	Work      int
	Completed int
}

// goalLinks counts, per goal key, the work items that serve it.
func goalLinks(items []projections.WorkItem) map[string]GoalLink {
	out := map[string]GoalLink{}
	for _, it := range items {
		if it.Goal == "" {
			continue
		}
		l := out[it.Goal]
		l.Work++
		if it.Status == projections.StatusCompleted {
			l.Completed++
		}
		out[it.Goal] = l
	}
	return out
}

// goalLines renders the project's goals, each with the work that serves
// it, the work item's own marked: the optional chunk that a tight budget
// drops first among the goals (the own goal is a required chunk). Nil
// when the project has no goal besides the item's own.
func goalLines(in Input) []string {
	own := ""
	if in.Item != nil {
		own = in.Item.Goal
	}
	others := 0
	for _, g := range in.Goals {
		if g.Key != own {
			others++
		}
	}
	if others == 0 {
		return nil
	}
	// The own goal first, the others in the register's order.
	goals := make([]events.Goal, 0, len(in.Goals))
	for _, g := range in.Goals {
		if g.Key == own {
			goals = append(goals, g)
		}
	}
	for _, g := range in.Goals {
		if g.Key != own {
			goals = append(goals, g)
		}
	}
	lines := []string{fmt.Sprintf("## Goals of the project (%d)", len(goals))}
	for i, g := range goals {
		if i == maxGoals {
			lines = append(lines, fmt.Sprintf("- … %d more: awr intake inspect", len(goals)-maxGoals))
			break
		}
		line := "- " + SafeText(g.Key) + ": " + SafeText(g.Title)
		switch l := in.GoalLinks[g.Key]; {
		case l.Work == 0:
			line += " (no work item serves it)"
		default:
			line += fmt.Sprintf(" (served by %d work items, %d completed)", l.Work, l.Completed)
		}
		if g.Key == own {
			line += "; this work serves it"
		}
		lines = append(lines, line)
	}
	return lines
}

// shortSummary is a goal's summary as the required goal chunk shows it:
// its first line, at most maxGoalSummary runes.
func shortSummary(s string) string {
	s, _, cut := strings.Cut(strings.TrimSpace(s), "\n")
	if rs := []rune(s); len(rs) > maxGoalSummary {
		s, cut = string(rs[:maxGoalSummary]), true
	}
	if cut {
		s = strings.TrimSpace(s) + " …"
	}
	return s
}

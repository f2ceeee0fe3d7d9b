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

// goalLines renders the project's other goals, each with the work that
// serves it: the optional chunk that a tight budget drops (the item's own
// goal is the required goal chunk). Nil when the project has no goal
// besides the item's own.
func goalLines(in Input) []string {
	own := ""
	if in.Item != nil {
		own = in.Item.Goal
	}
	// The goals some work serves first, then the others, each in the
	// register's order.
	var others, unserved []events.Goal
	for _, g := range in.Goals {
		switch {
		case g.Key == own:
		case in.GoalLinks[g.Key].Work > 0:
			others = append(others, g)
		default:
			unserved = append(unserved, g)
		}
	}
	others = append(others, unserved...)
	if len(others) == 0 {
		return nil
	}
	lines := []string{fmt.Sprintf("## Other goals of the project (%d)", len(others))}
	for i, g := range others {
		if i == maxGoals {
			lines = append(lines, fmt.Sprintf("- … %d more: awr intake inspect", len(others)-maxGoals))
			break
		}
		line := "- " + SafeText(g.Key) + ": " + SafeText(g.Title)
		if l := in.GoalLinks[g.Key]; l.Work > 0 {
			line += fmt.Sprintf(" (%d items, %d completed)", l.Work, l.Completed)
		} else {
			line += " (no work item)"
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

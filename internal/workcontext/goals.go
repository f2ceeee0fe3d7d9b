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

// goalLinks counts, per goal of goals, the work items among items that
// serve it (a goal no item serves has no entry).
func goalLinks(items []projections.ItemBrief, goals []events.Goal) map[string]GoalLink {
	declared := map[string]bool{}
	for _, g := range goals {
		declared[g.Key] = true
	}
	out := map[string]GoalLink{}
	for _, it := range items {
		if !declared[it.Goal] {
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

// showsGoals reports whether the packet lists the project's goals (the
// optional chunk goalLines makes): there are goals and the item serves
// none of them.
func (in *Input) showsGoals() bool {
	if len(in.Goals) == 0 {
		return false
	}
	if in.Item != nil {
		for _, g := range in.Goals {
			if g.Key == in.Item.Goal {
				return false
			}
		}
	}
	return true
}

// goalLines renders the project's goals, each with how many work items
// serve it and how many of those are completed, for a work item that
// serves none of them (it names no goal, or one no source declares): the
// optional chunk goals, which a tight budget drops. An item with a goal
// of its own has it in the required goal chunk, and the work serving it
// in the related work (same goal); the others are not listed, so that
// every packet does not pay for the whole organization (awr status and
// awr intake inspect list them all). Nil when there is nothing to list.
func goalLines(in Input) []string {
	if !in.showsGoals() {
		return nil
	}
	// The goals some work serves first, then the others, each in the
	// register's order.
	var goals, unserved []events.Goal
	for _, g := range in.Goals {
		if in.GoalLinks[g.Key].Work > 0 {
			goals = append(goals, g)
		} else {
			unserved = append(unserved, g)
		}
	}
	goals = append(goals, unserved...)
	lines := []string{fmt.Sprintf("## Goals of the project (%d)", len(goals))}
	for i, g := range goals {
		if i == maxGoals {
			lines = append(lines, fmt.Sprintf("- … %d more: awr intake inspect", len(goals)-maxGoals))
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

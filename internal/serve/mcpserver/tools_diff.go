package mcpserver

import "github.com/awr-dev/awr/internal/project"

// diffTools holds awr_diff, the auditor's comparison of two revisions.
var diffTools = []entry{
	toolOf(tool{name: "awr_diff", title: "Diff two revisions", readOnly: true,
		desc: "What changed between revisions from and to (the head when omitted), as `awr diff --from R1 --to R2 --json`: the events in (from, to] (seq, kind, stream, actor, a summary) and, per read model (sessions, claims, checkpoints, knowledge, work_items, bindings, seats), each entity added, removed or changed with its fields before and after. " +
			"work, session or seat (at most one) narrows both the events and the entities; the cost follows what changed, not the log's length. " +
			"The answer holds a page of each (limit, default 50): events_total and changed count them all; events_next_cursor and changes_next_cursor, when more follow, are the events_cursor and changes_cursor of the next page (pass to as well, so the page is of the same diff); whole asks for everything."},
		op((*project.Project).Diff)),
}

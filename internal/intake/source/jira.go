package source

import (
	"strings"

	"github.com/awr-dev/awr/events"
)

// JiraCSV is the adapter of Jira's CSV export (Filters → Export → CSV).
const JiraCSV = "jira_csv"

func init() { register(JiraCSV, parseJira) }

// jiraStatus are the statuses of Jira's default workflows.
var jiraStatus = map[string]string{
	"to do": "planned", "backlog": "planned", "selected for development": "ready", "in progress": "in_progress",
	"in review": "in_progress", "done": "completed", "won't do": "cancelled", "blocked": "blocked",
}

// parseJira is the jira_csv adapter. Each row is an issue keyed by
// "Issue key" (PROJ-123): Summary the title, Status through Jira's
// workflow words, Priority, Assignee the owner, every Labels column a
// tag, Sprint the Group, Description the summary. "Inward issue link
// (Blocks)" names the issues that block this one: required dependencies.
// "Parent" (the parent's key or its Issue id) makes the issue a part of
// its parent, which depends on it.
func parseJira(path string, content []byte, opts Options) Result {
	d := newRegDoc(path, content, opts, jiraStatus)
	t, ok := d.csvExport("Jira", "Issue key", "Summary", "Status")
	if !ok {
		return d.res
	}
	idKey := map[string]string{}
	for i := range t.rows {
		if id := t.get(i, "issue id"); id != "" {
			idKey[id] = t.get(i, "issue key")
		}
	}
	return d.rowsToItems(t, rowFields{
		key: "issue key", title: "summary", status: "status", priority: "priority", owner: "assignee",
		tags: "labels", group: "sprint", summary: "description", kind: "issue type",
		deps: "inward issue link (blocks)", parent: "parent", parentIDs: idKey,
	})
}

// rowFields names the columns of a CSV export.
type rowFields struct {
	key, title, status, priority, owner, tags, group, summary, kind, deps, parent string
	parentIDs                                                                     map[string]string
}

// rowsToItems makes one item of each row.
func (d *regDoc) rowsToItems(t *csvTable, f rowFields) Result {
	index := map[string]int{}
	type link struct{ parent, child string }
	var links []link
	for i := range t.rows {
		n := t.lines[i]
		key := t.get(i, f.key)
		if key == "" {
			d.issue(IssueMissingKey, n, "", "the row at line %d has no %s; it is skipped", n, f.key)
			continue
		}
		it := events.WorkItem{Key: key, Title: t.get(i, f.title), Priority: t.get(i, f.priority), Owner: t.get(i, f.owner),
			Tags: t.all(i, f.tags), Group: t.get(i, f.group), Summary: t.get(i, f.summary), Kind: t.get(i, f.kind)}
		if len(it.Tags) == 1 && strings.Contains(it.Tags[0], ",") {
			it.Tags = splitList(it.Tags[0])
		}
		if it.Title == "" {
			d.issue(IssueMissingTitle, n, key, "item %s has no title", key)
		}
		it.Status, it.RawStatus = d.status(t.get(i, f.status), n, key)
		for _, dep := range t.all(i, f.deps) {
			for _, k := range splitList(dep) {
				addDep(&it, k)
			}
		}
		if p := t.get(i, f.parent); p != "" {
			if k, ok := f.parentIDs[p]; ok {
				p = k
			}
			it.Parent = p
			links = append(links, link{p, key})
		}
		it.Source = d.ref(n, n)
		if _, dup := index[key]; !dup {
			index[key] = len(d.res.Items)
		}
		d.res.Items = append(d.res.Items, it)
	}
	for _, l := range links {
		if i, ok := index[l.parent]; ok {
			addDep(&d.res.Items[i], l.child)
		}
	}
	return d.done()
}

package source

// LinearCSV is the adapter of Linear's CSV export (Settings → Import /
// Export → Export CSV).
const LinearCSV = "linear_csv"

func init() { register(LinearCSV, parseLinear) }

// linearStatus are the statuses of Linear's default workflow.
var linearStatus = map[string]string{
	"triage": "draft", "backlog": "planned", "todo": "planned", "in progress": "in_progress", "in review": "in_progress",
	"done": "completed", "canceled": "cancelled", "duplicate": "cancelled",
}

// parseLinear is the linear_csv adapter. Each row is an issue keyed by
// ID (ENG-123): Title, Status through Linear's workflow words, Priority,
// Assignee the owner, Labels (comma-separated) the tags, Project the
// Group, Description the summary. "Parent issue" makes the issue a part
// of its parent, which depends on it.
func parseLinear(path string, content []byte, opts Options) Result {
	d := newRegDoc(path, content, opts, linearStatus)
	t, ok := d.csvExport("Linear", "ID", "Title", "Status")
	if !ok {
		return d.res
	}
	return d.rowsToItems(t, rowFields{
		key: "id", title: "title", status: "status", priority: "priority", owner: "assignee",
		tags: "labels", group: "project", summary: "description", parent: "parent issue",
	})
}

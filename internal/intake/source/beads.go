package source

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/awr-dev/awr/events"
)

// BeadsJSONL is the adapter of beads' .beads/issues.jsonl.
const BeadsJSONL = "beads_jsonl"

func init() { register(BeadsJSONL, parseBeads) }

// beadsStatus are beads' status words.
var beadsStatus = map[string]string{
	"open": "planned", "in_progress": "in_progress", "blocked": "blocked", "closed": "completed",
	"deferred": "planned", "tombstone": "cancelled", "pinned": "planned", "hooked": "in_progress",
}

type beadsIssue struct {
	ID           string `json:"id"`
	Title        string `json:"title"`
	Description  string `json:"description"`
	Acceptance   string `json:"acceptance_criteria"`
	Status       string `json:"status"`
	Priority     *int   `json:"priority"`
	IssueType    string `json:"issue_type"`
	Assignee     string `json:"assignee"`
	Owner        string `json:"owner"`
	Labels       []string
	Dependencies []struct {
		IssueID     string `json:"issue_id"`
		DependsOnID string `json:"depends_on_id"`
		Type        string `json:"type"`
	} `json:"dependencies"`
}

// parseBeads is the beads_jsonl adapter: one issue a line, keyed by its
// id (bd-a1b2, or the project's prefix). A "blocks" dependency is a
// required dependency; a "parent-child" one makes the issue a part of its
// parent (Parent), and the parent depends on it; "related" and
// "discovered-from" links are not dependencies. Priority 0–4 becomes
// P0–P4, issue_type the Kind. A line that is not a JSON object is
// reported at its line and skipped, never half-read.
func parseBeads(path string, content []byte, opts Options) Result {
	d := newRegDoc(path, content, opts, beadsStatus)
	if !d.text() {
		return d.res
	}
	index := map[string]int{}
	type parentLink struct{ parent, child string }
	var parents []parentLink
	for i, raw := range bytes.Split(content, []byte("\n")) {
		n := i + 1
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 {
			continue
		}
		var b beadsIssue
		if err := json.Unmarshal(raw, &b); err != nil {
			d.issue(IssueMalformed, n, "", "line %d is not a beads issue: %v; it is skipped", n, err)
			continue
		}
		key := strings.TrimSpace(b.ID)
		if key == "" {
			d.issue(IssueMissingKey, n, "", "the issue at line %d has no id; it is skipped", n)
			continue
		}
		it := events.WorkItem{Key: key, Title: strings.TrimSpace(b.Title), Summary: strings.TrimSpace(b.Description), Kind: b.IssueType, Tags: b.Labels}
		if it.Title == "" {
			d.issue(IssueMissingTitle, n, key, "item %s has no title", key)
		}
		if b.Priority != nil {
			it.Priority = fmt.Sprintf("P%d", *b.Priority)
		}
		it.Owner = b.Assignee
		if it.Owner == "" {
			it.Owner = b.Owner
		}
		if a := strings.TrimSpace(b.Acceptance); a != "" {
			it.Acceptance = []string{a}
		}
		it.Status, it.RawStatus = d.status(b.Status, n, key)
		for _, dep := range b.Dependencies {
			switch dep.Type {
			case "blocks", "":
				addDep(&it, dep.DependsOnID)
			case "parent-child":
				it.Parent = dep.DependsOnID
				parents = append(parents, parentLink{dep.DependsOnID, key})
			}
		}
		it.Source = d.ref(n, n)
		if _, dup := index[key]; !dup {
			index[key] = len(d.res.Items)
		}
		d.res.Items = append(d.res.Items, it)
	}
	for _, p := range parents {
		if i, ok := index[p.parent]; ok {
			addDep(&d.res.Items[i], p.child)
		}
	}
	return d.done()
}

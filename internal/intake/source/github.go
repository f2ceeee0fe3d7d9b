package source

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/lazyre"
)

// GitHubIssuesJSON is the adapter of the JSON `gh issue list --json
// number,title,state,labels,milestone,body,assignees` prints.
const GitHubIssuesJSON = "github_issues_json"

func init() { register(GitHubIssuesJSON, parseGitHubIssues) }

// githubStatus are gh's issue states.
var githubStatus = map[string]string{"open": "planned", "closed": "completed"}

type ghIssue struct {
	Number    *int                    `json:"number"`
	Title     string                  `json:"title"`
	State     string                  `json:"state"`
	Body      string                  `json:"body"`
	Labels    []struct{ Name string } `json:"labels"`
	Milestone *struct {
		Title string `json:"title"`
	} `json:"milestone"`
	Assignees []struct{ Login string } `json:"assignees"`
}

// parseGitHubIssues is the github_issues_json adapter: an array of
// issues, each keyed #NUMBER. OPEN is planned and CLOSED completed (a
// "blocked" label makes an open issue blocked); labels become tags, the
// milestone's title the Milestone and the Group, the first assignee the
// Owner, the body the Summary. "Depends on #12" or "blocked by #12" in
// the body adds a required dependency.
func parseGitHubIssues(path string, content []byte, opts Options) Result {
	d := newRegDoc(path, content, opts, githubStatus)
	if !d.text() {
		return d.res
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(content, &raws); err != nil {
		d.issue(IssueMalformed, jsonErrLine(d, err), "", "not the JSON array gh issue list --json prints: %v; nothing of it is indexed", err)
		return d.res
	}
	cursor := 0
	for _, raw := range raws {
		n := 1
		if i := bytes.Index(d.content[cursor:], raw); i >= 0 {
			n = d.lineAt(int64(cursor + i))
			cursor += i + len(raw)
		}
		var g ghIssue
		if err := json.Unmarshal(raw, &g); err != nil || g.Number == nil {
			d.issue(IssueMissingKey, n, "", "an entry at line %d is not an issue with a number; it is skipped", n)
			continue
		}
		key := "#" + strconv.Itoa(*g.Number)
		it := events.WorkItem{Key: key, Title: strings.TrimSpace(g.Title), Summary: strings.TrimSpace(g.Body)}
		if it.Title == "" {
			d.issue(IssueMissingTitle, n, key, "item %s has no title", key)
		}
		blocked := false
		for _, l := range g.Labels {
			it.Tags = append(it.Tags, l.Name)
			blocked = blocked || strings.EqualFold(l.Name, "blocked")
		}
		if g.Milestone != nil {
			it.Milestone, it.Group = g.Milestone.Title, g.Milestone.Title
		}
		if len(g.Assignees) > 0 {
			it.Owner = g.Assignees[0].Login
		}
		it.Status, it.RawStatus = d.status(g.State, n, key)
		if blocked && it.Status == "planned" {
			it.Status, it.RawStatus = "blocked", g.State
		}
		for _, m := range ghDepRe.FindAllStringSubmatch(g.Body, -1) {
			addDep(&it, "#"+m[1])
		}
		it.Source = d.ref(n, d.lineAt(int64(cursor)))
		d.res.Items = append(d.res.Items, it)
	}
	return d.done()
}

// ghDepRe finds "depends on #12" and "blocked by #12" in an issue body.
var ghDepRe = lazyre.New(`(?i)(?:depends\s+on|blocked\s+by)\s+#([0-9]+)`)

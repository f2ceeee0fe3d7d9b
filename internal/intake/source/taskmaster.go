package source

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/awr-dev/awr/events"
)

// TaskmasterJSON is the adapter of Taskmaster's .taskmaster/tasks/tasks.json.
const TaskmasterJSON = "taskmaster_json"

func init() { register(TaskmasterJSON, parseTaskmaster) }

// taskmasterStatus are Taskmaster's status words.
var taskmasterStatus = map[string]string{
	"pending": "planned", "in-progress": "in_progress", "done": "completed", "review": "in_progress",
	"deferred": "planned", "cancelled": "cancelled", "blocked": "blocked",
}

type tmTask struct {
	ID           json.RawMessage   `json:"id"`
	Title        string            `json:"title"`
	Description  string            `json:"description"`
	Details      string            `json:"details"`
	TestStrategy string            `json:"testStrategy"`
	Status       string            `json:"status"`
	Priority     string            `json:"priority"`
	Dependencies []json.RawMessage `json:"dependencies"`
	Subtasks     []tmTask          `json:"subtasks"`
}

// parseTaskmaster is the taskmaster_json adapter. The file is either
// {"tasks": [...]} (before tags) or one object per tag, {"master":
// {"tasks": [...]}, ...}. A task's key is its id ("7"), a subtask's its
// task's id, a dot and its own ("7.2"); a tag other than master prefixes
// its keys ("feature-x:7"). Dependencies become required dependencies: a
// task's ids name tasks, a subtask's bare ids name its sibling subtasks
// and "7.2" names any subtask; each subtask's Parent is its task, and a
// task depends on its subtasks. Status words: pending, in-progress, done,
// review, deferred, cancelled, blocked. The tag is the item's Group.
func parseTaskmaster(path string, content []byte, opts Options) Result {
	d := newRegDoc(path, content, opts, taskmasterStatus)
	if !d.text() {
		return d.res
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(content, &top); err != nil {
		d.issue(IssueMalformed, jsonErrLine(d, err), "", "not a Taskmaster tasks.json: %v; nothing of it is indexed", err)
		return d.res
	}
	if raw, ok := top["tasks"]; ok {
		d.taskmasterTag("", raw)
		return d.done()
	}
	tags := make([]string, 0, len(top))
	for t := range top {
		tags = append(tags, t)
	}
	sort.Slice(tags, func(i, j int) bool { // master first, then by name
		if (tags[i] == "master") != (tags[j] == "master") {
			return tags[i] == "master"
		}
		return tags[i] < tags[j]
	})
	for _, t := range tags {
		var tag struct {
			Tasks json.RawMessage `json:"tasks"`
		}
		if json.Unmarshal(top[t], &tag) != nil || tag.Tasks == nil {
			continue // metadata or another kind of entry
		}
		d.taskmasterTag(t, tag.Tasks)
	}
	return d.done()
}

// taskmasterTag adds the tasks of one tag.
func (d *regDoc) taskmasterTag(tag string, raw json.RawMessage) {
	var tasks []tmTask
	if err := json.Unmarshal(raw, &tasks); err != nil {
		d.issue(IssueMalformed, d.lineAt(int64(bytes.Index(d.content, raw))), "", "tasks of tag %q: %v; they are not indexed", tag, err)
		return
	}
	prefix := ""
	if tag != "" && tag != "master" {
		prefix = tag + ":"
	}
	base := bytes.Index(d.content, raw)
	cursor := base
	line := func(id string) int {
		// The line of the object holding this id, searched forward from
		// the previous one, so repeated ids keep their order.
		if cursor < 0 {
			return 0
		}
		best := -1
		for _, pat := range []string{`"id": ` + id, `"id":` + id} {
			from := cursor
			for {
				i := bytes.Index(d.content[from:], []byte(pat))
				if i < 0 {
					break
				}
				end := from + i + len(pat)
				if end >= len(d.content) || !isIDByte(d.content[end]) {
					if best < 0 || from+i < best {
						best = from + i
					}
					break
				}
				from = end
			}
		}
		if best < 0 {
			return d.lineAt(int64(base))
		}
		cursor = best + 1
		return d.lineAt(int64(best))
	}
	for _, t := range tasks {
		id := tmID(t.ID)
		key := prefix + id
		if id == "" {
			d.issue(IssueMissingKey, line(""), "", "a task of tag %q has no id; it is skipped", tag)
			continue
		}
		n := line(string(t.ID))
		it := d.taskmasterItem(key, t, n)
		it.Group = tag
		for _, dep := range t.Dependencies {
			addDep(&it, prefix+tmDep(dep, ""))
		}
		var subs []events.WorkItem
		for _, s := range t.Subtasks {
			sid := tmID(s.ID)
			if sid == "" {
				d.issue(IssueMissingKey, n, key, "a subtask of %s has no id; it is skipped", key)
				continue
			}
			sk := key + "." + sid
			sub := d.taskmasterItem(sk, s, line(string(s.ID)))
			sub.Group, sub.Parent = tag, key
			for _, dep := range s.Dependencies {
				addDep(&sub, prefix+tmDep(dep, id))
			}
			addDep(&it, sk)
			subs = append(subs, sub)
		}
		d.res.Items = append(d.res.Items, it)
		d.res.Items = append(d.res.Items, subs...)
	}
}

func (d *regDoc) taskmasterItem(key string, t tmTask, line int) events.WorkItem {
	it := events.WorkItem{Key: key, Title: strings.TrimSpace(t.Title), Priority: t.Priority, Summary: strings.TrimSpace(t.Description)}
	if it.Title == "" {
		d.issue(IssueMissingTitle, line, key, "item %s has no title", key)
	}
	if t.TestStrategy != "" {
		it.Acceptance = []string{strings.TrimSpace(t.TestStrategy)}
	}
	it.Status, it.RawStatus = d.status(t.Status, line, key)
	it.Source = d.ref(line, line)
	return it
}

// tmID reads an id, a number or a string.
func tmID(raw json.RawMessage) string {
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s)
	}
	return ""
}

// tmDep reads a dependency: a bare id names a sibling (a subtask of
// parent when parent is set), "7.2" a subtask anywhere.
func tmDep(raw json.RawMessage, parent string) string {
	id := tmID(raw)
	if id == "" || strings.Contains(id, ".") || parent == "" {
		return id
	}
	if _, err := strconv.Atoi(id); err != nil {
		return id
	}
	return parent + "." + id
}

// jsonErrLine is the line a JSON error points at, the last line for a
// truncated document.
func jsonErrLine(d *regDoc, err error) int {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case asErr(err, &se):
		return d.lineAt(se.Offset)
	case asErr(err, &te):
		return d.lineAt(te.Offset)
	}
	return d.lineAt(int64(len(d.content)))
}

func asErr[T error](err error, target *T) bool {
	e, ok := err.(T)
	if ok {
		*target = e
	}
	return ok
}

// isIDByte reports whether c may continue a JSON number or string id.
func isIDByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_'
}

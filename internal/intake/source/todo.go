package source

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/awr-dev/awr/events"
)

// MarkdownTodo is the adapter of a TODO.md or ROADMAP.md whose checklist
// items carry no KEY.
const MarkdownTodo = "markdown_todo"

func init() { register(MarkdownTodo, parseTodo) }

// parseTodo is the markdown_todo adapter: every checkbox line is an item,
// nested or not.
//
//	## 1.0: Knowledge map
//	- [ ] Knowledge space
//	    - [x] Custom project view
//
// An item whose text opens with a KEY (ABC-12) keeps it; any other is
// keyed by its text: "todo-" and the first 8 hex digits of the SHA-256 of
// its whitespace-folded, lowercased title (a second item of the same
// title in the file takes "-2", and so on), so ticking, moving or
// reordering an item keeps its key and renaming it makes a new one. The
// checkbox gives the status, and an unticked item under a section named
// like a Kanban lane (In Progress, Review, Blocked, Done: see
// obsidian_kanban) takes the lane's; the nearest heading above is the
// Group; a
// checkbox line nested under another is a part of it (Parent), and the
// outer item depends on it. Nested lines without a checkbox are the
// item's acceptance entries.
func parseTodo(path string, content []byte, opts Options) Result {
	return readChecklist(path, content, opts, "todo", func(heading string) (string, string) { return heading, laneStatus(heading) })
}

// readChecklist reads content as a nested checklist of kind (see
// nestedChecklist), its items unstamped and their dependency graph
// checked.
func readChecklist(path string, content []byte, opts Options, kind string, lane func(heading string) (string, string)) Result {
	res := unstamped(readMarkdown(path, content, opts, func(d *mdDoc) { d.nestedChecklist(kind, lane) }))
	checkGraph(&res, path, Options{KeyPattern: opts.KeyPattern})
	return res
}

// nestedChecklist reads every checkbox line as an item (see parseTodo).
// lane maps the nearest level-1 to 3 heading to the items' Group and a
// status the lane gives an unticked item ("" for none).
func (d *mdDoc) nestedChecklist(prefix string, lane func(heading string) (group, status string)) {
	type open struct {
		idx    int // into d.res.Items
		indent int
	}
	var stack []open
	group, laneStatus := "", ""
	seen := map[string]int{}
	for _, l := range d.lines {
		if l.skip || strings.TrimSpace(l.text) == "" {
			continue
		}
		if level, text, ok := headingOf(l); ok {
			if level <= 3 {
				group, laneStatus = lane(cleanToken(text))
			}
			stack = stack[:0]
			continue
		}
		li, ok := listItemOf(l)
		if !ok {
			if l.indent == 0 {
				stack = stack[:0]
			}
			continue
		}
		for len(stack) > 0 && stack[len(stack)-1].indent >= li.indent {
			stack = stack[:len(stack)-1]
		}
		if li.checkbox == "" {
			if len(stack) > 0 && li.text != "" {
				p := &d.res.Items[stack[len(stack)-1].idx]
				p.Acceptance = append(p.Acceptance, li.text)
				p.Source.LineEnd = l.n
			}
			continue
		}
		it := events.WorkItem{Group: group}
		if k, ok := d.keys.leading(li.text); ok {
			it.Key, it.Title = k.key, k.rest
		} else {
			it.Title = tidyTitle(li.text)
			it.Key = derivedKey(prefix, it.Title, seen)
		}
		if it.Title == "" {
			d.issue(IssueMissingTitle, l.n, it.Key, "item %s has no title", it.Key)
		}
		raw := li.checkbox
		if laneStatus != "" && raw == "[ ]" {
			raw = laneStatus
		}
		it.Status, it.RawStatus = d.status(raw, l.n, it.Key, &it)
		it.Source = d.ref(l.n, l.n)
		if len(stack) > 0 {
			p := &d.res.Items[stack[len(stack)-1].idx]
			it.Parent = p.Key
			addDep(p, it.Key)
		}
		d.res.Items = append(d.res.Items, it)
		stack = append(stack, open{idx: len(d.res.Items) - 1, indent: li.indent})
	}
}

// derivedKey keys an item that has no KEY by its title (see parseTodo).
func derivedKey(prefix, title string, seen map[string]int) string {
	norm := strings.ToLower(strings.Join(strings.Fields(title), " "))
	sum := sha256.Sum256([]byte(norm))
	key := prefix + "-" + hex.EncodeToString(sum[:4])
	seen[key]++
	if n := seen[key]; n > 1 {
		key = fmt.Sprintf("%s-%d", key, n)
	}
	return key
}

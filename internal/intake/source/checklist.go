package source

import (
	"github.com/awr-dev/awr/internal/lazyre"
	"strings"
)

func init() { register(MarkdownChecklist, parseChecklist) }

// parseChecklist is the markdown_checklist adapter. It reads checkbox
// list items that open with a KEY:
//
//	## Cart
//	- [ ] CART-12: Persist the cart (P1) depends on CART-3, CART-4
//	- [x] CART-3 Add the cart table
//	* [X] **CART-4** — Cart API (blocked: waiting on auth)
//
// A KEY is a letter, then letters and digits in segments joined by '-' or
// '_', holding a digit (ABC-12, T-001, CART_1); it may be wrapped in **,
// backticks or brackets, and a ':', '—', '–', '-' or '|' may follow it.
// Bullets are -, * or + (or 1.); the checkbox gives the status through
// NormalizeStatus: "[ ]" planned, "[x]"/"[X]" completed, and any other
// box ("[/]", "[-]", ...) unknown unless status_map maps it.
//
// Markers in the line set fields and leave the title:
//
//   - (P1) or !p1 sets Priority "P1";
//   - (label: value) sets the field the label names: (blocked: reason),
//     (owner: ana), (next: write tests), (goal: G-1), (priority: high);
//   - "depends on KEY, KEY", "depends: KEY", "deps: KEY" or "after: KEY",
//     bare or in parentheses, add required dependencies;
//   - a trailing "Blocker: reason" (or "Blocked: reason") sets Blocker.
//
// Lines indented under an item belong to it: nested list lines (with or
// without a checkbox) become Acceptance entries, except a nested
// `Label: value` naming a field other than key, title or status, which
// sets that field; indented prose becomes the Summary. A nested checkbox
// line with its own KEY is a separate item (a subtask). A checkbox line
// without a KEY outside any item is reported as missing_key and skipped.
// Headings and unindented prose end the open items.
func parseChecklist(path string, content []byte, opts Options) Result {
	return readMarkdown(path, content, opts, (*mdDoc).checklist)
}

// openItem is a checklist item whose nested lines may still follow.
type openItem struct {
	dr      *draft
	indent  int
	start   int
	end     int
	summary []string
}

func (d *mdDoc) checklist() {
	var stack []*openItem
	closeTo := func(indent int) {
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			o := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if len(o.summary) > 0 {
				o.dr.setField(fieldSummary, strings.Join(o.summary, " "), o.start)
			}
			d.finish(o.dr, o.start, o.end)
		}
	}
	for _, l := range d.lines {
		if l.skip || strings.TrimSpace(l.text) == "" {
			continue
		}
		if _, _, ok := headingOf(l); ok {
			closeTo(-1)
			continue
		}
		if li, ok := listItemOf(l); ok {
			closeTo(li.indent)
			if li.checkbox != "" {
				if k, ok := d.keys.leading(li.text); ok {
					dr := d.newDraft(k.key, "", l.n)
					dr.item.Title = d.checklistMarkers(dr, k.rest, l.n)
					dr.statusRaw, dr.statusLine, dr.hasStatus = li.checkbox, l.n, true
					stack = append(stack, &openItem{dr: dr, indent: li.indent, start: l.n, end: l.n})
					continue
				}
				if len(stack) == 0 {
					d.issue(IssueMissingKey, l.n, "", "checklist item %q has no KEY (like T-1 or ABC-12); it is skipped", clip(li.text))
					continue
				}
			}
			if len(stack) > 0 {
				o := stack[len(stack)-1]
				d.nestedLine(o.dr, li.text, l.n)
				o.end = l.n
			}
			continue
		}
		if len(stack) > 0 && l.indent > stack[len(stack)-1].indent {
			o := stack[len(stack)-1]
			o.summary = append(o.summary, strings.TrimSpace(l.text))
			o.end = l.n
			continue
		}
		closeTo(-1)
	}
	closeTo(-1)
}

// nestedLine adds a line nested under a checklist item: a field label or
// an acceptance entry.
func (d *mdDoc) nestedLine(dr *draft, text string, n int) {
	if label, value, ok := parseLabel(text); ok {
		if f, ok := d.fields.label(label); ok && f != fieldKey && f != fieldTitle && f != fieldStatus {
			dr.setField(f, value, n)
			return
		}
	}
	if text != "" {
		dr.item.Acceptance = append(dr.item.Acceptance, text)
	}
}

var (
	parenRe    = lazyre.New(`\(([^()]*)\)`)
	prioTagRe  = lazyre.New(`^[Pp][0-9]$`)
	bangPrioRe = lazyre.New(`(?:^|\s)!([Pp][0-9])\b`)
	depsRe     = lazyre.New(depsPattern(keyPattern))
	blockerRe  = lazyre.New(`(?i)(?:^|\s|[,;—–-])(?:blocker|blocked)\s*:\s*(.+)$`)
)

// depsPattern is the expression of a depends-on marker whose keys match
// key.
func depsPattern(key string) string {
	return `(?i)(?:^|\s|[,;])(?:depends\s+on\s*:?|depends\s*:|deps\s*:|after\s*:)\s*(` +
		`(?:` + key + `)(?:\s*(?:,|&|\band\b)?\s*(?:` + key + `))*)`
}

// depsIndex finds a depends-on marker in s whose keys have the register's
// shape (FindStringSubmatchIndex).
func (ks keyShape) depsIndex(s string) []int {
	if ks.deps != nil {
		return ks.deps.FindStringSubmatchIndex(s)
	}
	return depsRe.FindStringSubmatchIndex(s)
}

// checklistMarkers takes the markers out of a checklist title, setting
// the fields they name, and returns what is left as the title.
func (d *mdDoc) checklistMarkers(dr *draft, s string, n int) string {
	s = parenRe.ReplaceAllStringFunc(s, func(m string) string {
		inner := strings.TrimSpace(m[1 : len(m)-1])
		if prioTagRe.MatchString(inner) {
			dr.setField(fieldPriority, strings.ToUpper(inner), n)
			return " "
		}
		if sm := d.keys.depsIndex(inner); sm != nil && sm[0] == 0 {
			dr.setField(fieldDependsOn, inner[sm[2]:sm[3]], n)
			return " "
		}
		if label, value, ok := parseLabel(inner); ok {
			if f, ok := d.fields.label(label); ok && f != fieldKey && f != fieldTitle && f != fieldStatus {
				dr.setField(f, value, n)
				return " "
			}
		}
		return m
	})
	for {
		sm := d.keys.depsIndex(s)
		if sm == nil {
			break
		}
		dr.setField(fieldDependsOn, s[sm[2]:sm[3]], n)
		s = s[:sm[0]] + " " + s[sm[1]:]
	}
	s = bangPrioRe.ReplaceAllStringFunc(s, func(m string) string {
		dr.setField(fieldPriority, strings.ToUpper(strings.TrimLeft(strings.TrimSpace(m), "!")), n)
		return " "
	})
	if sm := blockerRe.FindStringSubmatchIndex(s); sm != nil {
		dr.setField(fieldBlocker, s[sm[2]:sm[3]], n)
		s = s[:sm[0]]
	}
	return tidyTitle(s)
}

// tidyTitle collapses runs of space and trims separators left dangling by
// removed markers: a separator standing alone at either end ("title —",
// ", title"), never one attached to a word ("forward-only;").
func tidyTitle(s string) string {
	f := strings.Fields(s)
	for len(f) > 0 && strings.Trim(f[0], ":—–-|;,") == "" {
		f = f[1:]
	}
	for len(f) > 0 && strings.Trim(f[len(f)-1], ":—–-|;,") == "" {
		f = f[:len(f)-1]
	}
	return strings.Join(f, " ")
}

// clip shortens text quoted in an issue message.
func clip(s string) string {
	if r := []rune(s); len(r) > 60 {
		return string(r[:57]) + "..."
	}
	return s
}

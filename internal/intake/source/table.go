package source

import (
	"github.com/awr-dev/awr/internal/lazyre"
	"strings"
)

func init() { register(MarkdownTable, parseTable) }

// parseTable is the markdown_table adapter. It reads every pipe table in
// the file (a header row, then a delimiter row) whose header names a key
// column; each body row is one item:
//
//	| ID    | Title           | Status      | Depends on  | Next step        |
//	|-------|-----------------|-------------|-------------|------------------|
//	| API-1 | Rate limit keys | in progress | API-0       | add the 429 test |
//
// Headers are matched case-insensitively, with emphasis, '-' or '_' and
// trailing colons ignored, first against the manifest's field_map, then
// these synonyms:
//
//	key          key, id, task id, ticket, ref (and task, see below)
//	title        title, name, task name (and task or summary, see below)
//	status       status, state
//	priority     priority, prio, pri, p
//	owner        owner, assignee, who, assigned to
//	depends_on   depends on, depends, dependencies, deps, blocked by, requires, after
//	next_action  next action, next step, next
//	acceptance   acceptance, acceptance criteria, done when, definition of done, dod
//	blocker      blocker, blockers, blocked
//	goal, milestone, kind (kind, type), summary (description), tags (labels), paths (files)
//
// "Task" is the key column when no other column is, else the title;
// "Summary" is the title when no title column exists, else the summary.
// A key cell that links to a section of the file, [Title](#anchor), keys
// its item by the anchor and gives the title. Phase, group, sprint or lane
// columns set the Group; the status marks of generated roadmaps (✅ 🚧 📋
// ⏳ 💡 ❌) are statuses.
// The leftmost of two columns naming one field wins.
//
// Cells: `\|` is a pipe inside a cell; key cells may be decorated (**K**,
// `K`, [K](url)); depends-on cells list keys separated by commas, spaces
// or "and"; acceptance cells split on ';' and <br>; "-", "—", "none" and
// "n/a" mean empty. A table without a key column is skipped with a
// missing_key issue; a table without a status column yields items with
// status unknown and one issue at its header. A row with too few or too
// many cells is reported and read as far as it goes (missing cells are
// empty, extra ones dropped); a row without a key is reported and skipped.
func parseTable(path string, content []byte, opts Options) Result {
	return readMarkdown(path, content, opts, func(d *mdDoc) { d.tables(false) })
}

var delimCellRe = lazyre.New(`^:?-+:?$`)

// isDelimiterRow reports a table delimiter row: cells of dashes with
// optional alignment colons, and at least one pipe.
func isDelimiterRow(l mdLine) bool {
	if l.skip || !strings.Contains(l.text, "|") {
		return false
	}
	for _, c := range splitRow(l.text) {
		if !delimCellRe.MatchString(strings.ReplaceAll(c, " ", "")) {
			return false
		}
	}
	return true
}

// splitRow splits a table row into trimmed cells. Outer pipes are
// optional; `\|` is a literal pipe.
func splitRow(s string) []string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "|")
	if strings.HasSuffix(s, "|") && !strings.HasSuffix(s, `\|`) {
		s = s[:len(s)-1]
	}
	var cells []string
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == '|':
			b.WriteByte('|')
			i++
		case s[i] == '|':
			cells = append(cells, strings.TrimSpace(b.String()))
			b.Reset()
		default:
			b.WriteByte(s[i])
		}
	}
	return append(cells, strings.TrimSpace(b.String()))
}

// tables reads every table in the file. In a plan (plan true), a table
// with neither a key nor a status column is prose and skipped silently.
func (d *mdDoc) tables(plan bool) {
	ls := d.lines
	for i := 0; i+1 < len(ls); i++ {
		h := ls[i]
		if h.skip || !strings.Contains(h.text, "|") || !isDelimiterRow(ls[i+1]) || isDelimiterRow(h) {
			continue
		}
		header := splitRow(h.text)
		if n := len(splitRow(ls[i+1].text)); n != len(header) {
			d.issue(IssueMalformed, ls[i+1].n, "", "table delimiter row has %d cells, its header has %d", n, len(header))
		}
		end := i + 2
		for end < len(ls) && !ls[end].skip && strings.Contains(ls[end].text, "|") {
			end++
		}
		d.table(header, h.n, ls[i+2:end], plan)
		i = end - 1
	}
}

func (d *mdDoc) table(header []string, headerLine int, rows []mdLine, plan bool) {
	cols := d.fields.columns(header)
	keyCol, statusCol := -1, -1
	for c, f := range cols {
		switch f {
		case fieldKey:
			keyCol = c
		case fieldStatus:
			statusCol = c
		}
	}
	if keyCol < 0 {
		if !plan || statusCol >= 0 {
			d.issue(IssueMissingKey, headerLine, "", "table has no key column (headers: %s); it is skipped: add an id column or map one with field_map key", strings.Join(header, ", "))
		}
		return
	}
	if statusCol < 0 {
		d.issue(IssueStatusUnmapped, headerLine, "", "table has no status column; its items are unknown: add one or map one with field_map status")
	}
	for _, r := range rows {
		cells := splitRow(r.text)
		if isBlankRow(cells) {
			continue
		}
		key, anchorTitle := "", ""
		if keyCol < len(cells) {
			key = cleanKey(cells[keyCol])
			// A generated roadmap links each item to its section:
			// [Title](#anchor) keys the item by the anchor.
			if m := anchorLinkRe.FindStringSubmatch(strings.TrimSpace(cells[keyCol])); m != nil && !d.keys.is(cleanKey(m[1])) {
				key, anchorTitle = m[2], cleanToken(m[1])
			}
		}
		if len(cells) != len(header) {
			d.issue(IssueMalformed, r.n, key, "table row has %d cells, its header has %d", len(cells), len(header))
			for len(cells) < len(header) {
				cells = append(cells, "")
			}
			cells = cells[:len(header)]
		}
		if isNil(key) {
			d.issue(IssueMissingKey, r.n, "", "table row has no key in column %q; it is skipped", header[keyCol])
			continue
		}
		dr := d.newDraft(key, "", r.n)
		dr.quiet = statusCol < 0
		for c, f := range cols {
			if f != "" && f != fieldKey {
				dr.setField(f, cells[c], r.n)
			}
		}
		if anchorTitle != "" {
			dr.setField(fieldTitle, anchorTitle, r.n)
		}
		d.finish(dr, r.n, r.n)
	}
}

// anchorLinkRe is a key cell that links to a section of the file.
var anchorLinkRe = lazyre.New(`^\[([^\]]+)\]\(#([^()\s]+)\)$`)

// isBlankRow reports a row of empty or delimiter cells.
func isBlankRow(cells []string) bool {
	for _, c := range cells {
		if c != "" && !delimCellRe.MatchString(strings.ReplaceAll(c, " ", "")) {
			return false
		}
	}
	return true
}

package source

import (
	"strings"
)

func init() {
	register(MarkdownHeadings, parseHeadings)
	register(AWRMarkdownLedger, parseHeadings)
}

// parseHeadings is the markdown_headings adapter. Each heading that opens
// with a KEY is one item:
//
//	## AUTH-3 — Rotate session keys
//	**Status:** in progress
//	Priority: P1
//	- Depends on: AUTH-1, AUTH-2
//	Next action: write the rotation job
//	Acceptance:
//	- old keys verify for 24h
//	- new sessions use the new key
//
// The KEY is followed by '—', '–', '-', ':' or '|' and the title, or is
// decorated (**KEY**, `KEY`, [KEY]) or alone; "## UTF-8 cleanup" is no
// item. The item spans from its heading to the line before the next
// heading of the same or a higher level, or the next KEY heading (a
// deeper KEY heading is an item of its own); trailing blank lines are not
// part of it.
//
// In the body, `Label: value` lines set fields; labels may be bold
// (**Status:** or **Status**:) or bulleted, and are matched like table
// headers (field_map first, then the synonyms listed on parseTable, with
// Summary naming the summary). `Acceptance:` (or `Depends on:`, `Tags:`,
// `Paths:`) with nothing after it, or a sub-heading naming the field,
// starts a list: the bullet lines that follow are its entries until a
// line that is neither a bullet nor blank, or a known label (a bullet
// nested deeper than a bulleted `- Acceptance:` stays an entry). A
// sub-heading naming another field takes the paragraph under it as the
// value. Inline `Acceptance: a; b` splits on ';'. The first paragraph of
// prose becomes the Summary when no Summary label is given. An item
// without a Status line has status unknown and an issue.
//
// A heading without a KEY, outside any item, whose lines up to the next
// heading hold a Status line is reported as missing_key; other headings
// without a KEY are sections and ignored.
func parseHeadings(path string, content []byte, opts Options) Result {
	d := newDoc(path, content, opts)
	if d.unreadable {
		return d.res
	}
	d.headingItems(false)
	return d.done()
}

// headingItems reads every KEY heading as an item. Outside a plan, a
// heading without a KEY but with a Status line is reported as missing_key.
func (d *mdDoc) headingItems(plan bool) {
	hs := d.headings()
	inItemUntil := -1
	for hi, h := range hs {
		end := len(d.lines)
		next := len(d.lines)
		for _, h2 := range hs[hi+1:] {
			if next == len(d.lines) {
				next = h2.idx
			}
			if h2.level <= h.level || h2.key != "" {
				end = h2.idx
				break
			}
		}
		if h.key == "" {
			if !plan && h.idx >= inItemUntil && d.hasStatusLabel(d.lines[h.idx+1:next]) {
				d.issue(IssueMissingKey, d.lines[h.idx].n, "", "heading %q has a status but no KEY (like T-1 or ABC-12); it is skipped", clip(h.text))
			}
			continue
		}
		inItemUntil = end
		dr := newDraft(h.key, h.title, d.lines[h.idx].n)
		for _, a := range h.attrs {
			// Attributes are labels written on the heading: matched as
			// labels are, and set before the body's.
			if f, ok := d.fields.label(a[0]); ok && f != fieldKey {
				dr.setField(f, a[1], d.lines[h.idx].n)
			}
		}
		last := d.body(dr, d.lines[h.idx+1:end])
		d.finish(dr, d.lines[h.idx].n, last)
	}
}

// hasStatusLabel reports whether lines hold a Status label line.
func (d *mdDoc) hasStatusLabel(lines []mdLine) bool {
	for _, l := range lines {
		if l.skip {
			continue
		}
		t := strings.TrimSpace(l.text)
		if li, ok := listItemOf(l); ok {
			t = li.text
		}
		if label, _, ok := parseLabel(t); ok {
			if f, ok := d.fields.label(label); ok && f == fieldStatus {
				return true
			}
		}
	}
	return false
}

// body reads the lines under a heading into dr (see parseHeadings) and
// returns the number of its last non-blank line (the heading's own when
// there is none).
func (d *mdDoc) body(dr *draft, lines []mdLine) int {
	last := dr.line
	var (
		section     string   // the field a sub-heading or bare list label opened, "" for none
		listIndent  = -1     // indent of a bulleted list label; deeper bullets stay entries
		fromHeading bool     // section was opened by a sub-heading
		sectionText []string // prose of a scalar section
		summary     []string
		summaryDone bool
	)
	endParagraph := func() {
		if len(summary) > 0 {
			summaryDone = true
		}
	}
	closeSection := func() {
		if section != "" && len(sectionText) > 0 {
			dr.setField(section, strings.Join(sectionText, " "), last)
		}
		section, listIndent, fromHeading, sectionText = "", -1, false, nil
	}
	for _, l := range lines {
		t := strings.TrimSpace(l.text)
		if l.skip {
			if t != "" {
				last = l.n
			}
			endParagraph()
			continue
		}
		if t == "" {
			endParagraph()
			continue
		}
		last = l.n
		if _, text, ok := headingOf(l); ok {
			endParagraph()
			closeSection()
			if f, ok := d.fields.label(text); ok && f != fieldKey {
				section, fromHeading = f, true
			} else {
				section = "-" // a section of its own, not read
			}
			continue
		}
		if strings.HasPrefix(t, "|") {
			endParagraph()
			continue
		}
		li, isList := listItemOf(l)
		text := t
		if isList {
			text = li.text
		}
		nestedEntry := isList && listIndent >= 0 && li.indent > listIndent && isListField(section)
		if label, value, ok := parseLabel(text); ok && !nestedEntry {
			if f, ok := d.fields.label(label); ok && f != fieldKey {
				endParagraph()
				if section != "-" || (isListField(f) && value == "") {
					closeSection()
				}
				if isListField(f) && value == "" {
					section = f
					if isList {
						listIndent = li.indent
					}
				} else {
					dr.setField(f, value, l.n)
				}
				continue
			}
		}
		switch {
		case section == "-":
		case section != "" && isListField(section):
			switch {
			case isList && section == fieldAcceptance:
				if text != "" {
					dr.item.Acceptance = append(dr.item.Acceptance, text)
				}
			case isList:
				dr.setField(section, text, l.n)
			case !fromHeading:
				closeSection()
				if !summaryDone {
					summary = append(summary, t)
				}
			}
		case section != "":
			sectionText = append(sectionText, text)
		case !isList && !summaryDone:
			summary = append(summary, t)
		default:
			endParagraph()
		}
	}
	closeSection()
	if len(summary) > 0 {
		dr.setField(fieldSummary, strings.Join(summary, " "), dr.line)
	}
	return last
}

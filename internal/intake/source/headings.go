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
	return readMarkdown(path, content, opts, func(d *mdDoc) { d.headingItems(false) })
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
		dr := d.newDraft(h.key, h.title, d.lines[h.idx].n)
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

// bodyScan is the state of mdDoc.body.
type bodyScan struct {
	dr          *draft
	last        int      // the number of the last non-blank line
	section     string   // the field a sub-heading or bare list label opened, "" for none
	listIndent  int      // indent of a bulleted list label (-1: none); deeper bullets stay entries
	fromHeading bool     // section was opened by a sub-heading
	sectionText []string // prose of a scalar section
	summary     []string
	summaryDone bool
}

func (b *bodyScan) endParagraph() {
	if len(b.summary) > 0 {
		b.summaryDone = true
	}
}

func (b *bodyScan) closeSection() {
	if b.section != "" && len(b.sectionText) > 0 {
		b.dr.setField(b.section, strings.Join(b.sectionText, " "), b.last)
	}
	b.section, b.listIndent, b.fromHeading, b.sectionText = "", -1, false, nil
}

// body reads the lines under a heading into dr (see parseHeadings) and
// returns the number of its last non-blank line (the heading's own when
// there is none).
func (d *mdDoc) body(dr *draft, lines []mdLine) int {
	b := &bodyScan{dr: dr, last: dr.line, listIndent: -1}
	for _, l := range lines {
		t := strings.TrimSpace(l.text)
		if l.skip {
			if t != "" {
				b.last = l.n
			}
			b.endParagraph()
			continue
		}
		if t == "" {
			b.endParagraph()
			continue
		}
		b.last = l.n
		if _, text, ok := headingOf(l); ok {
			b.endParagraph()
			b.closeSection()
			if f, ok := d.fields.label(text); ok && f != fieldKey {
				b.section, b.fromHeading = f, true
			} else {
				b.section = "-" // a section of its own, not read
			}
			continue
		}
		if strings.HasPrefix(t, "|") {
			b.endParagraph()
			continue
		}
		li, isList := listItemOf(l)
		text := t
		if isList {
			text = li.text
		}
		nestedEntry := isList && b.listIndent >= 0 && li.indent > b.listIndent && isListField(b.section)
		if label, value, ok := parseLabel(text); ok && !nestedEntry {
			if f, ok := d.fields.label(label); ok && f != fieldKey {
				b.label(l, li, isList, f, value)
				continue
			}
		}
		b.content(l, t, text, isList)
	}
	b.closeSection()
	if len(b.summary) > 0 {
		dr.setField(fieldSummary, strings.Join(b.summary, " "), dr.line)
	}
	return b.last
}

// label reads a field label on line l: a list field with no value opens
// its section, any other sets the field.
func (b *bodyScan) label(l mdLine, li listItem, isList bool, f, value string) {
	b.endParagraph()
	if b.section != "-" || (isListField(f) && value == "") {
		b.closeSection()
	}
	if isListField(f) && value == "" {
		b.section = f
		if isList {
			b.listIndent = li.indent
		}
		return
	}
	b.dr.setField(f, value, l.n)
}

// content reads a line of text (t trimmed, text without its bullet): an
// entry of the open list section, prose of a scalar one, or the summary.
func (b *bodyScan) content(l mdLine, t, text string, isList bool) {
	switch {
	case b.section == "-":
	case b.section != "" && isListField(b.section):
		switch {
		case isList && b.section == fieldAcceptance:
			if text != "" {
				b.dr.item.Acceptance = append(b.dr.item.Acceptance, text)
			}
		case isList:
			b.dr.setField(b.section, text, l.n)
		case !b.fromHeading:
			b.closeSection()
			if !b.summaryDone {
				b.summary = append(b.summary, t)
			}
		}
	case b.section != "":
		b.sectionText = append(b.sectionText, text)
	case !isList && !b.summaryDone:
		b.summary = append(b.summary, t)
	default:
		b.endParagraph()
	}
}

package source

import (
	"bytes"
	"fmt"
	"github.com/awr-dev/awr/internal/lazyre"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/awr-dev/awr/events"
)

// This file holds what the Markdown adapters share: reading lines (line
// endings, BOM, code fences, front matter and HTML comments), recognizing
// headings, list items, KEYs and `Label: value` lines, resolving field
// names, and turning collected fields into work items with their issues.

// Canonical field names, as used in Options.FieldMap.
const (
	fieldKey        = "key"
	fieldTitle      = "title"
	fieldStatus     = "status"
	fieldPriority   = "priority"
	fieldOwner      = "owner"
	fieldDependsOn  = "depends_on"
	fieldNextAction = "next_action"
	fieldAcceptance = "acceptance"
	fieldBlocker    = "blocker"
	fieldGoal       = "goal"
	fieldMilestone  = "milestone"
	fieldKind       = "kind"
	fieldSummary    = "summary"
	fieldTags       = "tags"
	fieldPaths      = "paths"
	fieldGroup      = "group"
)

// fieldNames are the canonical field names a FieldMap may use.
var fieldNames = []string{
	fieldKey, fieldTitle, fieldStatus, fieldPriority, fieldOwner, fieldDependsOn,
	fieldNextAction, fieldAcceptance, fieldBlocker, fieldGoal, fieldMilestone,
	fieldKind, fieldSummary, fieldTags, fieldPaths, fieldGroup,
}

// fieldSynonyms are the built-in header and label names, normalized (see
// normLabel), that name one field whatever else the table holds.
var fieldSynonyms = map[string]string{
	"key": fieldKey, "id": fieldKey, "task id": fieldKey, "ticket": fieldKey, "ref": fieldKey,
	"title": fieldTitle, "name": fieldTitle, "task name": fieldTitle,
	"status": fieldStatus, "state": fieldStatus,
	"priority": fieldPriority, "prio": fieldPriority, "pri": fieldPriority, "p": fieldPriority,
	"owner": fieldOwner, "assignee": fieldOwner, "who": fieldOwner, "assigned to": fieldOwner,
	"depends on": fieldDependsOn, "depends": fieldDependsOn, "dependencies": fieldDependsOn,
	"deps": fieldDependsOn, "blocked by": fieldDependsOn, "requires": fieldDependsOn, "after": fieldDependsOn,
	"next action": fieldNextAction, "next step": fieldNextAction, "next": fieldNextAction,
	"acceptance": fieldAcceptance, "acceptance criteria": fieldAcceptance, "done when": fieldAcceptance,
	"definition of done": fieldAcceptance, "dod": fieldAcceptance,
	"blocker": fieldBlocker, "blockers": fieldBlocker, "blocked": fieldBlocker,
	"goal": fieldGoal, "milestone": fieldMilestone,
	"kind": fieldKind, "type": fieldKind,
	"tags": fieldTags, "labels": fieldTags,
	"paths": fieldPaths, "files": fieldPaths,
	"group": fieldGroup, "phase": fieldGroup, "sprint": fieldGroup, "lane": fieldGroup,
}

// weakColumns are table headers whose meaning depends on the other columns:
// each takes the first of its fields no other column has claimed. "Task" is
// the key beside a title but the title beside an id; "Summary" is the title
// unless a title column exists; "Description" is the summary unless a
// "Summary" column is.
var weakColumns = map[string][]string{
	"task":        {fieldKey, fieldTitle},
	"summary":     {fieldTitle, fieldSummary},
	"description": {fieldSummary},
}

// fieldResolver maps a register's header and label names to canonical
// fields: the manifest's FieldMap first, then the built-in synonyms.
type fieldResolver struct {
	mapped map[string]string // normalized register name → canonical field
}

func newFieldResolver(opts Options) fieldResolver {
	r := fieldResolver{mapped: map[string]string{}}
	canon := map[string]string{}
	for _, f := range fieldNames {
		canon[normLabel(f)] = f
	}
	// Sorted so that two fields mapped to one name resolve the same way
	// every run.
	keys := make([]string, 0, len(opts.FieldMap))
	for k := range opts.FieldMap {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		f, ok := canon[normLabel(k)]
		name := normLabel(opts.FieldMap[k])
		if !ok || name == "" {
			continue
		}
		if _, taken := r.mapped[name]; !taken {
			r.mapped[name] = f
		}
	}
	return r
}

// label resolves a `Label:` name, a sub-heading or a marker name.
func (r fieldResolver) label(name string) (string, bool) {
	n := normLabel(name)
	if f, ok := r.mapped[n]; ok {
		return f, true
	}
	if f, ok := fieldSynonyms[n]; ok {
		return f, true
	}
	if n == "summary" {
		return fieldSummary, true
	}
	return "", false
}

// columns resolves a table's header cells to fields, "" for columns no
// field claims. Mapped and built-in names claim first (leftmost wins a
// tie); weak names then take what is left.
func (r fieldResolver) columns(header []string) []string {
	out := make([]string, len(header))
	taken := map[string]bool{}
	claim := func(i int, f string) {
		if out[i] == "" && !taken[f] {
			out[i], taken[f] = f, true
		}
	}
	for i, h := range header {
		if f, ok := r.mapped[normLabel(h)]; ok {
			claim(i, f)
		}
	}
	for i, h := range header {
		if f, ok := fieldSynonyms[normLabel(h)]; ok {
			claim(i, f)
		}
	}
	for i, h := range header {
		for _, f := range weakColumns[normLabel(h)] {
			if out[i] != "" {
				break
			}
			claim(i, f)
		}
	}
	return out
}

// normLabel normalizes a header or label for comparison: emphasis and
// trailing colons dropped, lowercased, '_' and '-' read as spaces, runs of
// space collapsed.
func normLabel(s string) string {
	s = strings.TrimSpace(s)
	s = strings.Trim(s, "*_` \t")
	s = strings.TrimRight(s, ": \t")
	s = strings.Trim(s, "*_` \t")
	s = strings.ToLower(s)
	s = strings.NewReplacer("_", " ", "-", " ").Replace(s)
	return strings.Join(strings.Fields(s), " ")
}

// mdLine is one line of a Markdown file.
type mdLine struct {
	n      int    // 1-based line number
	text   string // without the line ending
	indent int    // columns of leading white space, a tab to the next multiple of 4
	skip   bool   // inside a code fence, front matter or HTML comment
}

// mdDoc is one Markdown file being parsed, with what it has yielded so far.
type mdDoc struct {
	path       string
	hash       string
	opts       Options
	fields     fieldResolver
	keys       keyShape // what a KEY looks like here (key_pattern)
	lines      []mdLine
	unreadable bool
	res        Result
}

// newDoc splits content into lines. A NUL byte marks the file unreadable
// (binary or UTF-16); invalid UTF-8 is replaced and reported once; an
// unclosed code fence or comment is reported at its opening line.
// readMarkdown reads content as Markdown with read, one adapter's reading
// of the document, and returns what it found; a file that does not read
// as text (a NUL byte) gives its issue alone.
func readMarkdown(path string, content []byte, opts Options, read func(*mdDoc)) Result {
	d := newDoc(path, content, opts)
	if d.unreadable {
		return d.res
	}
	read(d)
	return d.done()
}

func newDoc(path string, content []byte, opts Options) *mdDoc {
	d := &mdDoc{path: path, hash: Hash(content), opts: opts, fields: newFieldResolver(opts), keys: newKeyShape(opts.KeyPattern)}
	if i := bytes.IndexByte(content, 0); i >= 0 {
		d.issue(IssueUnreadable, 1+bytes.Count(content[:i], []byte("\n")), "",
			"file holds a NUL byte: it looks binary or UTF-16, not UTF-8 Markdown")
		d.unreadable = true
		return d
	}
	raw := strings.Split(string(content), "\n")
	if len(raw) > 0 {
		raw[0] = strings.TrimPrefix(raw[0], "\ufeff")
	}
	d.lines = make([]mdLine, len(raw))
	badUTF8 := false
	for i, t := range raw {
		t = strings.TrimSuffix(t, "\r")
		if !utf8.ValidString(t) {
			if !badUTF8 {
				d.issue(IssueMalformed, i+1, "", "invalid UTF-8; the bad bytes are read as U+FFFD")
				badUTF8 = true
			}
			t = strings.ToValidUTF8(t, "\uFFFD")
		}
		d.lines[i] = mdLine{n: i + 1, text: t, indent: indentOf(t)}
	}
	d.markSkipped()
	return d
}

// markSkipped marks front matter (a first line "---", a non-blank second
// line, up to the closing "---" or "..."), fenced code and HTML comment
// lines, whose contents are never read as register entries.
func (d *mdDoc) markSkipped() {
	ls := d.lines
	start := 0
	if len(ls) > 1 && strings.TrimSpace(ls[0].text) == "---" && strings.TrimSpace(ls[1].text) != "" {
		for j := 1; j < len(ls); j++ {
			if t := strings.TrimSpace(ls[j].text); t == "---" || t == "..." {
				for k := 0; k <= j; k++ {
					ls[k].skip = true
				}
				start = j + 1
				break
			}
		}
	}
	for i := start; i < len(ls); i++ {
		t := strings.TrimSpace(ls[i].text)
		switch {
		case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
			ch := t[0]
			n := len(t) - len(strings.TrimLeft(t, string(ch)))
			if ch == '`' && strings.Contains(t[n:], "`") {
				continue // an inline code span, not a fence
			}
			closed := false
			ls[i].skip = true
			for j := i + 1; j < len(ls); j++ {
				ls[j].skip = true
				u := strings.TrimSpace(ls[j].text)
				if m := len(u) - len(strings.TrimLeft(u, string(ch))); m >= n && strings.TrimSpace(u[m:]) == "" {
					i, closed = j, true
					break
				}
			}
			if !closed {
				d.issue(IssueMalformed, ls[i].n, "", "code fence is never closed; the rest of the file is read as code")
				return
			}
		case strings.HasPrefix(t, "<!--"):
			ls[i].skip = true
			if strings.Contains(t[4:], "-->") {
				continue
			}
			closed := false
			for j := i + 1; j < len(ls); j++ {
				ls[j].skip = true
				if strings.Contains(ls[j].text, "-->") {
					i, closed = j, true
					break
				}
			}
			if !closed {
				d.issue(IssueMalformed, ls[i].n, "", "HTML comment is never closed; the rest of the file is read as a comment")
				return
			}
		}
	}
}

func indentOf(s string) int {
	n := 0
	for _, c := range s {
		switch c {
		case ' ':
			n++
		case '\t':
			n += 4 - n%4
		default:
			return n
		}
	}
	return n
}

// issue records a source issue at line (0 when the file as a whole is at
// fault).
func (d *mdDoc) issue(code string, line int, key, format string, args ...any) {
	d.res.Issues = append(d.res.Issues, events.SourceIssue{
		Code: code, Path: d.path, Line: line, Key: key, Message: fmt.Sprintf(format, args...),
	})
}

func (d *mdDoc) ref(start, end int) events.SourceRef {
	if end < start {
		end = start
	}
	return events.SourceRef{Path: d.path, LineStart: start, LineEnd: end, ContentHash: d.hash}
}

// firstContentLine is the number of the first non-blank line read as
// Markdown, 0 when there is none.
func (d *mdDoc) firstContentLine() int {
	for _, l := range d.lines {
		if !l.skip && strings.TrimSpace(l.text) != "" {
			return l.n
		}
	}
	return 0
}

// done orders the items and issues by line and reports duplicate keys.
func (d *mdDoc) done() Result {
	type seen struct {
		line int
		what string
	}
	sort.SliceStable(d.res.Items, func(i, j int) bool {
		return d.res.Items[i].Source.LineStart < d.res.Items[j].Source.LineStart
	})
	dup := func(kind string, key string, line int, first map[string]seen) {
		if f, ok := first[key]; ok {
			d.issue(IssueDuplicateKey, line, key, "%s key %s at line %d repeats line %d; the first is used", kind, key, line, f.line)
			return
		}
		first[key] = seen{line: line}
	}
	items := map[string]seen{}
	for _, it := range d.res.Items {
		dup("item", it.Key, it.Source.LineStart, items)
	}
	goals := map[string]seen{}
	for _, g := range d.res.Goals {
		dup("goal", g.Key, g.Source.LineStart, goals)
	}
	rules := map[string]seen{}
	for _, r := range d.res.Rules {
		dup("rule", r.Key, r.Source.LineStart, rules)
	}
	sort.SliceStable(d.res.Issues, func(i, j int) bool { return d.res.Issues[i].Line < d.res.Issues[j].Line })
	return d.res
}

// heading is an ATX heading (`## text`); setext headings are not read.
type heading struct {
	idx   int // index into lines
	level int
	text  string
	key   string // the KEY it opens with, if any (see headingKey)
	title string // the text after the KEY and its separator
	// attrs are the key=value pairs of a trailing attribute block
	// (`## Title {#id key=value}`), in order.
	attrs [][2]string
}

// headingOf reads an ATX heading: up to three spaces, 1–6 '#', a space,
// the text, an optional closing run of '#'.
func headingOf(l mdLine) (level int, text string, ok bool) {
	if l.skip || l.indent > 3 {
		return 0, "", false
	}
	t := strings.TrimLeft(l.text, " \t")
	for level < len(t) && t[level] == '#' {
		level++
	}
	if level == 0 || level > 6 || (level < len(t) && t[level] != ' ' && t[level] != '\t') {
		return 0, "", false
	}
	text = strings.TrimSpace(t[level:])
	if c := strings.TrimRight(text, "#"); c != text && (c == "" || strings.HasSuffix(c, " ")) {
		text = strings.TrimSpace(c)
	}
	return level, text, true
}

// headings lists the file's headings, with the KEY each opens with when
// it opens with one in the heading-register form (see headingKey).
func (d *mdDoc) headings() []heading {
	var hs []heading
	for i, l := range d.lines {
		lv, text, ok := headingOf(l)
		if !ok {
			continue
		}
		h := heading{idx: i, level: lv, text: text}
		if rest, id, attrs, ok := headingAttrs(text); ok {
			h.text, h.attrs = rest, attrs
			if id != "" {
				h.key, h.title = id, rest
				if k, t, ok := d.keys.heading(rest); ok && k == id {
					h.title = t // "## T-1 — Title {#T-1}": the key once
				}
				hs = append(hs, h)
				continue
			}
		}
		h.key, h.title, _ = d.keys.heading(h.text)
		hs = append(hs, h)
	}
	return hs
}

// headingAttrs splits a trailing attribute block off a heading, as AWR's
// markdown ledgers (and Pandoc) write it: `Title {#id key=value
// key2="two words" .class}`. It returns the heading text without the
// block, the #id ("" without one) and the key=value pairs (classes are
// dropped); ok is false when the heading ends in no well-formed block.
func headingAttrs(text string) (rest, id string, attrs [][2]string, ok bool) {
	t := strings.TrimRight(text, " \t")
	if !strings.HasSuffix(t, "}") {
		return text, "", nil, false
	}
	open := strings.LastIndexByte(t, '{')
	if open < 0 {
		return text, "", nil, false
	}
	inner := t[open+1 : len(t)-1]
	for len(inner) > 0 {
		inner = strings.TrimLeft(inner, " \t")
		if inner == "" {
			break
		}
		var tok string
		if i := strings.IndexAny(inner, " \t"); i >= 0 && !strings.Contains(inner[:i], "=\"") {
			tok, inner = inner[:i], inner[i:]
		} else if eq := strings.Index(inner, "=\""); eq >= 0 && !strings.ContainsAny(inner[:eq], " \t") {
			end := strings.IndexByte(inner[eq+2:], '"')
			if end < 0 {
				return text, "", nil, false
			}
			tok, inner = inner[:eq+2+end+1], inner[eq+2+end+1:]
		} else {
			tok, inner = inner, ""
		}
		switch {
		case strings.HasPrefix(tok, "#") && len(tok) > 1:
			id = tok[1:]
		case strings.HasPrefix(tok, "."):
		case strings.Contains(tok, "="):
			k, v, _ := strings.Cut(tok, "=")
			if k == "" {
				return text, "", nil, false
			}
			attrs = append(attrs, [2]string{k, strings.Trim(v, "\"")})
		default:
			return text, "", nil, false
		}
	}
	return strings.TrimRight(t[:open], " \t"), id, attrs, true
}

// headingKey reads `KEY — title`, `KEY: title`, `KEY - title`,
// `KEY – title`, a decorated KEY (`**KEY** title`, “ `KEY` title “,
// `[KEY] title`) or a lone KEY. A bare KEY followed by a space and more
// words does not count: "UTF-8 cleanup" is a title, not item UTF-8.
func headingKey(text string) (key, title string, ok bool) { return keyShape{}.heading(text) }

// heading is headingKey with the register's key shape.
func (ks keyShape) heading(text string) (key, title string, ok bool) {
	k, ok := ks.leading(text)
	if !ok || !(k.sep || k.decorated || k.rest == "") {
		return "", "", false
	}
	return k.key, k.rest, true
}

// listItem is a bullet (`-`, `*`, `+`) or ordered (`1.`, `1)`) list line.
type listItem struct {
	indent   int
	checkbox string // "[ ]", "[x]", ... when the item opens with one
	text     string // after the marker and checkbox, trimmed
}

// listItemOf reads a list line. A checkbox is `[c]` with c a space, x, X
// or ASCII punctuation (`[/]`, `[-]`, `[~]`, ...), kept verbatim for
// NormalizeStatus.
func listItemOf(l mdLine) (listItem, bool) {
	if l.skip {
		return listItem{}, false
	}
	t := strings.TrimLeft(l.text, " \t")
	var rest string
	switch {
	case t == "":
		return listItem{}, false
	case t[0] == '-' || t[0] == '*' || t[0] == '+':
		if len(t) > 1 && t[1] != ' ' && t[1] != '\t' {
			return listItem{}, false
		}
		if isThematicBreak(t) {
			return listItem{}, false
		}
		rest = t[1:]
	default:
		n := 0
		for n < len(t) && n < 9 && t[n] >= '0' && t[n] <= '9' {
			n++
		}
		if n == 0 || n >= len(t) || (t[n] != '.' && t[n] != ')') || (n+1 < len(t) && t[n+1] != ' ' && t[n+1] != '\t') {
			return listItem{}, false
		}
		rest = t[n+1:]
	}
	li := listItem{indent: l.indent, text: strings.TrimSpace(rest)}
	if r := li.text; len(r) >= 3 && r[0] == '[' && r[2] == ']' && isBoxChar(r[1]) && (len(r) == 3 || r[3] == ' ' || r[3] == '\t') {
		li.checkbox, li.text = r[:3], strings.TrimSpace(r[3:])
	}
	return li, true
}

func isBoxChar(c byte) bool {
	return c == ' ' || c == 'x' || c == 'X' || (c < utf8.RuneSelf && c > ' ' && strings.IndexByte("!\"#$%&'*+,-./:;<=>?@\\^_`|~", c) >= 0)
}

func isThematicBreak(t string) bool {
	s := strings.Join(strings.Fields(t), "")
	return len(s) >= 3 && strings.Trim(s, string(s[0])) == "" && strings.IndexByte("-*_", s[0]) >= 0
}

// keyRe is a KEY: a letter, then letters and digits in segments joined by
// '-' or '_' (ABC-12, T-001, CART_1, ÜB-2); isKey adds that it holds an
// ASCII digit.
var keyRe = lazyre.New(`^` + keyPattern)

const keyPattern = `\pL[\pL\pN]*(?:[-_][\pL\pN]+)+`

func isKey(s string) bool { return keyShape{}.is(s) }

// keyShape is what a KEY looks like in one register: the built-in KEY
// (keyRe, with a digit) or, when the source sets key_pattern, that
// pattern, matched whole. The Markdown adapters (checklists, tables,
// heading registers, TODO lists) recognize keys with it, so a team's own
// keys (TASK.4, #12, 1.2) are keys there as they are in the tools'
// exports.
type keyShape struct {
	whole *regexp.Regexp // the pattern, anchored at both ends
	lead  *regexp.Regexp // the pattern at the start of a text, longest
	deps  *regexp.Regexp // a depends-on marker naming keys of the pattern
}

// newKeyShape returns the shape of pattern, the built-in one for "" (and
// for a pattern that does not compile: the manifest refuses those with a
// typed error before any file is read).
func newKeyShape(pattern string) keyShape {
	whole, err := keyPatternRe(pattern)
	if err != nil || whole == nil {
		return keyShape{}
	}
	lead := regexp.MustCompile(`^(?:` + pattern + `)`)
	lead.Longest()
	return keyShape{whole: whole, lead: lead, deps: regexp.MustCompile(depsPattern(pattern))}
}

// is reports whether s is a whole KEY.
func (ks keyShape) is(s string) bool {
	if ks.whole != nil {
		return s != "" && ks.whole.MatchString(s)
	}
	return keyRe.FindString(s) == s && s != "" && strings.ContainsAny(s, "0123456789")
}

// bare returns the KEY at the very start of s, or "".
func (ks keyShape) bare(s string) string {
	if ks.lead != nil {
		return ks.lead.FindString(s)
	}
	m := keyRe.FindString(s)
	if !strings.ContainsAny(m, "0123456789") {
		return ""
	}
	return m
}

// keyLead is a KEY found at the start of a text.
type keyLead struct {
	key       string
	rest      string // the text after the KEY and any separator, trimmed
	sep       bool   // a separator (':', '—', '–', '-', '|') followed the KEY
	decorated bool   // the KEY was wrapped: **KEY**, `KEY`, [KEY], [KEY](url)
}

// leadingKey reads a KEY at the start of s, bare or decorated, and the
// separator after it. A bare KEY must end at a space, a separator or the
// end of s ("T-1.5" and "T-1x/y" hold no KEY).
func leadingKey(s string) (keyLead, bool) { return keyShape{}.leading(s) }

// leading is leadingKey with the register's key shape.
func (ks keyShape) leading(s string) (keyLead, bool) {
	s = strings.TrimSpace(s)
	var k keyLead
	var rest string
	for _, w := range [][2]string{{"**", "**"}, {"__", "__"}, {"`", "`"}, {"[", "]"}} {
		if !strings.HasPrefix(s, w[0]) {
			continue
		}
		j := strings.Index(s[len(w[0]):], w[1])
		if j <= 0 {
			continue
		}
		inner := strings.TrimSpace(s[len(w[0]) : len(w[0])+j])
		innerSep := false
		if c := strings.TrimSpace(strings.TrimSuffix(inner, ":")); c != inner {
			inner, innerSep = c, true
		}
		if !ks.is(inner) {
			continue
		}
		k.key, k.decorated, k.sep = inner, true, innerSep
		rest = s[len(w[0])+j+len(w[1]):]
		if w[0] == "[" && strings.HasPrefix(rest, "(") {
			if e := strings.IndexByte(rest, ')'); e >= 0 {
				rest = rest[e+1:]
			}
		}
		break
	}
	if !k.decorated {
		m := ks.bare(s)
		if m == "" {
			return keyLead{}, false
		}
		rest = s[len(m):]
		if rest != "" {
			r, _ := utf8.DecodeRuneInString(rest)
			if r != ' ' && r != '\t' && r != ':' && r != '—' && r != '–' && r != '|' {
				return keyLead{}, false
			}
		}
		k.key = m
	}
	r := strings.TrimLeft(rest, " \t")
	for _, sep := range []string{":", "—", "–", "-", "|"} {
		if strings.HasPrefix(r, sep) {
			r, k.sep = r[len(sep):], true
			break
		}
	}
	k.rest = strings.TrimSpace(r)
	return k, true
}

// parseLabel reads `Label: value`, `**Label:** value` or
// `**Label**: value` (also with __). The label is at most 40 bytes and
// holds no brackets, pipes or backticks; whether it names a field is the
// caller's question.
func parseLabel(s string) (label, value string, ok bool) {
	s = strings.TrimSpace(s)
	bold := ""
	for _, w := range []string{"**", "__"} {
		if strings.HasPrefix(s, w) {
			bold, s = w, s[len(w):]
			break
		}
	}
	i := strings.IndexByte(s, ':')
	if i <= 0 || i > 40 {
		return "", "", false
	}
	label, rest := s[:i], s[i+1:]
	if bold != "" {
		switch {
		case strings.HasSuffix(label, bold):
			label = label[:len(label)-len(bold)]
		case strings.HasPrefix(rest, bold):
			rest = rest[len(bold):]
		default:
			return "", "", false
		}
	}
	label = strings.TrimSpace(label)
	if label == "" || strings.ContainsAny(label, "|[]()`*") {
		return "", "", false
	}
	return label, strings.TrimSpace(rest), true
}

var linkRe = lazyre.New(`\[([^\]]*)\]\([^)]*\)`)

// cleanToken strips what decorates a single value: links become their
// text, and wrapping **, __, *, _ or backticks go.
func cleanToken(s string) string {
	s = linkRe.ReplaceAllString(strings.TrimSpace(s), "$1")
	for {
		t := s
		for _, w := range []string{"**", "__", "`", "*", "_"} {
			if len(s) >= 2*len(w)+1 && strings.HasPrefix(s, w) && strings.HasSuffix(s, w) {
				s = strings.TrimSpace(s[len(w) : len(s)-len(w)])
			}
		}
		if s == t {
			return s
		}
	}
}

// cleanKey is cleanToken that also unwraps [KEY].
func cleanKey(s string) string {
	s = cleanToken(s)
	if len(s) >= 3 && s[0] == '[' && s[len(s)-1] == ']' {
		s = cleanToken(s[1 : len(s)-1])
	}
	return s
}

// isNil reports a value that means "nothing": empty, a dash, none, n/a.
func isNil(s string) bool {
	switch strings.ToLower(cleanToken(s)) {
	case "", "-", "--", "—", "–", "none", "n/a", "na", "nil", "null":
		return true
	}
	return false
}

var brRe = lazyre.New(`(?i)<br\s*/?>`)

// splitAcceptance splits an acceptance value on ';' and <br>, dropping
// empty parts and list markers.
func splitAcceptance(s string) []string {
	var out []string
	for _, p := range strings.Split(brRe.ReplaceAllString(s, ";"), ";") {
		p = strings.TrimSpace(p)
		if li, ok := listItemOf(mdLine{text: p}); ok {
			p = li.text
		}
		if !isNil(p) {
			out = append(out, p)
		}
	}
	return out
}

// splitKeys reads a depends-on value: keys separated by commas,
// semicolons, spaces, '&', "and" or <br>. When any token is a KEY, only
// KEYs are kept ("T-1 (soft)" and "waits on T-2" yield T-1 and T-2);
// otherwise every token is (registers with plain numeric ids).
func splitKeys(s string) []string { return keyShape{}.split(s) }

// split is splitKeys with the register's key shape.
func (ks keyShape) split(s string) []string {
	s = linkRe.ReplaceAllString(brRe.ReplaceAllString(s, ","), "$1")
	toks := strings.FieldsFunc(s, func(r rune) bool {
		return r == ',' || r == ';' || r == '&' || r == ' ' || r == '\t'
	})
	var keys, all []string
	for _, t := range toks {
		t = cleanKey(strings.TrimRight(t, ".)"))
		if isNil(t) || strings.EqualFold(t, "and") || strings.HasPrefix(t, "(") {
			continue
		}
		all = append(all, t)
		if ks.is(t) {
			keys = append(keys, t)
		}
	}
	if len(keys) > 0 {
		return keys
	}
	return all
}

// splitList splits tags on commas and spaces.
func splitList(s string) []string {
	var out []string
	for _, t := range strings.FieldsFunc(brRe.ReplaceAllString(s, ","), func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		if t = cleanToken(t); !isNil(t) {
			out = append(out, t)
		}
	}
	return out
}

// splitPaths splits paths or globs on commas and spaces; only backticks
// are stripped, since '*' and '_' belong to globs and names.
func splitPaths(s string) []string {
	var out []string
	for _, t := range strings.FieldsFunc(brRe.ReplaceAllString(s, ","), func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		if t = strings.Trim(t, "`"); !isNil(t) {
			out = append(out, t)
		}
	}
	return out
}

// draft collects one work item's fields before its status is normalized.
type draft struct {
	item       events.WorkItem
	line       int // the line naming the key
	statusRaw  string
	statusLine int
	hasStatus  bool
	quiet      bool // the missing status was reported for the whole table
	set        map[string]bool
	keys       keyShape // the register's, for the keys of depends-on values
}

func newDraft(key, title string, line int) *draft {
	return &draft{item: events.WorkItem{Key: key, Title: title}, line: line, set: map[string]bool{}}
}

// newDraft is a draft of d's register, whose depends-on values name keys
// of its shape.
func (d *mdDoc) newDraft(key, title string, line int) *draft {
	dr := newDraft(key, title, line)
	dr.keys = d.keys
	return dr
}

// isListField reports the fields whose values accumulate.
func isListField(f string) bool {
	return f == fieldAcceptance || f == fieldDependsOn || f == fieldTags || f == fieldPaths
}

// setField sets one field from a register's value. List fields
// accumulate; the first non-empty value of any other field wins; the key
// is never set this way.
func (dr *draft) setField(f, value string, line int) {
	value = strings.TrimSpace(value)
	switch f {
	case fieldAcceptance:
		dr.item.Acceptance = append(dr.item.Acceptance, splitAcceptance(value)...)
		return
	case fieldDependsOn:
	next:
		for _, k := range dr.keys.split(value) {
			for _, dep := range dr.item.DependsOn {
				if dep.Key == k {
					continue next
				}
			}
			dr.item.DependsOn = append(dr.item.DependsOn, events.Dependency{Key: k, Required: true})
		}
		return
	case fieldTags:
		dr.item.Tags = append(dr.item.Tags, splitList(value)...)
		return
	case fieldPaths:
		dr.item.Paths = append(dr.item.Paths, splitPaths(value)...)
		return
	case fieldStatus:
		if value == "" || dr.hasStatus {
			return
		}
		dr.statusRaw, dr.statusLine, dr.hasStatus = value, line, true
		return
	}
	if isNil(value) || dr.set[f] {
		return
	}
	sf, ok := scalarFields[f]
	if !ok {
		return
	}
	if sf.clean != nil {
		value = sf.clean(value)
	}
	if p := sf.of(&dr.item); *p == "" {
		*p = value
		dr.set[f] = true
	}
}

// scalarFields are the fields of one value (the first non-empty wins):
// where each goes in the item, and how its value is cleaned (nil: as
// written).
var scalarFields = map[string]struct {
	of    func(*events.WorkItem) *string
	clean func(string) string
}{
	fieldTitle:      {func(it *events.WorkItem) *string { return &it.Title }, nil},
	fieldPriority:   {func(it *events.WorkItem) *string { return &it.Priority }, cleanToken},
	fieldOwner:      {func(it *events.WorkItem) *string { return &it.Owner }, cleanToken},
	fieldNextAction: {func(it *events.WorkItem) *string { return &it.NextAction }, nil},
	fieldBlocker:    {func(it *events.WorkItem) *string { return &it.Blocker }, nil},
	fieldGoal:       {func(it *events.WorkItem) *string { return &it.Goal }, cleanKey},
	fieldMilestone:  {func(it *events.WorkItem) *string { return &it.Milestone }, cleanToken},
	fieldKind:       {func(it *events.WorkItem) *string { return &it.Kind }, cleanToken},
	fieldSummary:    {func(it *events.WorkItem) *string { return &it.Summary }, nil},
	fieldGroup:      {func(it *events.WorkItem) *string { return &it.Group }, nil},
}

// finish normalizes the draft's status, reports a missing title or status
// and adds the item, spanning lines start..end.
func (d *mdDoc) finish(dr *draft, start, end int) {
	it := dr.item
	if it.Title == "" {
		d.issue(IssueMissingTitle, dr.line, it.Key, "item %s has no title", it.Key)
	}
	switch {
	case dr.hasStatus:
		it.Status, it.RawStatus = d.status(dr.statusRaw, dr.statusLine, it.Key, &it)
	case dr.quiet:
		it.Status = Unknown
	default:
		it.Status = Unknown
		d.issue(IssueStatusUnmapped, dr.line, it.Key, "item %s has no status; it is unknown", it.Key)
	}
	it.Source = d.ref(start, end)
	d.res.Items = append(d.res.Items, it)
}

// status normalizes a raw status word. A trailing parenthetical is read as
// a comment ("blocked (waiting on keys)" is blocked, and for a blocked
// item without a blocker the comment becomes it). A word neither
// canonical nor mapped, or a status_map value that is not canonical, gives
// Unknown and an issue.
func (d *mdDoc) status(raw string, line int, key string, it *events.WorkItem) (status, rawStatus string) {
	w := cleanToken(raw)
	if w == "" || isNil(w) {
		d.issue(IssueStatusUnmapped, line, key, "item %s has an empty status; it is unknown", key)
		return Unknown, w
	}
	s, ok := NormalizeStatus(w, d.opts)
	if !ok {
		if i := strings.IndexByte(w, '('); i > 0 && strings.HasSuffix(w, ")") {
			if s2, ok2 := NormalizeStatus(cleanToken(w[:i]), d.opts); ok2 {
				s, ok = s2, true
				if s == "blocked" && it.Blocker == "" {
					it.Blocker = strings.TrimSpace(w[i+1 : len(w)-1])
				}
			}
		}
	}
	if !ok {
		d.issue(IssueStatusUnmapped, line, key, "status %q of %s is not a known status; map it in status_map", w, key)
		return Unknown, w
	}
	if !IsCanonical(s) {
		d.issue(IssueStatusUnmapped, line, key, "status_map maps %q to %q, which is not a canonical status", w, s)
		return Unknown, w
	}
	if w != s {
		return s, w
	}
	return s, ""
}

package source

import (
	"fmt"
	"github.com/awr-dev/awr/internal/lazyre"
	"strings"

	"github.com/awr-dev/awr/events"
)

func init() {
	register(GoalsMarkdown, parseGoals)
	register(PlanMarkdown, parsePlan)
	register(RulesMarkdown, parseRules)
}

// parseGoals is the goals_markdown adapter (GOALS.md, docs/GOALS.md). Each
// heading at the goal level is one goal:
//
//	# Goals
//	## G-1 — Ship the hosted beta
//	Status: active
//	Summary: ten design partners on the hosted build by June.
//
// The goal level is that of the shallowest heading opening with a KEY (in
// the form parseHeadings reads); in a file without KEY headings it is the
// shallowest level, not counting a leading lone "# Title" heading. Every
// heading at that level is a goal, whether or not it has a KEY; a goal
// without one is keyed "G-<n>", n its position among the file's goals (or
// the next number no explicit key in the file uses). A
// goal spans to the next heading at its level or higher. Its body is read
// like a heading register item: `Status:` is kept as written, lowercased
// and not normalized (active, achieved, dropped, ...); `Summary:` or else
// the first paragraph is the summary.
func parseGoals(path string, content []byte, opts Options) Result {
	d := newDoc(path, content, opts)
	if d.unreadable {
		return d.res
	}
	hs := d.headings()
	level := goalLevel(hs)
	n := 0
	for hi, h := range hs {
		if h.level != level {
			continue
		}
		end := len(d.lines)
		for _, h2 := range hs[hi+1:] {
			if h2.level <= level {
				end = h2.idx
				break
			}
		}
		n++
		key, title := h.key, h.title
		if key == "" {
			title = h.text
		}
		line := d.lines[h.idx].n
		dr := newDraft(key, title, line)
		last := d.body(dr, d.lines[h.idx+1:end])
		if dr.item.Title == "" {
			d.issue(IssueMissingTitle, line, key, "goal at line %d has no title", line)
		}
		d.res.Goals = append(d.res.Goals, events.Goal{
			Key:     key,
			Title:   dr.item.Title,
			Status:  strings.ToLower(cleanToken(dr.statusRaw)),
			Summary: dr.item.Summary,
			Source:  d.ref(line, last),
		})
	}
	fillKeys(d.res.Goals, "G", func(g *events.Goal) *string { return &g.Key })
	if n == 0 {
		if first := d.firstContentLine(); first > 0 {
			d.issue(IssueMalformed, first, "", "no goal headings found: write one heading per goal, like \"## G-1 — Ship the beta\"")
		}
	}
	return d.done()
}

// goalLevel picks the heading level of goals (see parseGoals); 0 when the
// file has no headings.
func goalLevel(hs []heading) int {
	level := 0
	for _, h := range hs {
		if h.key != "" && (level == 0 || h.level < level) {
			level = h.level
		}
	}
	if level > 0 {
		return level
	}
	ones := 0
	for _, h := range hs {
		if h.level == 1 {
			ones++
		}
	}
	if len(hs) > 1 && hs[0].level == 1 && ones == 1 {
		hs = hs[1:]
	}
	for _, h := range hs {
		if level == 0 || h.level < level {
			level = h.level
		}
	}
	return level
}

// parsePlan is the plan_markdown adapter (PLAN.md). A plan may hold task
// tables and KEY headings among its prose: tables are read as
// parseTable reads them and KEY headings as parseHeadings reads them;
// everything else is ignored. Unlike markdown_table, a table with neither
// a key nor a status column is taken for prose and skipped without an
// issue, and so is a heading without a KEY (a milestone with a Status
// line is no item). Items are listed in file order.
//
//	## Milestone 2
//	| Key | Task             | Status  |
//	|-----|------------------|---------|
//	| M-4 | Import old plans | planned |
//
//	### M-5: Cut the release
//	Status: ready
func parsePlan(path string, content []byte, opts Options) Result {
	return readMarkdown(path, content, opts, func(d *mdDoc) {
		d.tables(true)
		d.headingItems(true)
	})
}

// parseRules is the rules_markdown adapter (RULES.md). Each list item
// (bullet or numbered) and each rule heading is one rule:
//
//	## Hard rules
//	- Never commit secrets (paths: config/, .env*)
//	- Migrations are forward-only
//	## Soft rules
//	- [hard] Run go vet before pushing
//	- HARD: no force pushes to main
//	## R-9 (soft) Keep PRs small
//
// A rule's strength is its own marker — [hard], (soft), or a leading
// "HARD:", "**Soft:**", "Hard —" — else that of the innermost enclosing
// heading whose text holds the word "hard" or "soft" ("## Hard rules"),
// else soft. A heading is a rule when it opens with a KEY followed by a
// separator or marker, or carries a marker and no list follows it; other
// headings are sections ("## Musts (hard)" followed by bullets is a hard
// section).
// A rule's key is a leading KEY followed by a separator or a marker
// ("R-7: ...", "**R-7** ...", "R-9 (soft) ..."), else "R-<n>", n its
// position among the file's rules (or the next number no explicit key
// in the file uses). A "(paths: a, b)" marker sets Paths.
//
// Lines wrapped directly under a bullet continue its text; deeper bullets
// and indented paragraphs elaborate it and only widen its line span. Under
// a rule heading, `Strength:` and `Paths:` lines set those, the first
// paragraph is the text when the heading holds none, and the rest widens
// the span. Prose outside lists is ignored. A rule without text is
// reported as missing_title and skipped.
func parseRules(path string, content []byte, opts Options) Result {
	d := newDoc(path, content, opts)
	if d.unreadable {
		return d.res
	}
	d.rules()
	if len(d.res.Rules) == 0 {
		if first := d.firstContentLine(); first > 0 {
			d.issue(IssueMalformed, first, "", "no rules found: write one bullet or heading per rule, like \"- [hard] Never commit secrets\"")
		}
	}
	return d.done()
}

var (
	strengthPrefixRe  = lazyre.New(`(?i)^(?:\*\*|__)?(hard|soft)(?:\*\*|__)?(?:\s*:|\s+[—–-])\s*(?:\*\*|__)?\s*`)
	strengthBracketRe = lazyre.New(`(?i)[\[(]\s*(hard|soft)\s*[\])]`)
	strengthWordRe    = lazyre.New(`(?i)\b(hard|soft)\b`)
	pathsRe           = lazyre.New(`(?i)[(\[]\s*paths?\s*:\s*([^)\]]*)[)\]]`)
)

// ruleDraft is a rule whose continuation lines may still follow.
type ruleDraft struct {
	key      string
	strength string
	paths    []string
	text     []string
	start    int
	end      int
	indent   int
	heading  bool
	blank    bool // a blank line followed the rule's last line
	nested   bool // a nested list or paragraph followed it
	inBody   bool // a heading rule's body paragraph is being read
}

// strengthAt reports whether s opens with a strength marker.
func strengthAt(s string) bool {
	if strengthPrefixRe.MatchString(s) {
		return true
	}
	m := strengthBracketRe.FindStringIndex(s)
	return m != nil && m[0] == 0
}

// ruleParts splits a rule line into its key, strength, paths and text; ok
// is false when it carries neither a key nor a marker (for headings:
// a section, not a rule).
func ruleParts(s string) (key, strength string, paths []string, text string, ok bool) {
	s = strings.TrimSpace(s)
	takeKey := func() {
		if k, found := leadingKey(s); found && key == "" && (k.sep || k.decorated || strengthAt(k.rest) || k.rest == "") {
			key, s, ok = k.key, k.rest, true
		}
	}
	takeKey()
	if m := pathsRe.FindStringSubmatchIndex(s); m != nil {
		paths = splitPaths(s[m[2]:m[3]])
		s = s[:m[0]] + " " + s[m[1]:]
	}
	if m := strengthPrefixRe.FindStringSubmatchIndex(s); m != nil {
		strength, s, ok = strings.ToLower(s[m[2]:m[3]]), s[m[1]:], true
	} else if m := strengthBracketRe.FindStringSubmatchIndex(s); m != nil {
		strength, s, ok = strings.ToLower(s[m[2]:m[3]]), s[:m[0]]+" "+s[m[1]:], true
	}
	takeKey()
	return key, strength, paths, tidyTitle(s), ok
}

// ruleSection is a heading rules sit under: its level, and the strength
// it gives the rules below it that name none.
type ruleSection struct {
	level    int
	strength string
}

// ruleScan is the state of mdDoc.rules: the open sections, and the rule
// being read.
type ruleScan struct {
	d    *mdDoc
	secs []ruleSection
	cur  *ruleDraft
}

func (d *mdDoc) rules() {
	sc := &ruleScan{d: d}
	for i, l := range d.lines {
		t := strings.TrimSpace(l.text)
		cur := sc.cur
		if l.skip {
			if cur != nil && t != "" && (cur.heading || l.indent > cur.indent) {
				cur.end, cur.nested = l.n, true
			}
			continue
		}
		if t == "" {
			if cur != nil {
				cur.blank = true
				cur.inBody = false
			}
			continue
		}
		if lv, text, ok := headingOf(l); ok {
			sc.heading(i, l, lv, text)
			continue
		}
		li, isList := listItemOf(l)
		if cur != nil && cur.heading {
			sc.headingBody(l, t, li, isList)
			continue
		}
		if isList {
			if cur != nil && li.indent > cur.indent {
				cur.end, cur.nested = l.n, true
				continue
			}
			sc.flush()
			if li.text == "" {
				continue
			}
			key, strength, paths, rtext, _ := ruleParts(li.text)
			sc.cur = &ruleDraft{key: key, strength: strength, paths: paths, start: l.n, end: l.n, indent: li.indent}
			if rtext != "" {
				sc.cur.text = []string{rtext}
			}
			continue
		}
		switch {
		case cur != nil && !cur.blank && !cur.nested:
			cur.text = append(cur.text, t)
			cur.end = l.n
		case cur != nil && l.indent > cur.indent:
			cur.end, cur.nested = l.n, true
		default:
			sc.flush()
		}
	}
	sc.flush()
	fillKeys(d.res.Rules, "R", func(r *events.Rule) *string { return &r.Key })
}

// flush records the rule being read, if any: its strength its own, else
// the nearest section's, else soft; a rule with no text is an issue.
func (sc *ruleScan) flush() {
	r := sc.cur
	if r == nil {
		return
	}
	sc.cur = nil
	text := tidyTitle(strings.Join(r.text, " "))
	if text == "" {
		sc.d.issue(IssueMissingTitle, r.start, r.key, "rule at line %d has no text; it is skipped", r.start)
		return
	}
	for i := len(sc.secs) - 1; i >= 0 && r.strength == ""; i-- {
		r.strength = sc.secs[i].strength
	}
	if r.strength == "" {
		r.strength = "soft"
	}
	sc.d.res.Rules = append(sc.d.res.Rules, events.Rule{
		Key: r.key, Text: text, Strength: r.strength, Paths: r.paths, Source: sc.d.ref(r.start, r.end),
	})
}

// heading reads the heading at line index i (level lv): a rule of its
// own, or a section of rules (a rule heading with no key followed by a
// list, or any heading, whose strength word the rules below take).
func (sc *ruleScan) heading(i int, l mdLine, lv int, text string) {
	sc.flush()
	for len(sc.secs) > 0 && sc.secs[len(sc.secs)-1].level >= lv {
		sc.secs = sc.secs[:len(sc.secs)-1]
	}
	key, strength, paths, rtext, isRule := ruleParts(text)
	switch {
	case isRule && key == "" && sc.d.listFollows(i+1):
		sc.secs = append(sc.secs, ruleSection{level: lv, strength: strength})
	case isRule:
		sc.cur = &ruleDraft{key: key, strength: strength, paths: paths, start: l.n, end: l.n, heading: true}
		if rtext != "" {
			sc.cur.text = []string{rtext}
		}
		sc.secs = append(sc.secs, ruleSection{level: lv})
	default:
		s := ""
		if m := strengthWordRe.FindStringSubmatch(text); m != nil {
			s = strings.ToLower(m[1])
		}
		sc.secs = append(sc.secs, ruleSection{level: lv, strength: s})
	}
}

// headingBody reads line l (trimmed t) under a rule that is a heading:
// a "Strength:" or "Paths:" label, or the rule's text.
func (sc *ruleScan) headingBody(l mdLine, t string, li listItem, isList bool) {
	cur := sc.cur
	cur.end = l.n
	body := t
	if isList {
		body = li.text
	}
	if label, value, ok := parseLabel(body); ok {
		switch normLabel(label) {
		case "strength":
			if v := strings.ToLower(cleanToken(value)); v == "hard" || v == "soft" {
				cur.strength = v
			}
			return
		case "paths", "path":
			cur.paths = append(cur.paths, splitPaths(value)...)
			return
		}
	}
	if !isList && (len(cur.text) == 0 || cur.inBody) {
		cur.text = append(cur.text, t)
		cur.inBody = true
	}
}

// listFollows reports whether a list item comes after line index i
// before the next heading.
func (d *mdDoc) listFollows(i int) bool {
	for ; i < len(d.lines); i++ {
		if _, _, ok := headingOf(d.lines[i]); ok {
			return false
		}
		if _, ok := listItemOf(d.lines[i]); ok {
			return true
		}
	}
	return false
}

// fillKeys gives each keyless record of recs (goals or rules; key reaches
// a record's key) the key freeKey finds for its position, past the keys
// the file states.
func fillKeys[T any](recs []T, prefix string, key func(*T) *string) {
	used := map[string]bool{}
	for i := range recs {
		used[*key(&recs[i])] = true
	}
	for i := range recs {
		if k := key(&recs[i]); *k == "" {
			*k = freeKey(prefix, i+1, used)
		}
	}
}

// freeKey returns "<prefix>-<n>" for a keyless goal or rule at position n,
// or the next number when an explicit key in the file already says it.
func freeKey(prefix string, n int, used map[string]bool) string {
	for {
		k := fmt.Sprintf("%s-%d", prefix, n)
		if !used[k] {
			used[k] = true
			return k
		}
		n++
	}
}

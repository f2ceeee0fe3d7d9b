package source

// The YAML ledger adapter reads a work ledger written by hand or by an
// agent. It accepts, per YAML document in the file:
//
//   - a list of work items:            - {id: A-1, title: ..., status: todo}
//   - a map of work items keyed by id: A-1: {title: ..., status: todo}
//   - a map of sections:               items: [...]  goals: [...]  milestones: [...]  rules: [...]
//
// Item sections are named items, tasks, work or work_items; each section,
// like goals, milestones and rules, is a list or a map keyed by id. Keys
// are compared case-insensitively, with "-" and " " read as "_"
// (next-action is next_action). Other top-level keys of a sectioned file
// (version, project, anchors for defaults) are ignored.
//
// Item fields: id (or key), title, status, kind, priority, summary,
// next_action, blocker, acceptance (or acceptance_criteria), depends_on
// (or dependencies), goal, milestone, owner, tags, paths. Text fields take
// any scalar as written (priority: 1 is "1", priority: P1 is "P1"); a
// blocker of false, no, none, n/a, - or null is no blocker. acceptance is a string or a list
// of strings (a list entry misread as a one-pair map, "- Given: x", is read
// back as its text). tags, paths and depends_on are lists or
// comma-separated strings; a depends_on entry is a key or {id, required},
// required defaulting to true. Goals have id, title, status (kept as
// written: goal statuses are not work item statuses) and summary.
// Milestones have an id; they are not recorded, but when a file declares
// milestones (or goals), an item naming one it does not declare gets an
// issue. Rules have id, text (or title), strength (hard or soft; must and
// should are read as hard and soft; missing is hard) and paths. Compact
// forms: in a map of goals, milestones or rules a plain string value is the
// title or text (G-1: Faster checkout; R-1: Never log card numbers), and
// milestones may be a list of ids (milestones: [M-1, M-2]).
//
// A missing or unmapped status is "unknown" with a status_unmapped issue;
// a missing title keeps the item with a missing_title issue; a missing id
// skips it with a missing_key issue; a field of the wrong type is ignored
// with a malformed issue; duplicate keys are all kept, with a
// duplicate_key issue naming both lines.
//
// An element's lines run from its first line (its key, in a map keyed by
// id) to the last line indented under it, trailing blank and comment
// lines left out; a flow element ({...}) ends on its last value's line.
//
// Options.FieldMap renames fields (FieldMap["next_action"] = "next_step")
// and sections (FieldMap["items"] = "stories"); a renamed field is read
// only under its new name. Merge keys (<<: *defaults) are honoured.
//
// Limits: files over yamlMaxBytes are refused; alias expansion beyond
// yamlMaxAliasNodes (or the document's own size, whichever is larger)
// refuses the file. A malformed file yields one malformed issue with the
// line the YAML library reports, plus the elements that parse cleanly
// before the first unparsable line (found by bisection, for files up to
// yamlSalvageMaxBytes).

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/awr-dev/awr/internal/lazyre"
	"io"
	"iter"
	"sort"
	"strconv"
	"strings"

	"github.com/awr-dev/awr/events"
	"go.yaml.in/yaml/v3"
)

const (
	// yamlMaxBytes is the largest YAML ledger read.
	yamlMaxBytes = 8 << 20
	// yamlMaxAliasNodes bounds the nodes reached through aliases, beyond
	// the document's own node count.
	yamlMaxAliasNodes = 100_000
	// yamlSalvageMaxBytes is the largest malformed file whose clean prefix
	// is recovered.
	yamlSalvageMaxBytes = 1 << 20
	// yamlMaxMergeDepth bounds nested merge keys.
	yamlMaxMergeDepth = 8
)

func init() {
	register(YAMLLedger, parseYAMLLedger)
	register(AWRYAMLLedger, parseYAMLLedger)
}

// parseYAMLLedger is the YAMLLedger parser. It never panics: an internal
// failure becomes one malformed issue.
func parseYAMLLedger(path string, content []byte, opts Options) (res Result) {
	defer func() {
		if v := recover(); v != nil {
			res = Result{Issues: []events.SourceIssue{{Code: IssueMalformed, Path: path,
				Message: fmt.Sprintf("YAML ledger not read: internal error: %v", v)}}}
		}
	}()
	return readYAMLLedger(path, content, opts)
}

// readYAMLLedger does the work of parseYAMLLedger, without the recover, so
// that the fuzz target sees any panic.
func readYAMLLedger(path string, content []byte, opts Options) Result {
	if len(content) > yamlMaxBytes {
		return Result{Issues: []events.SourceIssue{{Code: IssueUnreadable, Path: path, Line: 1,
			Message: fmt.Sprintf("YAML ledger is %d bytes, over the %d MiB limit; not read", len(content), yamlMaxBytes>>20)}}}
	}
	hash := Hash(content)
	lines := newYAMLLines(content)
	docs, err := yamlDocuments(content)
	if err == nil {
		return newYAMLReader(path, hash, lines, opts).read(docs)
	}
	return salvageYAML(path, hash, content, lines, opts, err)
}

// yamlDocuments parses every document of content into nodes.
func yamlDocuments(content []byte) ([]*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(content))
	var docs []*yaml.Node
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		docs = append(docs, &n)
	}
}

var yamlErrorLine = lazyre.New(`^(?:yaml: )?line (\d+): `)

// salvageYAML reports a malformed file: one malformed issue, plus what the
// longest cleanly parsing prefix of whole lines yields, less any element
// that prefix may have cut short.
func salvageYAML(path, hash string, content []byte, lines yamlLines, opts Options, err error) Result {
	msg := err.Error()
	line := 0
	if m := yamlErrorLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	issue := events.SourceIssue{Code: IssueMalformed, Path: path, Line: line, Message: "malformed YAML: " + msg}
	if len(content) > yamlSalvageMaxBytes {
		return Result{Issues: []events.SourceIssue{issue}}
	}
	read := func(k int) (Result, bool) {
		prefix := content[:lines.offset(k)]
		docs, err := yamlDocuments(prefix)
		if err != nil {
			return Result{}, false
		}
		r := newYAMLReader(path, hash, newYAMLLines(prefix), opts)
		res := r.read(docs)
		return res, !r.over
	}
	// Bisect for k such that lines 1..k parse and 1..k+1 do not.
	lo, hi := 0, lines.count()
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if _, err := yamlDocuments(content[:lines.offset(mid)]); err == nil {
			lo = mid
		} else {
			hi = mid
		}
	}
	if line == 0 {
		issue.Line = hi
	} else if hi != line {
		issue.Message += fmt.Sprintf(" (the first line that does not parse is %d)", hi)
	}
	res, ok := read(lo)
	cut := lo
	if ok {
		// The last element before the cut may continue past it: read again
		// without it.
		last := lines.lastContent(lo)
		start := 0
		for _, s := range yamlRefs(res) {
			if s.LineEnd >= last && (start == 0 || s.LineStart < start) {
				start = s.LineStart
			}
		}
		if start > 0 {
			res, ok = read(start - 1)
			cut = start - 1
		}
	}
	if !ok || len(yamlRefs(res)) == 0 {
		return Result{Issues: []events.SourceIssue{issue}}
	}
	issue.Message += fmt.Sprintf("; only lines 1-%d are read", cut)
	res.Issues = append(res.Issues, issue)
	sortYAMLIssues(res.Issues)
	return res
}

// yamlRefs returns the source references of every element of res.
func yamlRefs(res Result) []events.SourceRef {
	var out []events.SourceRef
	for _, it := range res.Items {
		out = append(out, it.Source)
	}
	for _, g := range res.Goals {
		out = append(out, g.Source)
	}
	for _, r := range res.Rules {
		out = append(out, r.Source)
	}
	return out
}

func sortYAMLIssues(issues []events.SourceIssue) {
	sort.SliceStable(issues, func(i, j int) bool { return issues[i].Line < issues[j].Line })
}

// yamlLines indexes the lines of a file the way the YAML scanner counts
// them (CR, LF, CRLF, NEL, LS and PS each end a line).
type yamlLines struct {
	end     []int  // end[i]: offset just past line i's break; end[0] = 0
	indent  []int  // leading spaces of line i
	content []bool // line i holds more than blanks and a comment
	marker  []bool // line i is a document marker (--- or ...)
}

func newYAMLLines(b []byte) yamlLines {
	l := yamlLines{end: []int{0}, indent: []int{0}, content: []bool{false}, marker: []bool{false}}
	add := func(from, to, next int) {
		line := b[from:to]
		n := 0
		for n < len(line) && line[n] == ' ' {
			n++
		}
		rest := bytes.TrimLeft(line, " \t")
		if from == 0 {
			rest = bytes.TrimPrefix(rest, []byte("\xef\xbb\xbf"))
		}
		l.end = append(l.end, next)
		l.indent = append(l.indent, n)
		l.content = append(l.content, len(rest) > 0 && rest[0] != '#')
		marker := (bytes.HasPrefix(line, []byte("---")) || bytes.HasPrefix(line, []byte("..."))) &&
			(len(line) == 3 || line[3] == ' ' || line[3] == '\t')
		l.marker = append(l.marker, marker)
	}
	start := 0
	for i := 0; i < len(b); {
		brk := 0
		switch {
		case b[i] == '\n':
			brk = 1
		case b[i] == '\r':
			brk = 1
			if i+1 < len(b) && b[i+1] == '\n' {
				brk = 2
			}
		case b[i] == 0xc2 && i+1 < len(b) && b[i+1] == 0x85:
			brk = 2
		case b[i] == 0xe2 && i+2 < len(b) && b[i+1] == 0x80 && (b[i+2] == 0xa8 || b[i+2] == 0xa9):
			brk = 3
		}
		if brk == 0 {
			i++
			continue
		}
		add(start, i, i+brk)
		i += brk
		start = i
	}
	if start < len(b) {
		add(start, len(b), len(b))
	}
	return l
}

// count returns the number of lines.
func (l yamlLines) count() int { return len(l.end) - 1 }

// offset returns the offset just past line k (0 for k = 0).
func (l yamlLines) offset(k int) int { return l.end[k] }

// lastContent returns the last line up to k holding content, or 0.
func (l yamlLines) lastContent(k int) int {
	for ; k > 0; k-- {
		if l.content[k] {
			return k
		}
	}
	return 0
}

// blockEnd returns the last line of a block collection starting at line
// from whose entries sit at column col (1-based): the last content line
// before one indented less, ignoring blank and comment lines.
func (l yamlLines) blockEnd(from, col int) int {
	end := from
	for i := from + 1; i <= l.count(); i++ {
		if l.marker[i] {
			break
		}
		if !l.content[i] {
			continue
		}
		if l.indent[i] < col-1 {
			break
		}
		end = i
	}
	return end
}

// yamlReader turns parsed documents into a Result.
type yamlReader struct {
	path, hash string
	opts       Options
	lines      yamlLines
	names      map[string][]string // canonical field → accepted keys
	sections   map[string]string   // section key → items, goals, milestones or rules

	sizes    map[*yaml.Node]int
	limit    int // nodes that aliases may reach
	budget   int // nodes that aliases may still reach
	over     bool
	overLine int

	res           Result
	milestones    []yamlDecl
	hasGoals      bool
	hasMilestones bool
	refs          []yamlReference
}

// yamlDecl is a declared key and the line declaring it.
type yamlDecl struct {
	key  string
	line int
}

// yamlReference is an item naming a goal or milestone.
type yamlReference struct {
	item, kind, target string
	line               int
}

// yamlEntry is one key: value pair of a mapping.
type yamlEntry struct {
	name   string // the key normalized: lowercased, "-" and " " as "_"
	key    *yaml.Node
	val    *yaml.Node
	merged bool // from a merge key (<<)
}

// yamlElem names the element being read, for issues.
type yamlElem struct {
	kind string // item, goal, milestone, rule
	key  string
	line int
}

var yamlDefaultNames = map[string][]string{
	"key":         {"id", "key"},
	"title":       {"title"},
	"status":      {"status"},
	"kind":        {"kind"},
	"priority":    {"priority"},
	"summary":     {"summary"},
	"next_action": {"next_action"},
	"blocker":     {"blocker"},
	"acceptance":  {"acceptance", "acceptance_criteria"},
	"depends_on":  {"depends_on", "dependencies"},
	"goal":        {"goal"},
	"milestone":   {"milestone"},
	"owner":       {"owner"},
	"tags":        {"tags"},
	"paths":       {"paths"},
	"required":    {"required"},
	"text":        {"text"},
	"strength":    {"strength"},
	// Sections.
	"items":      {"items", "tasks", "work", "work_items"},
	"goals":      {"goals"},
	"milestones": {"milestones"},
	"rules":      {"rules"},
}

func newYAMLReader(path, hash string, lines yamlLines, opts Options) *yamlReader {
	r := &yamlReader{path: path, hash: hash, opts: opts, lines: lines,
		names: map[string][]string{}, sections: map[string]string{}, sizes: map[*yaml.Node]int{}}
	for k, v := range yamlDefaultNames {
		r.names[k] = v
	}
	canon := make([]string, 0, len(opts.FieldMap))
	for k := range opts.FieldMap {
		canon = append(canon, k)
	}
	sort.Strings(canon)
	for _, k := range canon {
		c, v := yamlName(k), yamlName(opts.FieldMap[k])
		if c == "id" {
			c = "key"
		}
		if c != "" && v != "" {
			r.names[c] = []string{v}
		}
	}
	for _, sec := range []string{"items", "goals", "milestones", "rules"} {
		for _, n := range r.names[sec] {
			r.sections[n] = sec
		}
	}
	return r
}

var yamlNameReplacer = strings.NewReplacer("-", "_", " ", "_")

// yamlName normalizes a key: lowercased, trimmed, "-" and " " as "_".
func yamlName(s string) string {
	return yamlNameReplacer.Replace(strings.ToLower(strings.TrimSpace(s)))
}

func (r *yamlReader) read(docs []*yaml.Node) Result {
	nodes := 0
	for _, d := range docs {
		nodes += yamlCount(d)
	}
	r.limit = max(yamlMaxAliasNodes, nodes)
	r.budget = r.limit
	for _, d := range docs {
		r.document(d)
	}
	if r.over {
		return Result{Issues: []events.SourceIssue{{Code: IssueMalformed, Path: r.path, Line: r.overLine,
			Message: fmt.Sprintf("YAML aliases expand to more than %d nodes; the ledger is not read", r.limit)}}}
	}
	r.duplicates()
	r.references()
	sortYAMLIssues(r.res.Issues)
	return r.res
}

// yamlCount returns the number of nodes under n, aliases counting one.
func yamlCount(n *yaml.Node) int {
	c := 1
	for _, k := range n.Content {
		c += yamlCount(k)
	}
	return c
}

// size is yamlCount, remembered for the alias targets it is asked about.
func (r *yamlReader) size(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	if s, ok := r.sizes[n]; ok {
		return s
	}
	s := 1
	for _, c := range n.Content {
		s += r.size(c)
	}
	r.sizes[n] = s
	return s
}

// deref follows aliases, charging what they reach to the budget. It
// returns nil once the budget is spent.
func (r *yamlReader) deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		if r.over {
			return nil
		}
		r.budget -= r.size(n.Alias)
		if r.budget < 0 {
			r.over, r.overLine = true, n.Line
			return nil
		}
		n = n.Alias
	}
	return n
}

func (r *yamlReader) issue(code string, line int, key, msg string) {
	r.res.Issues = append(r.res.Issues, events.SourceIssue{Code: code, Message: msg, Path: r.path, Line: line, Key: key})
}

// elemIssue records an issue about an element, its message prefixed with
// the element's kind and key.
func (r *yamlReader) elemIssue(code string, e yamlElem, line int, format string, args ...any) {
	prefix := e.kind
	if e.key != "" {
		prefix += " " + e.key
	}
	r.issue(code, line, e.key, prefix+": "+fmt.Sprintf(format, args...))
}

func (r *yamlReader) ref(start int, n *yaml.Node) events.SourceRef {
	end := r.end(n)
	last := max(1, r.lines.count())
	start = min(max(start, 1), last)
	end = min(max(end, start), last)
	return events.SourceRef{Path: r.path, LineStart: start, LineEnd: end, ContentHash: r.hash}
}

// end returns the last line of node n: for a block collection, the last
// line indented under it; otherwise the last line of any node under it.
func (r *yamlReader) end(n *yaml.Node) int {
	end := yamlMaxLine(n)
	if n != nil && (n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode) && n.Style&yaml.FlowStyle == 0 && len(n.Content) > 0 {
		// The first entry's column: an anchor or tag may open the node
		// elsewhere.
		end = max(end, r.lines.blockEnd(n.Line, n.Content[0].Column))
	}
	return end
}

// yamlMaxLine returns the largest line of n and the nodes under it,
// without following aliases. A literal block scalar ends after its last
// line of text.
func yamlMaxLine(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	m := n.Line
	if n.Kind == yaml.ScalarNode && n.Style&yaml.LiteralStyle != 0 {
		if text := strings.TrimRight(n.Value, "\n"); text != "" {
			m += 1 + strings.Count(text, "\n")
		}
	}
	for _, c := range n.Content {
		m = max(m, yamlMaxLine(c))
	}
	return m
}

func yamlIsNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// yamlWhat describes a node's type for issues.
func yamlWhat(n *yaml.Node) string {
	if n == nil {
		return "nothing"
	}
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a map"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!int", "!!float":
			return "a number"
		case "!!bool":
			return "a boolean"
		case "!!null":
			return "nothing"
		case "!!timestamp":
			return "a date"
		}
		return "a string"
	}
	return "a document"
}

// entries returns the pairs of mapping m, then those its merge keys bring
// (each once, even when an explicit key overrides it).
func (r *yamlReader) entries(m *yaml.Node, depth int) []yamlEntry {
	var out, merged []yamlEntry
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := r.deref(m.Content[i])
		if k == nil || k.Kind != yaml.ScalarNode {
			continue
		}
		if k.Tag == "!!merge" {
			if depth >= yamlMaxMergeDepth {
				continue
			}
			v := m.Content[i+1]
			srcs := []*yaml.Node{v}
			if v.Kind == yaml.SequenceNode {
				srcs = v.Content
			}
			for _, s := range srcs {
				if s = r.deref(s); s != nil && s.Kind == yaml.MappingNode {
					for _, e := range r.entries(s, depth+1) {
						e.merged = true
						merged = append(merged, e)
					}
				}
			}
			continue
		}
		out = append(out, yamlEntry{name: yamlName(k.Value), key: k, val: m.Content[i+1]})
	}
	return append(out, merged...)
}

// yamlFields are the fields of one element mapping by normalized name.
type yamlFields struct {
	byName   map[string]yamlEntry
	repeated [][2]yamlEntry // explicit keys given twice: first, second
}

func (r *yamlReader) fields(m *yaml.Node) yamlFields {
	f := yamlFields{byName: map[string]yamlEntry{}}
	for _, e := range r.entries(m, 0) {
		prev, ok := f.byName[e.name]
		switch {
		case !ok:
			f.byName[e.name] = e
		case !e.merged && !prev.merged:
			f.repeated = append(f.repeated, [2]yamlEntry{prev, e})
			f.byName[e.name] = e // the last one wins, as in most YAML readers
		case !e.merged:
			f.byName[e.name] = e
		}
	}
	return f
}

// field returns the entry for a canonical field: the first of its accepted
// keys present. A second key present is reported and ignored.
func (r *yamlReader) field(f yamlFields, el yamlElem, canonical string) (yamlEntry, bool) {
	var found yamlEntry
	ok := false
	for _, n := range r.names[canonical] {
		e, has := f.byName[n]
		if !has {
			continue
		}
		if ok {
			r.elemIssue(IssueMalformed, el, e.key.Line, "both %s and %s given; %s is ignored", found.key.Value, e.key.Value, e.key.Value)
			continue
		}
		found, ok = e, true
	}
	return found, ok
}

// text reads a canonical field holding one scalar, trimmed; any scalar is
// read as written. It returns the field's line, 0 when absent.
func (r *yamlReader) text(f yamlFields, el yamlElem, canonical string) (string, int) {
	e, ok := r.field(f, el, canonical)
	if !ok {
		return "", 0
	}
	v := r.deref(e.val)
	if yamlIsNull(v) {
		return "", e.key.Line
	}
	if v.Kind != yaml.ScalarNode {
		r.elemIssue(IssueMalformed, el, e.key.Line, "%s: expected text, got %s; ignored", e.key.Value, yamlWhat(v))
		return "", e.key.Line
	}
	return strings.TrimSpace(v.Value), e.key.Line
}

// list reads a canonical field holding a list of scalars or one string.
// split splits a string on commas; stringOnly refuses a lone scalar that
// is not a string (acceptance: 5).
func (r *yamlReader) list(f yamlFields, el yamlElem, canonical string, split, stringOnly bool) []string {
	e, ok := r.field(f, el, canonical)
	if !ok {
		return nil
	}
	v := r.deref(e.val)
	var out []string
	add := func(s string) {
		if split {
			for _, p := range strings.Split(s, ",") {
				if p = strings.TrimSpace(p); p != "" {
					out = append(out, p)
				}
			}
		} else if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	switch {
	case yamlIsNull(v):
	case v.Kind == yaml.ScalarNode && (v.Tag == "!!str" || !stringOnly):
		add(v.Value)
	case v.Kind == yaml.SequenceNode:
		for i, c := range r.listed(v) {
			switch {
			case c.Kind == yaml.ScalarNode:
				if s := strings.TrimSpace(c.Value); s != "" {
					out = append(out, s)
				}
			case !split && c.Kind == yaml.MappingNode && len(c.Content) == 2 && c.Style&yaml.FlowStyle == 0 &&
				c.Content[0].Kind == yaml.ScalarNode && c.Content[1].Kind == yaml.ScalarNode:
				// "- Given: a cart" is a one-pair map to YAML and a sentence
				// to its author.
				out = append(out, strings.TrimSpace(c.Content[0].Value+": "+c.Content[1].Value))
			default:
				r.elemIssue(IssueMalformed, el, c.Line, "%s: entry %d: expected text, got %s; ignored", e.key.Value, i+1, yamlWhat(c))
			}
		}
	default:
		want := "a list or a comma-separated string"
		if !split {
			want = "a string or a list of strings"
		}
		r.elemIssue(IssueMalformed, el, e.key.Line, "%s: expected %s, got %s; ignored", e.key.Value, want, yamlWhat(v))
	}
	return out
}

// listed are the entries of the sequence seq with their positions (from
// 0), aliases followed, null ones left out.
func (r *yamlReader) listed(seq *yaml.Node) iter.Seq2[int, *yaml.Node] {
	return func(yield func(int, *yaml.Node) bool) {
		for i, c := range seq.Content {
			if c = r.deref(c); !yamlIsNull(c) && !yield(i, c) {
				return
			}
		}
	}
}

// deps reads depends_on: keys, {id, required} maps, or a comma-separated
// string. A key listed twice is kept once.
func (r *yamlReader) deps(f yamlFields, el yamlElem) []events.Dependency {
	e, ok := r.field(f, el, "depends_on")
	if !ok {
		return nil
	}
	var out []events.Dependency
	seen := map[string]bool{}
	add := func(key string, required bool) {
		if key = strings.TrimSpace(key); key != "" && !seen[key] {
			seen[key] = true
			out = append(out, events.Dependency{Key: key, Required: required})
		}
	}
	v := r.deref(e.val)
	switch {
	case yamlIsNull(v):
	case v.Kind == yaml.ScalarNode:
		for _, k := range strings.Split(v.Value, ",") {
			add(k, true)
		}
	case v.Kind == yaml.SequenceNode:
		for i, c := range r.listed(v) {
			switch {
			case c.Kind == yaml.ScalarNode:
				add(c.Value, true)
			case c.Kind == yaml.MappingNode:
				df := r.fields(c)
				key, _ := r.text(df, el, "key")
				for _, n := range []string{"id", "key"} {
					if e, ok := df.byName[n]; ok && key == "" {
						if k := r.deref(e.val); !yamlIsNull(k) && k.Kind == yaml.ScalarNode {
							key = strings.TrimSpace(k.Value)
						}
					}
				}
				if key == "" {
					r.elemIssue(IssueMalformed, el, c.Line, "%s: entry %d has no id; ignored", e.key.Value, i+1)
					continue
				}
				add(key, r.required(df, el))
			default:
				r.elemIssue(IssueMalformed, el, c.Line, "%s: entry %d: expected a key or {id, required}, got %s; ignored", e.key.Value, i+1, yamlWhat(c))
			}
		}
	default:
		r.elemIssue(IssueMalformed, el, e.key.Line, "%s: expected a list of keys, got %s; ignored", e.key.Value, yamlWhat(v))
	}
	return out
}

// required reads a dependency's required flag, true when absent.
func (r *yamlReader) required(f yamlFields, el yamlElem) bool {
	e, ok := r.field(f, el, "required")
	if !ok {
		return true
	}
	v := r.deref(e.val)
	if yamlIsNull(v) {
		return true
	}
	if v.Kind == yaml.ScalarNode {
		switch strings.ToLower(strings.TrimSpace(v.Value)) {
		case "true", "yes", "y", "on":
			return true
		case "false", "no", "n", "off":
			return false
		}
	}
	r.elemIssue(IssueMalformed, el, e.key.Line, "%s: expected true or false, got %s; read as true", e.key.Value, yamlWhat(v))
	return true
}

// document reads one YAML document.
func (r *yamlReader) document(d *yaml.Node) {
	root := d
	if d.Kind == yaml.DocumentNode {
		if len(d.Content) == 0 {
			return
		}
		root = d.Content[0]
	}
	root = r.deref(root)
	switch {
	case yamlIsNull(root):
	case root.Kind == yaml.SequenceNode:
		r.collection("items", root, root.Line)
	case root.Kind == yaml.MappingNode:
		entries := r.entries(root, 0)
		sectioned := false
		for _, e := range entries {
			if _, ok := r.sections[e.name]; ok {
				sectioned = true
			}
		}
		if !sectioned {
			r.collection("items", root, root.Line)
			return
		}
		seen := map[string]bool{}
		for _, e := range entries {
			if sec, ok := r.sections[e.name]; ok && !(e.merged && seen[e.name]) {
				seen[e.name] = true
				r.collection(sec, e.val, e.key.Line)
			}
		}
	default:
		r.issue(IssueMalformed, root.Line, "", fmt.Sprintf("expected a list or a map of work items, got %s", yamlWhat(root)))
	}
}

// collection reads a section: a list of elements or a map of elements
// keyed by id.
func (r *yamlReader) collection(sec string, n *yaml.Node, line int) {
	switch sec {
	case "goals":
		r.hasGoals = true
	case "milestones":
		r.hasMilestones = true
	}
	v := r.deref(n)
	switch {
	case yamlIsNull(v):
	case v.Kind == yaml.SequenceNode:
		for _, c := range v.Content {
			r.element(sec, nil, c)
		}
	case v.Kind == yaml.MappingNode:
		seen := map[string]bool{}
		for _, e := range r.entries(v, 0) {
			if e.merged && seen[e.key.Value] {
				continue
			}
			seen[e.key.Value] = true
			r.element(sec, e.key, e.val)
		}
	default:
		r.issue(IssueMalformed, line, "", fmt.Sprintf("%s: expected a list or a map keyed by id, got %s; ignored", sec, yamlWhat(v)))
	}
}

var yamlKindOf = map[string]string{"items": "item", "goals": "goal", "milestones": "milestone", "rules": "rule"}

// element reads one element of a section; keyNode is its key in a map
// keyed by id, nil in a list.
func (r *yamlReader) element(sec string, keyNode, n *yaml.Node) {
	el := yamlElem{kind: yamlKindOf[sec], line: n.Line}
	if keyNode != nil {
		el.line = keyNode.Line
		if !yamlIsNull(keyNode) {
			el.key = strings.TrimSpace(keyNode.Value)
		}
	}
	v := r.deref(n)
	if v != nil && v.Kind == yaml.ScalarNode && !yamlIsNull(v) && sec != "items" {
		text := strings.TrimSpace(v.Value)
		switch {
		case sec == "milestones" && keyNode == nil && text != "":
			// milestones: [M-1, M-2]
			r.milestones = append(r.milestones, yamlDecl{key: text, line: el.line})
			return
		case keyNode == nil || el.key == "":
		case sec == "milestones":
			// M-1: Cart persistence
			r.milestones = append(r.milestones, yamlDecl{key: el.key, line: el.line})
			return
		case sec == "goals":
			// G-1: Faster checkout
			if text == "" {
				r.elemIssue(IssueMissingTitle, el, el.line, "no title")
			}
			r.res.Goals = append(r.res.Goals, events.Goal{Key: el.key, Title: text, Source: r.ref(el.line, n)})
			return
		case sec == "rules":
			// Never log card numbers.
			if text == "" {
				r.elemIssue(IssueMissingTitle, el, el.line, "no text")
			}
			r.res.Rules = append(r.res.Rules, events.Rule{Key: el.key, Text: text, Strength: "hard", Source: r.ref(el.line, n)})
			return
		}
	}
	if v == nil || v.Kind != yaml.MappingNode {
		what := "an element"
		if el.kind == "item" {
			what = "a work item"
		}
		r.elemIssue(IssueMalformed, el, el.line, "expected %s (a map of fields), got %s; skipped", what, yamlWhat(v))
		return
	}
	f := r.fields(v)
	for _, p := range f.repeated {
		r.elemIssue(IssueMalformed, el, p[1].key.Line, "%s given twice (lines %d and %d); the last is read", p[1].key.Value, p[0].key.Line, p[1].key.Line)
	}
	id, idLine := r.text(f, el, "key")
	if el.key == "" {
		el.key = id
	} else if id != "" && id != el.key {
		r.elemIssue(IssueMalformed, el, idLine, "id %s differs from its key; the key is used", id)
	}
	if el.key == "" {
		title, _ := r.text(f, el, "title")
		if title != "" {
			title = fmt.Sprintf(" (title %q)", title)
		}
		r.issue(IssueMissingKey, el.line, "", fmt.Sprintf("%s without an id%s; skipped", el.kind, title))
		return
	}
	src := r.ref(el.line, n)
	switch sec {
	case "items":
		r.item(f, el, src)
	case "goals":
		title, _ := r.text(f, el, "title")
		status, _ := r.text(f, el, "status")
		summary, _ := r.text(f, el, "summary")
		if title == "" {
			r.elemIssue(IssueMissingTitle, el, el.line, "no title")
		}
		r.res.Goals = append(r.res.Goals, events.Goal{Key: el.key, Title: title, Status: status, Summary: summary, Source: src})
	case "milestones":
		r.milestones = append(r.milestones, yamlDecl{key: el.key, line: el.line})
	case "rules":
		r.rule(f, el, src)
	}
}

func (r *yamlReader) item(f yamlFields, el yamlElem, src events.SourceRef) {
	it := events.WorkItem{Key: el.key, Source: src}
	it.Title, _ = r.text(f, el, "title")
	if it.Title == "" {
		r.elemIssue(IssueMissingTitle, el, el.line, "no title")
	}
	it.Status, it.RawStatus = r.status(f, el)
	it.Kind, _ = r.text(f, el, "kind")
	it.Priority, _ = r.text(f, el, "priority")
	it.Summary, _ = r.text(f, el, "summary")
	it.NextAction, _ = r.text(f, el, "next_action")
	it.Blocker = r.blocker(f, el)
	it.Acceptance = r.list(f, el, "acceptance", false, true)
	it.DependsOn = r.deps(f, el)
	var goalLine, msLine int
	it.Goal, goalLine = r.text(f, el, "goal")
	it.Milestone, msLine = r.text(f, el, "milestone")
	it.Owner, _ = r.text(f, el, "owner")
	it.Tags = r.list(f, el, "tags", true, false)
	it.Paths = r.list(f, el, "paths", true, false)
	if it.Goal != "" {
		r.refs = append(r.refs, yamlReference{item: it.Key, kind: "goal", target: it.Goal, line: goalLine})
	}
	if it.Milestone != "" {
		r.refs = append(r.refs, yamlReference{item: it.Key, kind: "milestone", target: it.Milestone, line: msLine})
	}
	r.res.Items = append(r.res.Items, it)
}

// status reads and normalizes an item's status. A missing or unmapped
// status is Unknown, with an issue.
func (r *yamlReader) status(f yamlFields, el yamlElem) (status, raw string) {
	e, ok := r.field(f, el, "status")
	if !ok {
		r.elemIssue(IssueStatusUnmapped, el, el.line, "no status")
		return Unknown, ""
	}
	v := r.deref(e.val)
	if !yamlIsNull(v) && v.Kind != yaml.ScalarNode {
		r.elemIssue(IssueStatusUnmapped, el, e.key.Line, "%s: expected a status word, got %s", e.key.Value, yamlWhat(v))
		return Unknown, ""
	}
	if yamlIsNull(v) || strings.TrimSpace(v.Value) == "" {
		r.elemIssue(IssueStatusUnmapped, el, e.key.Line, "no status")
		return Unknown, ""
	}
	raw = strings.TrimSpace(v.Value)
	status, ok = NormalizeStatus(raw, r.opts)
	if !ok {
		r.elemIssue(IssueStatusUnmapped, el, e.key.Line, "status %q is not a known status; map it in the source's status_map", raw)
		return Unknown, raw
	}
	if !IsCanonical(status) {
		r.elemIssue(IssueStatusUnmapped, el, e.key.Line, "status_map maps %q to %q, which is not a canonical status", raw, status)
		return Unknown, raw
	}
	if raw == status {
		raw = ""
	}
	return status, raw
}

// blocker reads an item's blocker; false, no and none mean no blocker.
func (r *yamlReader) blocker(f yamlFields, el yamlElem) string {
	s, _ := r.text(f, el, "blocker")
	switch strings.ToLower(s) {
	case "false", "no", "none", "n/a", "-":
		return ""
	}
	return s
}

func (r *yamlReader) rule(f yamlFields, el yamlElem, src events.SourceRef) {
	text, _ := r.text(f, el, "text")
	if text == "" {
		text, _ = r.text(f, el, "title")
	}
	if text == "" {
		r.elemIssue(IssueMissingTitle, el, el.line, "no text")
	}
	strength := "hard"
	if s, line := r.text(f, el, "strength"); s != "" {
		switch strings.ToLower(s) {
		case "hard", "must", "required", "mandatory":
		case "soft", "should", "recommended", "preferred", "prefer":
			strength = "soft"
		default:
			r.elemIssue(IssueMalformed, el, line, "strength %q is neither hard nor soft; read as hard", s)
		}
	}
	paths := r.list(f, el, "paths", true, false)
	r.res.Rules = append(r.res.Rules, events.Rule{Key: el.key, Text: text, Strength: strength, Paths: paths, Source: src})
}

// duplicates reports keys given twice within items, goals, milestones or
// rules; both elements are kept.
func (r *yamlReader) duplicates() {
	check := func(kind string, decls []yamlDecl) {
		first := map[string]int{}
		for _, d := range decls {
			if line, ok := first[d.key]; ok {
				r.issue(IssueDuplicateKey, d.line, d.key, fmt.Sprintf("duplicate %s key %s at lines %d and %d; the first is used and the item is not claimable until one is renamed", kind, d.key, line, d.line))
				continue
			}
			first[d.key] = d.line
		}
	}
	var items, goals, rules []yamlDecl
	for _, it := range r.res.Items {
		items = append(items, yamlDecl{key: it.Key, line: it.Source.LineStart})
	}
	for _, g := range r.res.Goals {
		goals = append(goals, yamlDecl{key: g.Key, line: g.Source.LineStart})
	}
	for _, ru := range r.res.Rules {
		rules = append(rules, yamlDecl{key: ru.Key, line: ru.Source.LineStart})
	}
	check("item", items)
	check("goal", goals)
	check("milestone", r.milestones)
	check("rule", rules)
}

// references reports items naming a goal or milestone the file does not
// declare, when the file declares goals or milestones.
func (r *yamlReader) references() {
	declared := map[string]map[string]bool{"goal": nil, "milestone": nil}
	if r.hasGoals {
		declared["goal"] = map[string]bool{}
		for _, g := range r.res.Goals {
			declared["goal"][g.Key] = true
		}
	}
	if r.hasMilestones {
		declared["milestone"] = map[string]bool{}
		for _, m := range r.milestones {
			declared["milestone"][m.key] = true
		}
	}
	for _, ref := range r.refs {
		if d := declared[ref.kind]; d != nil && !d[ref.target] {
			r.issue(IssueUnknownReference, ref.line, ref.item, fmt.Sprintf("item %s: %s %s is not declared in this file's %ss", ref.item, ref.kind, ref.target, ref.kind))
		}
	}
}

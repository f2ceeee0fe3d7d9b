package source

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/awr-dev/awr/events"
)

// Adapter names, stored in manifests and source_indexed events. They are
// never renamed once released.
const (
	MarkdownChecklist = "markdown_checklist"
	MarkdownTable     = "markdown_table"
	MarkdownHeadings  = "markdown_headings"
	YAMLLedger        = "yaml_ledger"
	GoalsMarkdown     = "goals_markdown"
	PlanMarkdown      = "plan_markdown"
	RulesMarkdown     = "rules_markdown"

	// AWRYAMLLedger and AWRMarkdownLedger are the adapter names of the
	// Rust AWR's manifests, read as yaml_ledger and markdown_headings
	// (heading attributes included), so a team's AWR manifest opens as
	// it is.
	AWRYAMLLedger     = "yaml-ledger-v1"
	AWRMarkdownLedger = "markdown-ledger-v1"
)

// Source issue codes.
const (
	IssueStatusUnmapped = "status_unmapped"
	IssueMalformed      = "malformed"
	IssueDuplicateKey   = "duplicate_key"
	IssueMissingKey     = "missing_key"
	IssueMissingTitle   = "missing_title"
	IssueUnreadable     = "unreadable"
	// IssueUnknownReference: an item names a goal or milestone its file
	// does not declare.
	IssueUnknownReference = "unknown_reference"
)

// Options are the per-source settings from the manifest.
type Options struct {
	// StatusMap maps the register's own status words (compared
	// case-insensitively) to canonical statuses; it wins over the built-in
	// synonyms.
	StatusMap map[string]string `toml:"status_map,omitempty" json:"status_map,omitempty"`
	// FieldMap maps canonical field names (key, title, status, priority,
	// owner, depends_on, next_action, acceptance, blocker, goal, ...) to the
	// register's own field or column names.
	FieldMap map[string]string `toml:"field_map,omitempty" json:"field_map,omitempty"`
	// KeyPattern is a regular expression every key of the register must
	// match whole (key_pattern); empty takes the format's built-in keys:
	// spec-kit T001, GitHub #123, Jira and Linear PROJ-123, beads bd-a1b2,
	// Taskmaster 1 and 1.2, and the Markdown registers' KEYs (ABC-12).
	KeyPattern string `toml:"key_pattern,omitempty" json:"key_pattern,omitempty"`
}

// keyPatternRe compiles a key_pattern to match a whole key; nil for an
// empty pattern.
// Errors: the regexp package's, for a pattern that does not compile.
func keyPatternRe(p string) (*regexp.Regexp, error) {
	if p == "" {
		return nil, nil
	}
	return regexp.Compile(`^(?:` + p + `)$`)
}

// CheckKeyPattern reports why a key_pattern is unusable, or nil.
func CheckKeyPattern(p string) error {
	_, err := keyPatternRe(p)
	return err
}

// Result is what one parse of one file yields.
type Result struct {
	Items  []events.WorkItem
	Goals  []events.Goal
	Rules  []events.Rule
	Issues []events.SourceIssue
}

// Parser parses the content of one file at path (project-relative, with
// forward slashes). It must not panic on any input and must not read the
// file system: content is all it gets.
type Parser func(path string, content []byte, opts Options) Result

// Parsers maps each adapter name to its parser.
var Parsers = map[string]Parser{}

// register adds an adapter's parser; adapters call it from init.
func register(name string, p Parser) { Parsers[name] = p }

// Adapters returns the registered adapter names, sorted.
func Adapters() []string {
	out := make([]string, 0, len(Parsers))
	for n := range Parsers {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Parse runs the named adapter. An unknown adapter yields one issue.
func Parse(adapter, path string, content []byte, opts Options) Result {
	p, ok := Parsers[adapter]
	if !ok {
		return Result{Issues: []events.SourceIssue{{Code: IssueMalformed, Path: path, Message: fmt.Sprintf("unknown adapter %q", adapter)}}}
	}
	res := p(path, content, opts)
	checkKeyPattern(&res, path, opts.KeyPattern)
	return res
}

// checkKeyPattern reports each work item whose key does not match the
// source's key_pattern, whatever the adapter: the tools' exports and YAML
// ledgers name their keys in a field, a Markdown table in a column, and
// the Markdown adapters that find keys in text find only keys of the
// pattern, but a keyless TODO item's derived key may not be one.
func checkKeyPattern(res *Result, path, pattern string) {
	re, err := keyPatternRe(pattern)
	if err != nil || re == nil {
		return
	}
	for _, it := range res.Items {
		if !re.MatchString(it.Key) {
			res.Issues = append(res.Issues, events.SourceIssue{Code: IssueMissingKey, Path: path, Line: it.Source.LineStart, Key: it.Key,
				Message: fmt.Sprintf("key %s does not match key_pattern %q", it.Key, pattern)})
		}
	}
}

// Hash returns the content hash recorded in source references and events:
// "sha256:" followed by lowercase hex.
func Hash(content []byte) string {
	sum := sha256.Sum256(content)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Canonical work item statuses.
var canonical = []string{"draft", "planned", "ready", "in_progress", "blocked", "completed", "cancelled"}

// synonyms are the built-in status words, lowercased.
var synonyms = map[string]string{
	"todo": "planned", "to do": "planned", "to-do": "planned", "open": "planned", "pending": "planned", "backlog": "planned",
	"doing": "in_progress", "wip": "in_progress", "in-progress": "in_progress", "in progress": "in_progress", "started": "in_progress",
	"done": "completed", "closed": "completed", "finished": "completed",
	"on hold": "blocked", "on-hold": "blocked", "waiting": "blocked",
	"canceled": "cancelled",
	"[ ]":      "planned", "[x]": "completed",
	// The status marks of generated roadmaps and task tables.
	"✅": "completed", "✔": "completed", "✔️": "completed", "🚧": "in_progress", "📋": "planned", "⏳": "planned",
	"💡": "draft", "❌": "cancelled", "⛔": "blocked",
}

// Unknown is the status given to words neither canonical nor mapped.
const Unknown = "unknown"

// NormalizeStatus maps a register's status word to a canonical status: the
// manifest's map first, then canonical names, then built-in synonyms
// (case-insensitive, surrounding space ignored). ok is false, with status
// Unknown, for anything else: statuses are reported, never guessed.
func NormalizeStatus(raw string, opts Options) (status string, ok bool) {
	w := strings.ToLower(strings.TrimSpace(raw))
	if len(opts.StatusMap) > 0 {
		// Sorted, so that two entries differing only in case resolve the
		// same way every time (the manifest loader refuses such pairs).
		keys := make([]string, 0, len(opts.StatusMap))
		for k := range opts.StatusMap {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if strings.ToLower(strings.TrimSpace(k)) == w {
				v := opts.StatusMap[k]
				return v, IsCanonical(v)
			}
		}
	}
	for _, c := range canonical {
		if w == c {
			return c, true
		}
	}
	if s, ok := synonyms[w]; ok {
		return s, true
	}
	return Unknown, false
}

// IsCanonical reports whether s is one of the canonical statuses.
func IsCanonical(s string) bool {
	for _, c := range canonical {
		if s == c {
			return true
		}
	}
	return false
}

// FieldNames are the canonical field names an Options.FieldMap may map.
func FieldNames() []string { return append([]string(nil), fieldNames...) }

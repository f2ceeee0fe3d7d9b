package intake

import (
	"github.com/awr-dev/awr/internal/lazyre"
	"github.com/awr-dev/awr/internal/secret"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/awr-dev/awr/internal/intake/source"
)

// Candidate is one file discovery found, with the adapter and role it
// would be indexed with.
type Candidate struct {
	Path    string `json:"path"`
	Adapter string `json:"adapter"`
	Role    string `json:"role"`
	Kind    string `json:"kind"`
	Size    int64  `json:"size"`
	Reason  string `json:"reason"`
	// Items is how many work items the adapter reads from the file now
	// (task registers only).
	Items int `json:"items,omitempty"`
	// Indexed says whether the preview's manifest maps the file; Why says
	// why not, and Include is the command that would include it.
	Indexed bool   `json:"indexed"`
	Why     string `json:"why,omitempty"`
	Include string `json:"include,omitempty"`
}

// Skipped is a file or folder discovery left alone, and why.
type Skipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Inventory is what discovery found.
type Inventory struct {
	TaskRegisters []Candidate `json:"task_registers"`
	YAMLLedgers   []Candidate `json:"yaml_ledgers"`
	Goals         []Candidate `json:"goals"`
	Plans         []Candidate `json:"plans"`
	Rules         []Candidate `json:"rules"`
	Skipped       []Skipped   `json:"skipped"`
}

// All returns every candidate.
func (inv *Inventory) All() []Candidate {
	var out []Candidate
	for _, l := range [][]Candidate{inv.TaskRegisters, inv.YAMLLedgers, inv.Goals, inv.Plans, inv.Rules} {
		out = append(out, l...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// skipDirs are folders never searched: build outputs, vendored code,
// dependency caches.
var skipDirs = map[string]bool{
	"node_modules": true, "vendor": true, "dist": true, "build": true, "target": true, "out": true,
	"bin": true, "obj": true, "coverage": true, "__pycache__": true, "venv": true, "third_party": true,
}

// secretName matches files that look like they hold credentials; they are
// never read.
var secretName = lazyre.New(`(?i)(^\.env|\.pem$|\.key$|\.p12$|\.pfx$|^id_(rsa|dsa|ecdsa|ed25519)|secret|credential|password|token)`)

// secretNamed reports whether a file's name, or a path, looks like it
// holds a credential: a name like secretName's, or one that is itself a
// token (a file named after a GitHub token or an AWS key id), which would
// reach the log as the source's path.
func secretNamed(name string) bool {
	if secretName.MatchString(filepath.Base(name)) {
		return true
	}
	_, ok := secret.Find(name)
	return ok
}

// searchDirs are where registers usually live; discovery looks only there
// (and one level below docs/ and ledger/).
var searchDirs = []string{".", "docs", "ledger", "planning", ".awr/intake"}

var (
	taskMarkdown = lazyre.New(`(?i)^(tasks?|todo|backlog|work|roadmap|.*-ledger|ledger|.*kanban.*)\.md$`)
	taskYAML     = lazyre.New(`(?i)^(.*-ledger|ledger|work-ledger|tasks?|backlog)\.ya?ml$`)
	goalsFile    = lazyre.New(`(?i)^goals\.md$`)
	planFile     = lazyre.New(`(?i)^plan\.md$`)
	rulesFile    = lazyre.New(`(?i)^rules\.md$`)
)

// named is a file discovery knows by its name alone: the pattern its name
// matches, what it is and the list of the inventory it goes to.
type named struct {
	name                        *lazyre.Regexp
	adapter, role, kind, reason string
	list                        func(*Inventory) *[]Candidate
}

// knownNames are the files known by name, the first that matches first.
var knownNames = []named{
	{goalsFile, source.GoalsMarkdown, RoleGoals, "goals", "named GOALS.md", func(inv *Inventory) *[]Candidate { return &inv.Goals }},
	{planFile, source.PlanMarkdown, RolePlan, "plan", "named PLAN.md", func(inv *Inventory) *[]Candidate { return &inv.Plans }},
	{rulesFile, source.RulesMarkdown, RoleRules, "rules", "named RULES.md", func(inv *Inventory) *[]Candidate { return &inv.Rules }},
	{taskYAML, source.YAMLLedger, RoleTasks, "yaml_ledger", "YAML ledger by name", func(inv *Inventory) *[]Candidate { return &inv.YAMLLedgers }},
}

// knownName is the first of knownNames whose pattern name matches.
func knownName(name string) (named, bool) {
	for _, n := range knownNames {
		if n.name.MatchString(name) {
			return n, true
		}
	}
	return named{}, false
}

// Discover looks through the usual places of the project rooted at dir for
// task registers, YAML ledgers, goals, plans and rules. It only reads: it
// opens candidate files to choose an adapter, never anything that looks
// like a secret, nothing in dot-folders (except .awr/intake), build
// outputs or vendored code.
func Discover(dir string) (*Inventory, error) {
	inv := &Inventory{TaskRegisters: []Candidate{}, YAMLLedgers: []Candidate{}, Goals: []Candidate{}, Plans: []Candidate{}, Rules: []Candidate{}, Skipped: []Skipped{}}
	seen := map[string]bool{}
	discoverTools(dir, inv, seen)
	for _, sd := range searchDirs {
		root := filepath.Join(dir, filepath.FromSlash(sd))
		fi, err := os.Stat(root)
		if err != nil || !fi.IsDir() {
			continue
		}
		maxDepth := 1
		if sd == "docs" || sd == "ledger" || sd == "planning" {
			maxDepth = 2
		}
		err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			rel, _ := filepath.Rel(dir, p)
			rel = filepath.ToSlash(rel)
			depth := strings.Count(strings.TrimPrefix(strings.TrimPrefix(rel, sd), "/"), "/") + 1
			if d.IsDir() {
				if p == root {
					return nil
				}
				name := d.Name()
				if strings.HasPrefix(name, ".") || skipDirs[name] || depth >= maxDepth+1 {
					if strings.HasPrefix(name, ".") || skipDirs[name] {
						if sd == "." {
							inv.Skipped = append(inv.Skipped, Skipped{Path: rel + "/", Reason: skipReason(name)})
						}
					}
					return filepath.SkipDir
				}
				return nil
			}
			if seen[rel] || depth > maxDepth {
				return nil
			}
			seen[rel] = true
			name := d.Name()
			if secretNamed(name) || secretNamed(rel) {
				inv.Skipped = append(inv.Skipped, Skipped{Path: secret.Redact(rel), Reason: "looks like a secret; never read"})
				return nil
			}
			info, err := d.Info()
			if err != nil || !info.Mode().IsRegular() {
				return nil
			}
			c := Candidate{Path: rel, Size: info.Size()}
			if byName, ok := knownName(name); ok {
				c.Adapter, c.Role, c.Kind, c.Reason = byName.adapter, byName.role, byName.kind, byName.reason
				list := byName.list(inv)
				*list = append(*list, c)
				return nil
			}
			switch {
			case exportName.MatchString(name):
				if c, ok := sniffExport(dir, rel, c); ok {
					inv.TaskRegisters = append(inv.TaskRegisters, c)
				}
			case taskMarkdown.MatchString(name):
				if _, err := sourceFile(dir, rel); err != nil {
					inv.Skipped = append(inv.Skipped, Skipped{Path: rel, Reason: "unreadable: " + err.Error()})
					return nil
				}
				content, err := readBounded(p, maxSourceSize)
				if err != nil {
					inv.Skipped = append(inv.Skipped, Skipped{Path: rel, Reason: "unreadable: " + err.Error()})
					return nil
				}
				c.Adapter, c.Reason = sniffMarkdown(content)
				c.Role, c.Kind = RoleTasks, "task_register"
				inv.TaskRegisters = append(inv.TaskRegisters, c)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	inv.finish(dir)
	return inv, nil
}

// finish drops from the skipped list a tool's dot-folder (.beads/,
// .taskmaster/) whose register was looked at (the register's own entry
// says what became of it), counts the task registers' items and sorts
// the lists.
func (inv *Inventory) finish(dir string) {
	seenPaths := []string{}
	for _, c := range append(append([]Candidate{}, inv.TaskRegisters...), inv.Goals...) {
		seenPaths = append(seenPaths, c.Path)
	}
	for _, sk := range inv.Skipped {
		seenPaths = append(seenPaths, sk.Path)
	}
	inv.Skipped = slices.DeleteFunc(inv.Skipped, func(sk Skipped) bool {
		for _, p := range seenPaths {
			if strings.HasSuffix(sk.Path, "/") && p != sk.Path && strings.HasPrefix(p, sk.Path) {
				return true
			}
		}
		return false
	})
	sort.Slice(inv.Skipped, func(i, j int) bool { return inv.Skipped[i].Path < inv.Skipped[j].Path })
	for i := range inv.TaskRegisters {
		inv.TaskRegisters[i].Items = countItems(dir, inv.TaskRegisters[i])
	}
	sort.Slice(inv.TaskRegisters, func(i, j int) bool { return inv.TaskRegisters[i].Path < inv.TaskRegisters[j].Path })
}

// toolRegisters are the files task tools keep their registers in, where
// the tools put them.
var toolRegisters = []struct {
	glob, adapter, role, reason string
}{
	{".taskmaster/tasks/tasks.json", source.TaskmasterJSON, RoleTasks, "Taskmaster's tasks.json"},
	{".beads/issues.jsonl", source.BeadsJSONL, RoleTasks, "beads' issues.jsonl"},
	{"specs/*/tasks.md", source.SpecKitTasks, RoleTasks, "spec-kit's specs/*/tasks.md"},
	{".specify/specs/*/tasks.md", source.SpecKitTasks, RoleTasks, "spec-kit's specs/*/tasks.md"},
	{"specs/*/spec.md", source.SpecKitSpec, RoleGoals, "spec-kit's specs/*/spec.md (user stories, success criteria)"},
	{".specify/specs/*/spec.md", source.SpecKitSpec, RoleGoals, "spec-kit's specs/*/spec.md (user stories, success criteria)"},
}

// discoverTools adds the registers task tools keep where they put them.
func discoverTools(dir string, inv *Inventory, seen map[string]bool) {
	for _, t := range toolRegisters {
		matches, _ := filepath.Glob(filepath.Join(dir, filepath.FromSlash(t.glob)))
		sort.Strings(matches)
		for _, m := range matches {
			rel, err := filepath.Rel(dir, m)
			if err != nil {
				continue
			}
			rel = filepath.ToSlash(rel)
			if seen[rel] {
				continue
			}
			seen[rel] = true
			fi, err := sourceFile(dir, rel)
			if err != nil {
				inv.Skipped = append(inv.Skipped, Skipped{Path: secret.Redact(rel), Reason: "unreadable: " + err.Error()})
				continue
			}
			c := Candidate{Path: rel, Adapter: t.adapter, Role: t.role, Kind: "task_register", Size: fi.Size(), Reason: t.reason}
			if t.role == RoleGoals {
				c.Kind = "goals"
				inv.Goals = append(inv.Goals, c)
				continue
			}
			inv.TaskRegisters = append(inv.TaskRegisters, c)
		}
	}
}

// exportName matches the files an export may be: JSON and CSV.
var exportName = lazyre.New(`(?i)\.(json|csv)$`)

// sniffExport recognizes an export by its content (see sniffData).
func sniffExport(dir, rel string, c Candidate) (Candidate, bool) {
	if _, err := sourceFile(dir, rel); err != nil {
		return c, false
	}
	head, err := readHead(filepath.Join(dir, filepath.FromSlash(rel)), 4096)
	if err != nil {
		return c, false
	}
	adapter, reason, ok := sniffData(head)
	if !ok {
		return c, false
	}
	c.Adapter, c.Reason, c.Role, c.Kind = adapter, reason, RoleTasks, "task_register"
	return c, true
}

// sniffData recognizes a task tool's data file by the start of its
// content: the JSON array of gh issue list, Taskmaster's tasks.json,
// beads' JSON Lines, or the header of a Jira or Linear CSV export.
func sniffData(head []byte) (adapter, reason string, ok bool) {
	h := strings.ToLower(string(head))
	trimmed := strings.TrimSpace(h)
	first := h
	if i := strings.IndexByte(h, '\n'); i >= 0 {
		first = h[:i]
	}
	switch {
	case strings.HasPrefix(trimmed, "[") && strings.Contains(h, `"number"`) && strings.Contains(h, `"state"`) && strings.Contains(h, `"title"`):
		return source.GitHubIssuesJSON, "the JSON of gh issue list", true
	case strings.HasPrefix(trimmed, "{") && strings.Contains(h, `"tasks"`) && (strings.Contains(h, `"master"`) || strings.Contains(h, `"dependencies"`) || strings.Contains(h, `"subtasks"`)):
		return source.TaskmasterJSON, "Taskmaster's tasks.json", true
	case strings.HasPrefix(trimmed, "{") && strings.Contains(first, `"id"`) && strings.Contains(first, `"status"`) && strings.Contains(first, `"issue_type"`):
		return source.BeadsJSONL, "beads' issues.jsonl", true
	case strings.Contains(first, "issue key") && strings.Contains(first, "summary"):
		return source.JiraCSV, "a Jira CSV export's header", true
	case strings.HasPrefix(first, "id,") && strings.Contains(first, "title") && strings.Contains(first, "status") && strings.Contains(first, "team"):
		return source.LinearCSV, "a Linear CSV export's header", true
	}
	return "", "", false
}

// readHead reads at most n bytes from the start of a file.
func readHead(path string, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, n)
	k, err := io.ReadFull(f, buf)
	if err != nil && k == 0 {
		return nil, err
	}
	return buf[:k], nil
}

// countItems is how many work items c's adapter reads from it now, 0 for
// a file that cannot be read.
func countItems(dir string, c Candidate) int {
	if c.Role != RoleTasks {
		return 0
	}
	si, missing := Read(dir, ManifestSource{Path: c.Path, Adapter: c.Adapter, Role: c.Role})
	if missing {
		return 0
	}
	return len(si.Items)
}

func skipReason(name string) string {
	if strings.HasPrefix(name, ".") {
		return "dot-folder"
	}
	return "build output or vendored code"
}

var (
	checkboxLine     = lazyre.New(`(?m)^\s*[-*]\s+\[[ xX]\]\s+`)
	tableSeparator   = lazyre.New(`(?m)^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)+\|?\s*$`)
	specKitTask      = lazyre.New(`(?m)^\s*[-*]\s+\[[ xX]\]\s+T[0-9]{3}`)
	phaseHeadingLine = lazyre.New(`(?mi)^#{2,3}\s+phase\s+[0-9]+`)
	keyedBox         = lazyre.New(`(?m)^\s*[-*]\s+\[[ xX]\]\s+(?:\*\*|__|` + "`" + `|\[)?[A-Za-z][A-Za-z0-9]*[-_][0-9]+`)
	keyHeading       = lazyre.New(`(?m)^#{2,4}\s+[A-Za-z][A-Za-z0-9]*[-_][0-9]+\b`)
)

// sniffMarkdown picks the adapter for a Markdown task register by its
// content: a table with a separator row, KEY headings, or checkboxes; the
// most frequent form wins, checklist when nothing is recognized.
func sniffMarkdown(content []byte) (adapter, reason string) {
	if source.IsKanban(content) {
		return source.ObsidianKanban, "kanban-plugin front matter"
	}
	if specKitTask.Match(content) && phaseHeadingLine.Match(content) {
		return source.SpecKitTasks, "spec-kit task ids under Phase headings"
	}
	tables := len(tableSeparator.FindAll(content, -1))
	headings := len(keyHeading.FindAll(content, -1))
	boxes := len(checkboxLine.FindAll(content, -1))
	switch {
	case headings > 0 && headings >= boxes && tables == 0:
		return source.MarkdownHeadings, "KEY headings"
	case tables > 0 && boxes == 0 && headings == 0:
		return source.MarkdownTable, "a table"
	case tables > 0 && tables >= headings:
		return source.MarkdownTable, "a table"
	case boxes > 0 && !keyedBox.Match(content):
		return source.MarkdownTodo, "checkboxes without KEYs"
	case boxes > 0:
		return source.MarkdownChecklist, "checkboxes"
	case headings > 0:
		return source.MarkdownHeadings, "KEY headings"
	}
	return source.MarkdownChecklist, "named like a task list"
}

// Ambiguity is a role with more than one candidate.
type Ambiguity struct {
	Role       string   `json:"role"`
	Candidates []string `json:"candidates"`
}

// Propose maps an inventory to manifest sources: one source per role.
// Tasks may come from the plan too (a PLAN.md holding a task table). Two
// candidates for one role are ambiguous: none of them is proposed and the
// ambiguity is returned, until the manifest (or --source) says which.
func Propose(inv *Inventory) (sources []ManifestSource, ambiguous []Ambiguity) {
	pick := func(role string, cands []Candidate) {
		switch len(cands) {
		case 0:
		case 1:
			sources = append(sources, ManifestSource{Path: cands[0].Path, Adapter: cands[0].Adapter, Role: role})
		default:
			a := Ambiguity{Role: role}
			for _, c := range cands {
				a.Candidates = append(a.Candidates, c.Path)
			}
			ambiguous = append(ambiguous, a)
		}
	}
	pick(RoleTasks, append(append([]Candidate{}, inv.TaskRegisters...), inv.YAMLLedgers...))
	pick(RoleGoals, inv.Goals)
	pick(RolePlan, inv.Plans)
	pick(RoleRules, inv.Rules)
	sort.Slice(sources, func(i, j int) bool { return sources[i].Path < sources[j].Path })
	return sources, ambiguous
}

// Clean normalizes a project-relative path given on the command line.
func Clean(p string) string { return path.Clean(filepath.ToSlash(p)) }

package bench

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"strings"

	"github.com/awr-dev/awr/internal/fault"
)

// File is one file of a synthetic project.
type File struct {
	// Path is relative to the project, with forward slashes.
	Path    string
	Content []byte
}

// MaxTasks is the largest project Project writes (the YAML ledger stays
// well under the adapter's size limit).
const MaxTasks = 10_000

// Project returns the files of a synthetic project of n tasks, the same
// bytes for the same n and seed: GOALS.md (four goals), RULES.md (hard and
// soft rules, some scoped to paths), ledger/work-ledger.yaml (milestones,
// decisions and four fifths of the tasks) and PLAN.md (prose, decisions
// and a task table per milestone for the last fifth). Every task has a
// goal, a milestone, a priority, paths, acceptance criteria and a next
// action; some depend on earlier tasks (never in a cycle). About a quarter
// of the tasks are in progress, three in ten done, one in twenty blocked
// with a blocker and the rest planned or ready (the first task always
// ready). The files are written in
// the forms awr's adapters read (yaml_ledger, plan_markdown,
// goals_markdown, rules_markdown), so `awr init --accept` indexes them
// without an issue.
func Project(n int, seed int64) []File {
	rng := rand.New(rand.NewSource(seed))
	milestones := max(1, (n+39)/40)
	width := max(3, len(fmt.Sprint(n)))
	key := func(i int) string { return fmt.Sprintf("T-%0*d", width, i) }
	tasks := make([]task, n)
	for i := 1; i <= n; i++ {
		t := task{key: key(i), index: i}
		area := areas[rng.Intn(len(areas))]
		verb, object := verbs[rng.Intn(len(verbs))], objects[rng.Intn(len(objects))]
		t.title = fmt.Sprintf("%s %s in %s", strings.ToUpper(verb[:1])+verb[1:], object, area.name)
		t.kind = kinds[rng.Intn(len(kinds))]
		t.priority = fmt.Sprintf("p%d", rng.Intn(4))
		t.goal = fmt.Sprintf("G-%d", 1+rng.Intn(len(goals)))
		t.milestone = fmt.Sprintf("M-%d", 1+(i-1)*milestones/n)
		t.owner = owners[rng.Intn(len(owners))]
		t.summary = fmt.Sprintf("%s %s so that %s.", strings.ToUpper(verb[:1])+verb[1:], object, outcomes[rng.Intn(len(outcomes))])
		t.paths = []string{area.path}
		if rng.Intn(4) == 0 {
			t.paths = append(t.paths, areas[rng.Intn(len(areas))].path)
			if t.paths[1] == t.paths[0] {
				t.paths = t.paths[:1]
			}
		}
		t.tags = []string{area.tag}
		t.next = fmt.Sprintf(nexts[rng.Intn(len(nexts))], object, area.name)
		t.acceptance = []string{
			fmt.Sprintf(acceptances[rng.Intn(len(acceptances))], object),
			fmt.Sprintf("Tests cover %s in %s, including the failure paths", object, area.name),
		}
		if rng.Intn(3) == 0 {
			t.acceptance = append(t.acceptance, "The change is described in the changelog")
		}
		switch r := rng.Intn(20); {
		case r < 6:
			t.status = "done"
		case r < 11:
			t.status = "in progress"
		case r < 12:
			t.status = "blocked"
			t.blocker = blockers[rng.Intn(len(blockers))]
		case r < 16:
			t.status = "todo"
		default:
			t.status = "ready"
		}
		if i > 3 && rng.Intn(4) == 0 {
			lo := max(1, i-20)
			t.deps = append(t.deps, dep{key: key(lo + rng.Intn(i-lo)), required: rng.Intn(4) > 0})
			if rng.Intn(3) == 0 {
				d := key(lo + rng.Intn(i-lo))
				if d != t.deps[0].key {
					t.deps = append(t.deps, dep{key: d, required: true})
				}
			}
		}
		tasks[i-1] = t
	}
	// The first task is always ready, so even the smallest project has
	// work to claim.
	tasks[0].status, tasks[0].blocker = "ready", ""
	inPlan := n / 5
	ledger, plan := tasks[:n-inPlan], tasks[n-inPlan:]
	return []File{
		{Path: "GOALS.md", Content: goalsFile()},
		{Path: "PLAN.md", Content: planFile(plan, milestones)},
		{Path: "RULES.md", Content: rulesFile()},
		{Path: "ledger/work-ledger.yaml", Content: ledgerFile(ledger, milestones)},
	}
}

// WriteProject writes Project(n, seed) into dir, creating it if needed.
// Errors: InvalidInput for n out of range or a dir that exists and is not
// an empty directory; Storage when a file cannot be written.
func WriteProject(dir string, n int, seed int64) ([]File, error) {
	if n < 1 || n > MaxTasks {
		return nil, fault.New(fault.InvalidInput, "bench project: --tasks %d: want 1 to %d", n, MaxTasks).With("tasks", n)
	}
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fault.New(fault.InvalidInput, "bench project: %s is not a directory", dir).With("path", dir)
	case len(entries) > 0:
		return nil, fault.New(fault.InvalidInput, "bench project: %s is not empty", dir).With("path", dir).With("entries", len(entries)).
			WithHint("awr bench project NEW_DIR")
	}
	files := Project(n, seed)
	for _, f := range files {
		path := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, fault.Wrap(fault.Storage, err, "bench project: write %s", f.Path)
		}
		if err := os.WriteFile(path, f.Content, 0o644); err != nil {
			return nil, fault.Wrap(fault.Storage, err, "bench project: write %s", f.Path)
		}
	}
	return files, nil
}

type dep struct {
	key      string
	required bool
}

type task struct {
	index                                                                              int
	key, title, status, kind, priority, goal, milestone, owner, summary, next, blocker string
	acceptance, paths, tags                                                            []string
	deps                                                                               []dep
}

type area struct{ name, path, tag string }

var (
	goals = [][2]string{
		{"Checkout converts on every device", "Mobile and desktop checkout conversion within two points of each other."},
		{"Billing runs without manual fixes", "No invoice needs a hand correction for a whole quarter."},
		{"Operators see problems before customers do", "Every paging alert fires before the first support ticket."},
		{"New engineers ship in their first week", "A new hire merges a reviewed change within five working days."},
	}
	areas = []area{
		{"the billing service", "internal/billing/", "backend"},
		{"the auth service", "internal/auth/", "backend"},
		{"the checkout page", "web/checkout/", "frontend"},
		{"the account settings", "web/account/", "frontend"},
		{"the event store", "internal/store/", "backend"},
		{"the schema migrations", "migrations/", "data"},
		{"the deploy pipeline", "deploy/", "ops"},
		{"the monitoring config", "ops/monitoring/", "ops"},
		{"the public API", "api/", "backend"},
		{"the developer docs", "docs/", "docs"},
	}
	verbs = []string{"add", "replace", "split", "cache", "validate", "retry", "paginate", "document", "instrument", "harden",
		"migrate", "batch", "deduplicate", "rate-limit", "localize", "profile"}
	objects = []string{"invoice totals", "session tokens", "cart items", "refund requests", "webhook deliveries", "audit records",
		"price lists", "tax rules", "login attempts", "email receipts", "feature flags", "export jobs", "search queries", "user roles"}
	kinds    = []string{"feature", "feature", "feature", "bug", "chore", "spike"}
	owners   = []string{"ana", "ben", "chen", "dana", "eli", "fatima", "gus", "hana"}
	outcomes = []string{"the nightly report matches the ledger", "support stops escalating it", "p95 latency stays under 200 ms",
		"on-call sleeps through the night", "the audit passes without findings", "customers see the same numbers everywhere"}
	nexts = []string{"Write a failing test that reproduces the problem with %s in %s",
		"Sketch the data flow for %s in %s and review it with the owner",
		"Add metrics around %s in %s before changing anything",
		"Read the current handling of %s in %s and list the edge cases",
		"Open a draft change that moves %s in %s behind a flag"}
	acceptances = []string{"Every path that touches %s is covered by a test",
		"No regression in %s on the staging load test",
		"The handling of %s is documented for on-call",
		"Errors around %s are reported with a request id"}
	blockers = []string{"waiting for the security review", "the vendor sandbox is down", "needs a decision on data retention",
		"the staging database is being rebuilt"}
	hardRules = []string{
		"R-1: Never commit secrets, keys or customer data to the repository",
		"R-2: Schema changes ship as forward-only migrations (paths: migrations/, internal/store/)",
		"R-3: Money is stored as integer minor units, never as floats (paths: internal/billing/)",
		"R-4: Every endpoint checks authorization before reading data (paths: api/, internal/auth/)",
		"R-5: Deploys go through the pipeline; no manual changes to production (paths: deploy/)",
	}
	softRules = []string{
		"R-6: Keep pull requests under 400 changed lines",
		"R-7: Prefer table-driven tests (paths: internal/)",
		"R-8: Name metrics after what they measure, with the unit as a suffix (paths: ops/monitoring/)",
		"R-9: Write the changelog entry in the same pull request",
	}
	decisions = [][3]string{
		{"2026-09-14", "Keep one database per service", "cross-service joins hid ownership and slowed every migration"},
		{"2026-10-02", "Integer minor units for all amounts", "floating point rounding produced one-cent invoice differences"},
		{"2026-10-21", "Feature flags for every user-visible change", "rollbacks without a deploy cut incident time in half"},
		{"2026-11-05", "Alerts page only on customer impact", "on-call was woken by alerts nobody acted on"},
	}
)

func goalsFile() []byte {
	var b bytes.Buffer
	b.WriteString("# Goals\n\nWhat the team is working towards this half. Each goal says how we will know it is met.\n")
	for i, g := range goals {
		fmt.Fprintf(&b, "\n## G-%d — %s\n\nStatus: active\nSummary: %s\n", i+1, g[0], g[1])
	}
	return b.Bytes()
}

func rulesFile() []byte {
	var b bytes.Buffer
	b.WriteString("# Rules\n\nRules every change follows. A rule with paths applies to work touching those paths.\n\n## Hard rules\n\n")
	for _, r := range hardRules {
		fmt.Fprintf(&b, "- %s\n", r)
	}
	b.WriteString("\n## Soft rules\n\n")
	for _, r := range softRules {
		fmt.Fprintf(&b, "- %s\n", r)
	}
	return b.Bytes()
}

func ledgerFile(tasks []task, milestones int) []byte {
	var b bytes.Buffer
	b.WriteString("# Work ledger. Owned by the team; awr only reads it.\nversion: 1\nmilestones:\n")
	for m := 1; m <= milestones; m++ {
		fmt.Fprintf(&b, "  - id: M-%d\n    title: Release %d\n", m, m)
	}
	b.WriteString("decisions:\n")
	for i, d := range decisions {
		fmt.Fprintf(&b, "  - id: D-%d\n    date: %s\n    decision: %s\n    why: %s\n", i+1, d[0], d[1], d[2])
	}
	b.WriteString("items:\n")
	for _, t := range tasks {
		fmt.Fprintf(&b, "  - id: %s\n    title: %s\n    status: %s\n    kind: %s\n    priority: %s\n    goal: %s\n    milestone: %s\n    owner: %s\n    summary: %s\n    next_action: %s\n",
			t.key, t.title, t.status, t.kind, t.priority, t.goal, t.milestone, t.owner, t.summary, t.next)
		if t.blocker != "" {
			fmt.Fprintf(&b, "    blocker: %s\n", t.blocker)
		}
		b.WriteString("    acceptance:\n")
		for _, a := range t.acceptance {
			fmt.Fprintf(&b, "      - %s\n", a)
		}
		if len(t.deps) > 0 {
			b.WriteString("    depends_on:\n")
			for _, d := range t.deps {
				fmt.Fprintf(&b, "      - id: %s\n        required: %t\n", d.key, d.required)
			}
		}
		fmt.Fprintf(&b, "    paths: [%s]\n    tags: [%s]\n", strings.Join(t.paths, ", "), strings.Join(t.tags, ", "))
	}
	return b.Bytes()
}

func planFile(tasks []task, milestones int) []byte {
	var b bytes.Buffer
	b.WriteString("# Plan\n\nThe later releases, planned as tables so they can be reviewed in one place. Earlier work lives in ledger/work-ledger.yaml.\n\n## Decisions\n\n")
	for i, d := range decisions {
		fmt.Fprintf(&b, "- D-%d (%s): %s, because %s.\n", i+1, d[0], d[1], d[2])
	}
	for m := 1; m <= milestones; m++ {
		var rows []task
		for _, t := range tasks {
			if t.milestone == fmt.Sprintf("M-%d", m) {
				rows = append(rows, t)
			}
		}
		if len(rows) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n## Release %d\n\n", m)
		b.WriteString("| ID | Title | Status | Priority | Goal | Milestone | Owner | Depends on | Paths | Blocker | Next action | Acceptance |\n")
		b.WriteString("|----|-------|--------|----------|------|-----------|-------|------------|-------|---------|-------------|------------|\n")
		for _, t := range rows {
			var deps []string
			for _, d := range t.deps {
				if d.required {
					deps = append(deps, d.key)
				}
			}
			blocker := t.blocker
			if blocker == "" {
				blocker = "-"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", t.key, t.title, t.status, t.priority, t.goal,
				t.milestone, t.owner, strings.Join(deps, ", "), strings.Join(t.paths, ", "), blocker, t.next, strings.Join(t.acceptance, "; "))
		}
	}
	return b.Bytes()
}

package source_test

import (
	"strings"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/intake/source"
)

// fuzzSeeds are inputs every Markdown fuzz target starts from: the
// shapes each adapter reads, and the half-edited ones it must survive.
var fuzzSeeds = []string{
	"",
	"\n",
	"\ufeff# Tasks\r\n- [ ] T-1: a\r\n  - [x] crit\r\n",
	"- [ ] CART-12: Persist the cart (P1) depends on CART-3, CART-4\n  - survives reload\n  - Next: write tests\n- [x] CART-3 Add the cart table\n* [X] **CART-4** — Cart API (blocked: waiting on auth) !p2\n- [/] CART-5 weird\n- [ ] no key\n",
	"| ID | Task | Status | Depends on | Next step | Acceptance |\n|---|---|---|---|---|---|\n| API-1 | Rate \\| limit | in progress | API-0 | add test | a; b<br>c |\n| API-2 | x |\n| | y | done | | | | extra |\n",
	"| a | b |\n|---|---|\n| 1 | 2 |\n",
	"|\n|-|\n|\n",
	"## AUTH-3 — Rotate session keys\n**Status:** in progress\n- Depends on: AUTH-1\nAcceptance:\n- old keys\n### Acceptance\n- more\n## AUTH-4: x\nStatus: paused\n## Backlog\nStatus: todo\n",
	"# Goals\n## G-1 — Ship\nStatus: Active\nSummary: s\n## Grow\npara\n",
	"# Rules\n## Hard rules\n- Never commit secrets (paths: config/, .env*)\n- R-7: forward-only\n  wrapped\n  - nested\n## Soft rules\n- [hard] vet\n- HARD: no force push\n## R-9 (soft) Keep PRs small\nPaths: src/**\nStrength: hard\n",
	"```\n- [ ] T-1: in a fence\n",
	"<!-- open comment\n- [ ] T-1: x\n",
	"---\ntitle: x\n---\n## T-1: front matter before\n",
	"## \n### T-1\n#######\n# #\n- [\n- [ ]\n1.\n1) [x] K-1:\n",
	"\x00binary",
	"## T-1 — caf\xe9 \xff\n- [ ] \xe2\x82 K-1: x\n",
	"- [ ] T-1: 日本語のタイトル (owner: 山田) depends on T-2 and T-3\n",
}

// checkResult asserts the adapter contract on any result: items, goals
// and rules have keys, item statuses are canonical or unknown, and every
// source reference lies within the file.
func checkResult(t *testing.T, path string, content []byte, res source.Result) {
	t.Helper()
	lines := strings.Count(string(content), "\n") + 1
	checkRef := func(what, key string, ref events.SourceRef) {
		t.Helper()
		if ref.Path != path {
			t.Fatalf("%s %s: path %q, want %q", what, key, ref.Path, path)
		}
		if ref.LineStart < 1 || ref.LineEnd < ref.LineStart || ref.LineEnd > lines {
			t.Fatalf("%s %s: lines %d-%d outside 1-%d", what, key, ref.LineStart, ref.LineEnd, lines)
		}
		if ref.ContentHash != source.Hash(content) {
			t.Fatalf("%s %s: content hash %q", what, key, ref.ContentHash)
		}
	}
	for _, it := range res.Items {
		if it.Key == "" {
			t.Fatalf("item without key: %+v", it)
		}
		if it.Status != source.Unknown && !source.IsCanonical(it.Status) {
			t.Fatalf("item %s: status %q is neither canonical nor unknown", it.Key, it.Status)
		}
		checkRef("item", it.Key, it.Source)
	}
	for _, g := range res.Goals {
		if g.Key == "" {
			t.Fatalf("goal without key: %+v", g)
		}
		checkRef("goal", g.Key, g.Source)
	}
	for _, r := range res.Rules {
		if r.Key == "" {
			t.Fatalf("rule without key: %+v", r)
		}
		if r.Strength != "hard" && r.Strength != "soft" {
			t.Fatalf("rule %s: strength %q", r.Key, r.Strength)
		}
		checkRef("rule", r.Key, r.Source)
	}
	for _, is := range res.Issues {
		if is.Code == "" || is.Message == "" || is.Path != path || is.Line < 0 || is.Line > lines {
			t.Fatalf("bad issue: %+v", is)
		}
	}
}

func fuzzAdapter(f *testing.F, adapter, path string) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, content []byte) {
		res := source.Parse(adapter, path, content, source.Options{})
		checkResult(t, path, content, res)
	})
}

// FuzzChecklist feeds arbitrary bytes to the markdown_checklist adapter.
func FuzzChecklist(f *testing.F) { fuzzAdapter(f, source.MarkdownChecklist, "TASKS.md") }

// FuzzTable feeds arbitrary bytes to the markdown_table adapter.
func FuzzTable(f *testing.F) { fuzzAdapter(f, source.MarkdownTable, "docs/tasks.md") }

// FuzzHeadings feeds arbitrary bytes to the markdown_headings adapter.
func FuzzHeadings(f *testing.F) { fuzzAdapter(f, source.MarkdownHeadings, "WORK.md") }

// FuzzGoals feeds arbitrary bytes to the goals_markdown adapter.
func FuzzGoals(f *testing.F) { fuzzAdapter(f, source.GoalsMarkdown, "GOALS.md") }

// FuzzRules feeds arbitrary bytes to the rules_markdown adapter.
func FuzzRules(f *testing.F) { fuzzAdapter(f, source.RulesMarkdown, "RULES.md") }

// FuzzPlan feeds arbitrary bytes to the plan_markdown adapter.
func FuzzPlan(f *testing.F) { fuzzAdapter(f, source.PlanMarkdown, "PLAN.md") }

package source_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/intake/source"
)

// md joins lines into a Markdown file ending in a newline.
func md(lines ...string) []byte { return []byte(strings.Join(lines, "\n") + "\n") }

// crlf rewrites a file's line endings to CRLF.
func crlf(b []byte) []byte { return []byte(strings.ReplaceAll(string(b), "\n", "\r\n")) }

// at is a source reference into content.
func at(path string, content []byte, start, end int) events.SourceRef {
	return events.SourceRef{Path: path, LineStart: start, LineEnd: end, ContentHash: source.Hash(content)}
}

// codes lists issues as "code@line key".
func codes(res source.Result) []string {
	var out []string
	for _, is := range res.Issues {
		s := fmt.Sprintf("%s@%d", is.Code, is.Line)
		if is.Key != "" {
			s += " " + is.Key
		}
		out = append(out, s)
	}
	return out
}

func keys(res source.Result) []string {
	var out []string
	for _, it := range res.Items {
		out = append(out, it.Key)
	}
	return out
}

func dep(keys ...string) []events.Dependency {
	var out []events.Dependency
	for _, k := range keys {
		out = append(out, events.Dependency{Key: k, Required: true})
	}
	return out
}

// parse runs an adapter and checks the contract every result keeps.
func parse(t *testing.T, adapter, path string, content []byte, opts source.Options) source.Result {
	t.Helper()
	res := source.Parse(adapter, path, content, opts)
	checkResult(t, path, content, res)
	return res
}

// itemCase is one row of a Markdown adapter's table: a file, the options
// it is read with, and the items (compared without Source) or, without
// items, the keys it yields, with the issues as codes.
type itemCase struct {
	name   string
	file   []byte
	opts   source.Options
	items  []events.WorkItem
	keys   []string
	issues []string
}

// runItemCases reads each case's file at path with adapter, as a subtest
// of its own.
func runItemCases(t *testing.T, adapter, path string, tests []itemCase) {
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := parse(t, adapter, path, tt.file, tt.opts)
			if tt.items != nil {
				for i := range res.Items {
					res.Items[i].Source = events.SourceRef{}
				}
				require.Equal(t, tt.items, res.Items)
			} else {
				require.Equal(t, tt.keys, keys(res))
			}
			require.Equal(t, tt.issues, codes(res))
		})
	}
}

// recordCase is one row of a table of goals or rules: a file, the options
// it is read with, the records it yields (compared without Source) and the
// issues as codes.
type recordCase[T any] struct {
	name   string
	file   []byte
	opts   source.Options
	want   []T
	issues []string
}

// runRecordCases reads each case's file at path with adapter, as a subtest
// of its own, and compares the records records picks from the result (each
// Source, reached through sourceOf, cleared) and the issues.
func runRecordCases[T any](t *testing.T, adapter, path string, tests []recordCase[T], records func(source.Result) []T, sourceOf func(*T) *events.SourceRef) {
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := parse(t, adapter, path, tt.file, tt.opts)
			got := records(res)
			for i := range got {
				*sourceOf(&got[i]) = events.SourceRef{}
			}
			require.Equal(t, tt.want, got)
			require.Equal(t, tt.issues, codes(res))
		})
	}
}

// requireCRLFSame checks that file with CRLF line ends reads as with LF:
// the same items (but for the content hash) and the same issues.
func requireCRLFSame(t *testing.T, adapter, path string, file []byte) {
	lf := parse(t, adapter, path, file, source.Options{})
	c := crlf(file)
	res := parse(t, adapter, path, c, source.Options{})
	require.Len(t, res.Items, len(lf.Items))
	for i := range lf.Items {
		want := lf.Items[i]
		want.Source.ContentHash = source.Hash(c)
		require.Equal(t, want, res.Items[i])
	}
	require.Equal(t, codes(lf), codes(res))
}

func TestAdapters_Markdown(t *testing.T) {
	t.Parallel()
	for _, a := range []string{source.MarkdownChecklist, source.MarkdownTable, source.MarkdownHeadings, source.GoalsMarkdown, source.PlanMarkdown, source.RulesMarkdown} {
		require.Contains(t, source.Adapters(), a)
	}
}

var checklistFile = md(
	"# Checkout rewrite",
	"",
	"Work for the June release.",
	"",
	"- [ ] CART-12: Persist the cart server-side (P1) depends on CART-3, CART-4",
	"  Carts live in the browser today",
	"  and are lost on restart.",
	"  - [ ] cart survives a browser restart",
	"  - writes are idempotent",
	"  - Next: add the carts table",
	"  - Owner: dana",
	"- [x] CART-3 Add the carts table",
	"* [X] **CART-4** — Cart API (blocked: waiting on the auth review) !p2",
	"- [ ] `CART_5` | Checkout button (owner: lee) (goal: G-1) after: CART-4",
	"  - [ ] CART-6: Disable the button while saving",
	"    - no double submit",
	"  - button has a spinner",
	"- [ ] CART-7 Price rounding Blocker: finance has not signed off",
	"",
	"## Later",
	"",
	"- [ ] remember the coupon flow",
	"- [x] CART-8: Retire the legacy cart (milestone: M-2) (kind: chore)",
)

func TestChecklist(t *testing.T) {
	t.Parallel()
	const path = "TASKS.md"

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		c := checklistFile
		res := parse(t, source.MarkdownChecklist, path, c, source.Options{})
		require.Equal(t, []events.WorkItem{
			{
				Key: "CART-12", Title: "Persist the cart server-side", Status: "planned", RawStatus: "[ ]",
				Priority: "P1", Summary: "Carts live in the browser today and are lost on restart.",
				NextAction: "add the carts table", Owner: "dana",
				Acceptance: []string{"cart survives a browser restart", "writes are idempotent"},
				DependsOn:  dep("CART-3", "CART-4"), Source: at(path, c, 5, 11),
			},
			{Key: "CART-3", Title: "Add the carts table", Status: "completed", RawStatus: "[x]", Source: at(path, c, 12, 12)},
			{
				Key: "CART-4", Title: "Cart API", Status: "completed", RawStatus: "[X]", Priority: "P2",
				Blocker: "waiting on the auth review", Source: at(path, c, 13, 13),
			},
			{
				Key: "CART_5", Title: "Checkout button", Status: "planned", RawStatus: "[ ]", Owner: "lee", Goal: "G-1",
				Acceptance: []string{"button has a spinner"}, DependsOn: dep("CART-4"), Source: at(path, c, 14, 17),
			},
			{
				Key: "CART-6", Title: "Disable the button while saving", Status: "planned", RawStatus: "[ ]",
				Acceptance: []string{"no double submit"}, Source: at(path, c, 15, 16),
			},
			{
				Key: "CART-7", Title: "Price rounding", Status: "planned", RawStatus: "[ ]",
				Blocker: "finance has not signed off", Source: at(path, c, 18, 18),
			},
			{
				Key: "CART-8", Title: "Retire the legacy cart", Status: "completed", RawStatus: "[x]",
				Milestone: "M-2", Kind: "chore", Source: at(path, c, 23, 23),
			},
		}, res.Items)
		require.Equal(t, []string{"missing_key@22"}, codes(res))
		require.Contains(t, res.Issues[0].Message, "remember the coupon flow")
	})

	t.Run("CRLF", func(t *testing.T) {
		t.Parallel()
		requireCRLFSame(t, source.MarkdownChecklist, path, checklistFile)
	})

	tests := []itemCase{
		{
			name:   "StatusMap",
			file:   md("- [/] T-1: half done", "- [-] T-2: dropped", "- [x] T-3: done"),
			opts:   source.Options{StatusMap: map[string]string{"[/]": "in_progress", "[-]": "cancelled", "[x]": "completed"}},
			items:  []events.WorkItem{{Key: "T-1", Title: "half done", Status: "in_progress", RawStatus: "[/]"}, {Key: "T-2", Title: "dropped", Status: "cancelled", RawStatus: "[-]"}, {Key: "T-3", Title: "done", Status: "completed", RawStatus: "[x]"}},
			issues: nil,
		},
		{
			name:   "UnknownBox",
			file:   md("- [ ] T-1: fine", "", "- [?] T-2: unsure"),
			items:  []events.WorkItem{{Key: "T-1", Title: "fine", Status: "planned", RawStatus: "[ ]"}, {Key: "T-2", Title: "unsure", Status: "unknown", RawStatus: "[?]"}},
			issues: []string{"status_unmapped@3 T-2"},
		},
		{
			name:   "StatusMapNotCanonical",
			file:   md("- [/] T-1: x"),
			opts:   source.Options{StatusMap: map[string]string{"[/]": "halfway"}},
			items:  []events.WorkItem{{Key: "T-1", Title: "x", Status: "unknown", RawStatus: "[/]"}},
			issues: []string{"status_unmapped@1 T-1"},
		},
		{
			name:  "FieldMap",
			file:  md("- [ ] T-1: Ship it (stuck: legal review) (then: email legal)"),
			opts:  source.Options{FieldMap: map[string]string{"blocker": "Stuck", "next_action": "Then:"}},
			items: []events.WorkItem{{Key: "T-1", Title: "Ship it", Status: "planned", RawStatus: "[ ]", Blocker: "legal review", NextAction: "email legal"}},
		},
		{
			name:   "MissingTitle",
			file:   md("- [ ] T-9", "- [ ] T-10:"),
			items:  []events.WorkItem{{Key: "T-9", Status: "planned", RawStatus: "[ ]"}, {Key: "T-10", Status: "planned", RawStatus: "[ ]"}},
			issues: []string{"missing_title@1 T-9", "missing_title@2 T-10"},
		},
		{
			name:   "MissingKey",
			file:   md("- [ ] buy milk", "- [x] 2024-05-01 release", "- [ ] UTF-8: clean up", "- [ ] T-1.5 not a key"),
			keys:   []string{"UTF-8"},
			issues: []string{"missing_key@1", "missing_key@2", "missing_key@4"},
		},
		{
			name:   "Duplicate",
			file:   md("- [ ] T-1: first", "- [x] T-2: other", "- [x] T-1: second"),
			keys:   []string{"T-1", "T-2", "T-1"},
			issues: []string{"duplicate_key@3 T-1"},
		},
		{
			name: "NotItems",
			file: md("- T-1: a bullet without a box", "T-2: prose", "- [ ]", "---", "* * *", "| T-3 | x |"),
			keys: nil, issues: []string{"missing_key@3"},
		},
		{
			name:  "ProseEndsItem",
			file:  md("- [ ] T-1: a", "Some prose.", "  - [ ] not nested any more"),
			items: []events.WorkItem{{Key: "T-1", Title: "a", Status: "planned", RawStatus: "[ ]"}},
			issues: []string{
				"missing_key@3",
			},
		},
		{
			name:   "CodeFence",
			file:   md("- [ ] T-1: real", "```markdown", "- [ ] T-2: an example", "```", "~~~", "- [ ] T-3: unclosed"),
			keys:   []string{"T-1"},
			issues: []string{"malformed@5"},
		},
		{
			name:  "Unicode",
			file:  md("- [ ] T-1: Übersetzung für 日本語 — ✓ (owner: 山田) depends on T-2 and T-3"),
			items: []events.WorkItem{{Key: "T-1", Title: "Übersetzung für 日本語 — ✓", Status: "planned", RawStatus: "[ ]", Owner: "山田", DependsOn: dep("T-2", "T-3")}},
		},
		{
			name:  "OrderedAndPlus",
			file:  md("1. [x] T-1: one", "2) [ ] T-2 two", "+ [ ] T-3 three"),
			keys:  []string{"T-1", "T-2", "T-3"},
			items: []events.WorkItem{{Key: "T-1", Title: "one", Status: "completed", RawStatus: "[x]"}, {Key: "T-2", Title: "two", Status: "planned", RawStatus: "[ ]"}, {Key: "T-3", Title: "three", Status: "planned", RawStatus: "[ ]"}},
		},
		{name: "Empty", file: nil},
		{name: "Blank", file: md("", "   ", "")},
		{name: "Binary", file: []byte("- [ ] T-1: x\n\x00\x01"), issues: []string{"unreadable@2"}},
		{
			name:   "InvalidUTF8",
			file:   []byte("- [ ] T-1: caf\xe9\n"),
			items:  []events.WorkItem{{Key: "T-1", Title: "caf\uFFFD", Status: "planned", RawStatus: "[ ]"}},
			issues: []string{"malformed@1"},
		},
		{
			name:  "ThematicBreaksAreNotFrontMatter",
			file:  md("---", "", "- [ ] T-1: x", "---"),
			items: []events.WorkItem{{Key: "T-1", Title: "x", Status: "planned", RawStatus: "[ ]"}},
		},
		{
			name: "Markers",
			file: md(
				"- [ ] T-1: Fix login - depends on T-2",
				"- [ ] T-2: Update deps: bump go",
				"- [ ] T-3: Plan the offsite after: T-1, T-2 (priority: high) (P0)",
				"- [ ] T-4: Handle refunds (blocked: waiting on T-2; finance)",
				"- [ ] T-5: Tidy (notes: kept in the title)",
			),
			items: []events.WorkItem{
				{Key: "T-1", Title: "Fix login", Status: "planned", RawStatus: "[ ]", DependsOn: dep("T-2")},
				{Key: "T-2", Title: "Update deps: bump go", Status: "planned", RawStatus: "[ ]"},
				{Key: "T-3", Title: "Plan the offsite", Status: "planned", RawStatus: "[ ]", Priority: "high", DependsOn: dep("T-1", "T-2")},
				{Key: "T-4", Title: "Handle refunds", Status: "planned", RawStatus: "[ ]", Blocker: "waiting on T-2; finance"},
				{Key: "T-5", Title: "Tidy (notes: kept in the title)", Status: "planned", RawStatus: "[ ]"},
			},
		},
		{
			name:  "FrontMatterAndComment",
			file:  md("---", "title: tasks", "---", "<!--", "- [ ] T-0: commented out", "-->", "- [ ] T-1: real <!-- inline -->"),
			items: []events.WorkItem{{Key: "T-1", Title: "real <!-- inline -->", Status: "planned", RawStatus: "[ ]"}},
		},
	}
	runItemCases(t, source.MarkdownChecklist, path, tests)

	t.Run("DuplicateMessage", func(t *testing.T) {
		t.Parallel()
		res := parse(t, source.MarkdownChecklist, path, md("- [ ] T-1: first", "- [x] T-1: second"), source.Options{})
		require.Len(t, res.Issues, 1)
		require.Equal(t, source.IssueDuplicateKey, res.Issues[0].Code)
		require.Contains(t, res.Issues[0].Message, "line 2")
		require.Contains(t, res.Issues[0].Message, "line 1")
		require.Equal(t, path, res.Issues[0].Path)
	})

	t.Run("UnknownStatusMessage", func(t *testing.T) {
		t.Parallel()
		res := parse(t, source.MarkdownChecklist, path, md("", "- [~] T-4: x"), source.Options{})
		require.Equal(t, []events.SourceIssue{{
			Code: source.IssueStatusUnmapped, Path: path, Line: 2, Key: "T-4",
			Message: `status "[~]" of T-4 is not a known status; map it in status_map`,
		}}, res.Issues)
	})
}

var tableFile = md(
	"# Platform backlog",
	"",
	"| ID | Task | Status | Priority | Owner | Depends on | Next action | Acceptance | Blocker | Goal | Milestone | Kind | Summary | Tags | Paths |",
	"|----|------|:------:|----------|-------|------------|-------------|------------|---------|------|-----------|------|---------|------|-------|",
	"| API-1 | Rate-limit API keys | in progress | P1 | @dana | API-0, [API-2](#api-2) | add the 429 test | 429 after 100 req/min; header shows the limit<br>docs updated | — | G-1 | M-1 | feature | Keys are unlimited today. | backend, api | `services/api/`, docs/limits.md |",
	"| **API-2** | Key rotation \\| revocation | todo | P2 | lee | none | | | waiting on security review | G-1 | M-1 | chore | | | |",
	"| `API-3` | Usage dashboard | Done | P3 | | API-1 and API-2 | | | | G-2 | | | | | |",
	"",
	"Prose between tables.",
	"",
	"| Ticket | Name | State |",
	"| --- | --- | --- |",
	"| OPS-1 | Rotate TLS certs | cancelled |",
)

func TestTable(t *testing.T) {
	t.Parallel()
	const path = "docs/backlog.md"

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		c := tableFile
		res := parse(t, source.MarkdownTable, path, c, source.Options{})
		require.Equal(t, []events.WorkItem{
			{
				Key: "API-1", Title: "Rate-limit API keys", Status: "in_progress", RawStatus: "in progress", Kind: "feature",
				Priority: "P1", Summary: "Keys are unlimited today.", NextAction: "add the 429 test",
				Acceptance: []string{"429 after 100 req/min", "header shows the limit", "docs updated"},
				DependsOn:  dep("API-0", "API-2"), Goal: "G-1", Milestone: "M-1", Owner: "@dana",
				Tags: []string{"backend", "api"}, Paths: []string{"services/api/", "docs/limits.md"}, Source: at(path, c, 5, 5),
			},
			{
				Key: "API-2", Title: "Key rotation | revocation", Status: "planned", RawStatus: "todo", Kind: "chore", Priority: "P2",
				Blocker: "waiting on security review", Goal: "G-1", Milestone: "M-1", Owner: "lee", Source: at(path, c, 6, 6),
			},
			{
				Key: "API-3", Title: "Usage dashboard", Status: "completed", RawStatus: "Done", Priority: "P3",
				DependsOn: dep("API-1", "API-2"), Goal: "G-2", Source: at(path, c, 7, 7),
			},
			{Key: "OPS-1", Title: "Rotate TLS certs", Status: "cancelled", Source: at(path, c, 13, 13)},
		}, res.Items)
		require.Empty(t, res.Issues)
	})

	t.Run("CRLF", func(t *testing.T) {
		t.Parallel()
		requireCRLFSame(t, source.MarkdownTable, path, tableFile)
	})

	tests := []itemCase{
		{
			name: "Synonyms",
			file: md(
				"| Key: | Summary | STATE | Prio | Assignee | Blocked by | Next step | Done when | Type | Labels | Files | Notes |",
				"|-|-|-|-|-|-|-|-|-|-|-|-|",
				"| W-1 | Write the importer | WIP | high | ana | W-0 | parse the CSV | imports 10k rows | task | io | importer/ | ignored |",
			),
			items: []events.WorkItem{{
				Key: "W-1", Title: "Write the importer", Status: "in_progress", RawStatus: "WIP", Kind: "task", Priority: "high",
				NextAction: "parse the CSV", Acceptance: []string{"imports 10k rows"}, DependsOn: dep("W-0"), Owner: "ana",
				Tags: []string{"io"}, Paths: []string{"importer/"},
			}},
		},
		{
			name:  "TaskIsKeyWithoutID",
			file:  md("| Task | Title | Deps | Who | Definition of Done | State |", "|---|---|---|---|---|---|", "| T-001 | Seed data | T-000 | kim | seeds load; tests pass | ready |"),
			items: []events.WorkItem{{Key: "T-001", Title: "Seed data", Status: "ready", DependsOn: dep("T-000"), Owner: "kim", Acceptance: []string{"seeds load", "tests pass"}}},
		},
		{
			name:  "SummaryBesideTitle",
			file:  md("| id | title | summary | description | status |", "|---|---|---|---|---|", "| X-1 | Title | The summary | A description | done |"),
			items: []events.WorkItem{{Key: "X-1", Title: "Title", Summary: "The summary", Status: "completed", RawStatus: "done"}},
		},
		{
			name: "FieldMap",
			file: md("| Ref # | Headline | Stage | Then |", "|---|---|---|---|", "| 12 | Numeric keys | shipped | celebrate |"),
			opts: source.Options{
				FieldMap:  map[string]string{"key": "Ref #", "title": "headline", "status": "STAGE:", "next_action": "Then"},
				StatusMap: map[string]string{"Shipped": "completed"},
			},
			items: []events.WorkItem{{Key: "12", Title: "Numeric keys", Status: "completed", RawStatus: "shipped", NextAction: "celebrate"}},
		},
		{
			name:  "FieldMapWinsOverSynonym",
			file:  md("| ID | Task | Status |", "|---|---|---|", "| A-1 | the title | done |"),
			opts:  source.Options{FieldMap: map[string]string{"title": "task"}},
			items: []events.WorkItem{{Key: "A-1", Title: "the title", Status: "completed", RawStatus: "done"}},
		},
		{
			name:   "UnknownStatus",
			file:   md("| ID | Title | Status |", "|---|---|---|", "| A-1 | fine | planned |", "| A-2 | odd | parked |", "| A-3 | empty | |"),
			items:  []events.WorkItem{{Key: "A-1", Title: "fine", Status: "planned"}, {Key: "A-2", Title: "odd", Status: "unknown", RawStatus: "parked"}, {Key: "A-3", Title: "empty", Status: "unknown"}},
			issues: []string{"status_unmapped@4 A-2", "status_unmapped@5 A-3"},
		},
		{
			name: "HalfEditedRows",
			file: md(
				"| ID | Title | Status | Owner |",
				"|---|---|---|---|",
				"| A-1 | too few | done",
				"| A-2 | too many | done | ana | extra | cells |",
				"| | no key | done | |",
				"|   |   |   |   |",
				"| A-3 | last | ready | bo |",
			),
			items: []events.WorkItem{
				{Key: "A-1", Title: "too few", Status: "completed", RawStatus: "done"},
				{Key: "A-2", Title: "too many", Status: "completed", RawStatus: "done", Owner: "ana"},
				{Key: "A-3", Title: "last", Status: "ready", Owner: "bo"},
			},
			issues: []string{"malformed@3 A-1", "malformed@4 A-2", "missing_key@5"},
		},
		{
			name:   "MissingTitle",
			file:   md("| ID | Title | Status |", "|---|---|---|", "| A-1 |  | done |"),
			items:  []events.WorkItem{{Key: "A-1", Status: "completed", RawStatus: "done"}},
			issues: []string{"missing_title@3 A-1"},
		},
		{
			name:   "NoKeyColumn",
			file:   md("| Risk | Impact |", "|---|---|", "| outage | high |", "", "| ID | Title | Status |", "|---|---|---|", "| A-1 | x | done |"),
			keys:   []string{"A-1"},
			issues: []string{"missing_key@1"},
		},
		{
			name:   "NoStatusColumn",
			file:   md("| ID | Title |", "|---|---|", "| A-1 | x |", "| A-2 | y |"),
			items:  []events.WorkItem{{Key: "A-1", Title: "x", Status: "unknown"}, {Key: "A-2", Title: "y", Status: "unknown"}},
			issues: []string{"status_unmapped@1"},
		},
		{
			name:   "Duplicate",
			file:   md("| ID | Title | Status |", "|---|---|---|", "| A-1 | x | done |", "", "| ID | Title | Status |", "|---|---|---|", "| A-1 | again | todo |"),
			keys:   []string{"A-1", "A-1"},
			issues: []string{"duplicate_key@7 A-1"},
		},
		{
			name:   "DelimiterMismatch",
			file:   md("| ID | Title | Status |", "|---|---|", "| A-1 | x | done |"),
			keys:   []string{"A-1"},
			issues: []string{"malformed@2"},
		},
		{
			name:  "NoOuterPipes",
			file:  md("ID | Title | Status", "--- | --- | ---", "A-1 | bare | done"),
			items: []events.WorkItem{{Key: "A-1", Title: "bare", Status: "completed", RawStatus: "done"}},
		},
		{
			name: "NotATable",
			file: md("a | b", "", "|---|", "```", "| ID | Title |", "|---|---|", "| A-1 | fenced |", "```"),
		},
		{
			name:  "Unicode",
			file:  md("| ID | Título | Estado |", "|---|---|---|", "| Ñ-1 | x | hecho |", "| CAFÉ-2 | ☕ Café — crème | en curso |"),
			opts:  source.Options{FieldMap: map[string]string{"title": "Título", "status": "Estado"}, StatusMap: map[string]string{"hecho": "completed", "en curso": "in_progress"}},
			items: []events.WorkItem{{Key: "Ñ-1", Title: "x", Status: "completed", RawStatus: "hecho"}, {Key: "CAFÉ-2", Title: "☕ Café — crème", Status: "in_progress", RawStatus: "en curso"}},
		},
		{name: "Empty", file: nil},
	}
	runItemCases(t, source.MarkdownTable, path, tests)
}

var headingsFile = md(
	"# Auth work",
	"",
	"Tracked here until the tracker migration.",
	"",
	"## AUTH-3 — Rotate session keys",
	"",
	"Sessions are signed with one key that never changes.",
	"It leaked once.",
	"",
	"**Status:** in progress",
	"**Priority**: P1",
	"- Owner: dana",
	"- Depends on: AUTH-1, AUTH-2",
	"Next action: write the rotation job",
	"Blocker: none",
	"Goal: G-2",
	"Milestone: M-3",
	"Kind: security",
	"Acceptance:",
	"- [ ] old keys still verify for 24h",
	"- new sessions use the new key",
	"",
	"### Notes",
	"",
	"Ask ops about the KMS quota.",
	"",
	"### AUTH-4: Alert on verification failures",
	"Status: todo",
	"Summary: page when more than 1% of sessions fail to verify.",
	"",
	"## AUTH-5 – Drop legacy cookies",
	"- Status: blocked (waiting on the mobile release)",
	"- Acceptance:",
	"  - Owner: web team signs off",
	"  - no cookie named sid",
	"- Next step: ship mobile 4.2",
	"",
	"## AUTH-6 - Audit log",
	"Status: ready",
	"### Acceptance",
	"- every login is logged",
	"- logs kept 90 days",
	"### Next action",
	"Draft the schema",
	"with security.",
	"",
	"## Backlog",
	"",
	"## UTF-8 cleanup",
	"Status: todo",
)

func TestHeadings(t *testing.T) {
	t.Parallel()
	const path = "docs/auth.md"

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		c := headingsFile
		res := parse(t, source.MarkdownHeadings, path, c, source.Options{})
		require.Equal(t, []events.WorkItem{
			{
				Key: "AUTH-3", Title: "Rotate session keys", Status: "in_progress", RawStatus: "in progress", Kind: "security",
				Priority: "P1", Summary: "Sessions are signed with one key that never changes. It leaked once.",
				NextAction: "write the rotation job",
				Acceptance: []string{"old keys still verify for 24h", "new sessions use the new key"},
				DependsOn:  dep("AUTH-1", "AUTH-2"), Goal: "G-2", Milestone: "M-3", Owner: "dana", Source: at(path, c, 5, 25),
			},
			{
				Key: "AUTH-4", Title: "Alert on verification failures", Status: "planned", RawStatus: "todo",
				Summary: "page when more than 1% of sessions fail to verify.", Source: at(path, c, 27, 29),
			},
			{
				Key: "AUTH-5", Title: "Drop legacy cookies", Status: "blocked", RawStatus: "blocked (waiting on the mobile release)",
				Blocker: "waiting on the mobile release", NextAction: "ship mobile 4.2",
				Acceptance: []string{"Owner: web team signs off", "no cookie named sid"}, Source: at(path, c, 31, 36),
			},
			{
				Key: "AUTH-6", Title: "Audit log", Status: "ready", NextAction: "Draft the schema with security.",
				Acceptance: []string{"every login is logged", "logs kept 90 days"}, Source: at(path, c, 38, 45),
			},
		}, res.Items)
		require.Equal(t, []string{"missing_key@49"}, codes(res))
	})

	t.Run("CRLF", func(t *testing.T) {
		t.Parallel()
		requireCRLFSame(t, source.MarkdownHeadings, path, headingsFile)
	})

	tests := []itemCase{
		{
			name: "Separators",
			file: md("## A-1 — em", "Status: done", "## A-2 – en", "Status: done", "## A-3 - hyphen", "Status: done",
				"### A-4: colon", "Status: done", "## **A-5** bold", "Status: done", "## `A-6` code", "Status: done",
				"## [A-7] bracket", "Status: done", "## A_8|pipe", "Status: done", "## A-9", "Status: done"),
			keys:   []string{"A-1", "A-2", "A-3", "A-4", "A-5", "A-6", "A-7", "A_8", "A-9"},
			issues: []string{"missing_title@17 A-9"},
		},
		{
			name:   "NoStatus",
			file:   md("## A-1: nothing but a title"),
			items:  []events.WorkItem{{Key: "A-1", Title: "nothing but a title", Status: "unknown"}},
			issues: []string{"status_unmapped@1 A-1"},
		},
		{
			name:   "UnknownStatus",
			file:   md("## A-1: x", "", "", "Status: parked"),
			items:  []events.WorkItem{{Key: "A-1", Title: "x", Status: "unknown", RawStatus: "parked"}},
			issues: []string{"status_unmapped@4 A-1"},
		},
		{
			name: "FieldMapAndStatusMap",
			file: md("## A-1: x", "Stage: Parked", "Then do: call Bo", "Done when: Bo says yes; Al agrees"),
			opts: source.Options{
				FieldMap:  map[string]string{"status": "stage", "next_action": "Then do"},
				StatusMap: map[string]string{"parked": "blocked"},
			},
			items: []events.WorkItem{{Key: "A-1", Title: "x", Status: "blocked", RawStatus: "Parked", NextAction: "call Bo", Acceptance: []string{"Bo says yes", "Al agrees"}}},
		},
		{
			name:   "Duplicate",
			file:   md("## A-1: x", "Status: done", "## A-1: y", "Status: todo"),
			keys:   []string{"A-1", "A-1"},
			issues: []string{"duplicate_key@3 A-1"},
		},
		{
			name:  "SpanEndsAtSameLevel",
			file:  md("### A-1: deep", "Status: done", "#### detail", "text", "", "", "## Section", "Status: todo", "### A-2: next", "Status: done"),
			keys:  []string{"A-1", "A-2"},
			items: nil,
			// "## Section" holds a Status line but no KEY.
			issues: []string{"missing_key@7"},
		},
		{
			name:  "Unicode",
			file:  md("## ÜB-1 — Übersetzung 日本語", "Status: 完了"),
			opts:  source.Options{StatusMap: map[string]string{"完了": "completed"}},
			items: []events.WorkItem{{Key: "ÜB-1", Title: "Übersetzung 日本語", Status: "completed", RawStatus: "完了"}},
		},
		{
			name:   "CodeFence",
			file:   md("## A-1: real", "Status: done", "```", "## A-2: example", "Status: todo", "```", "after the fence"),
			items:  []events.WorkItem{{Key: "A-1", Title: "real", Status: "completed", RawStatus: "done", Summary: "after the fence"}},
			issues: nil,
		},
		{name: "Empty", file: nil},
		{name: "OnlySections", file: md("# Title", "## Section", "text")},
	}
	runItemCases(t, source.MarkdownHeadings, path, tests)

	t.Run("Span", func(t *testing.T) {
		t.Parallel()
		c := md("### A-1: deep", "Status: done", "#### detail", "text", "", "", "## Section", "### A-2: next", "Status: done", "")
		res := parse(t, source.MarkdownHeadings, path, c, source.Options{})
		require.Equal(t, at(path, c, 1, 4), res.Items[0].Source)
		require.Equal(t, at(path, c, 8, 9), res.Items[1].Source)
	})
}

func TestGoals(t *testing.T) {
	t.Parallel()
	const path = "GOALS.md"

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		c := md(
			"# Goals",
			"",
			"What this quarter is for.",
			"",
			"## G-1 — Ship the hosted beta",
			"Status: Active",
			"Summary: ten design partners on the hosted build by June.",
			"",
			"Longer notes that are not the summary.",
			"",
			"## G-2: Cut infra cost",
			"**Status:** achieved",
			"",
			"Halve the monthly bill",
			"without slowing CI.",
			"",
			"### Detail",
			"- move CI to spot runners",
			"",
			"## Make onboarding self-serve",
			"",
		)
		res := parse(t, source.GoalsMarkdown, path, c, source.Options{})
		require.Equal(t, []events.Goal{
			{Key: "G-1", Title: "Ship the hosted beta", Status: "active", Summary: "ten design partners on the hosted build by June.", Source: at(path, c, 5, 9)},
			{Key: "G-2", Title: "Cut infra cost", Status: "achieved", Summary: "Halve the monthly bill without slowing CI.", Source: at(path, c, 11, 18)},
			{Key: "G-3", Title: "Make onboarding self-serve", Source: at(path, c, 20, 20)},
		}, res.Goals)
		require.Empty(t, res.Issues)
		require.Empty(t, res.Items)
	})

	tests := []recordCase[events.Goal]{
		{
			name: "NoKeys",
			file: md("# Goals", "## Reliability", "Status: active", "## Speed", "Fast builds."),
			want: []events.Goal{{Key: "G-1", Title: "Reliability", Status: "active"}, {Key: "G-2", Title: "Speed", Summary: "Fast builds."}},
		},
		{
			name: "H1Goals",
			file: md("# One", "Status: active", "# Two"),
			want: []events.Goal{{Key: "G-1", Title: "One", Status: "active"}, {Key: "G-2", Title: "Two"}},
		},
		{
			name: "GeneratedKeyAvoidsExplicit",
			file: md("## Unkeyed", "## G-1: explicit", "## G-3: explicit too", "## Another"),
			want: []events.Goal{{Key: "G-2", Title: "Unkeyed"}, {Key: "G-1", Title: "explicit"}, {Key: "G-3", Title: "explicit too"}, {Key: "G-4", Title: "Another"}},
		},
		{
			name: "KeyedLevelWins",
			file: md("## Q3", "### OKR-1 — Grow", "Status: On Track", "### OKR-2 — Retain"),
			want: []events.Goal{{Key: "OKR-1", Title: "Grow", Status: "on track"}, {Key: "OKR-2", Title: "Retain"}},
		},
		{
			name: "FieldMap",
			file: md("## G-1: x", "Health: green", "TL;DR: short"),
			opts: source.Options{FieldMap: map[string]string{"status": "Health", "summary": "TL;DR"}},
			want: []events.Goal{{Key: "G-1", Title: "x", Status: "green", Summary: "short"}},
		},
		{
			name:   "Duplicate",
			file:   md("## G-1: a", "## G-1: b"),
			want:   []events.Goal{{Key: "G-1", Title: "a"}, {Key: "G-1", Title: "b"}},
			issues: []string{"duplicate_key@2 G-1"},
		},
		{
			name:   "MissingTitle",
			file:   md("## G-1"),
			want:   []events.Goal{{Key: "G-1"}},
			issues: []string{"missing_title@1 G-1"},
		},
		{
			name: "CRLFUnicode",
			file: crlf(md("## G-1 — Été 日本", "Status: Actif", "Résumé ici.")),
			want: []events.Goal{{Key: "G-1", Title: "Été 日本", Status: "actif", Summary: "Résumé ici."}},
		},
		{name: "NoGoals", file: md("Just prose, no headings."), issues: []string{"malformed@1"}},
		{name: "Empty", file: nil},
	}
	runRecordCases(t, source.GoalsMarkdown, path, tests, func(r source.Result) []events.Goal { return r.Goals },
		func(g *events.Goal) *events.SourceRef { return &g.Source })
}

func TestRules(t *testing.T) {
	t.Parallel()
	const path = "RULES.md"

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		c := md(
			"# Rules",
			"",
			"Read before every session.",
			"",
			"## Hard rules",
			"",
			"- Never commit secrets (paths: config/, .env*)",
			"- R-7: Migrations are forward-only;",
			"  never edit a released one.",
			"  - see schema/README.md",
			"1. Keep `go vet` clean",
			"",
			"## Soft rules",
			"",
			"- [hard] Run the race detector before pushing",
			"- HARD: no force pushes to main",
			"- **Soft:** prefer table-driven tests",
			"- Soft-delete rows instead of deleting them",
			"- UTF-8 everywhere",
			"",
			"## R-9 (soft) Keep PRs small",
			"Paths: src/**, docs/",
			"Strength: hard",
			"",
			"Under 400 lines where possible.",
			"",
			"## R-10",
			"",
			"Answer in the user's language.",
			"",
			"## Other",
			"- Document every exported name",
		)
		res := parse(t, source.RulesMarkdown, path, c, source.Options{})
		require.Equal(t, []events.Rule{
			{Key: "R-1", Text: "Never commit secrets", Strength: "hard", Paths: []string{"config/", ".env*"}, Source: at(path, c, 7, 7)},
			{Key: "R-7", Text: "Migrations are forward-only; never edit a released one.", Strength: "hard", Source: at(path, c, 8, 10)},
			{Key: "R-3", Text: "Keep `go vet` clean", Strength: "hard", Source: at(path, c, 11, 11)},
			{Key: "R-4", Text: "Run the race detector before pushing", Strength: "hard", Source: at(path, c, 15, 15)},
			{Key: "R-5", Text: "no force pushes to main", Strength: "hard", Source: at(path, c, 16, 16)},
			{Key: "R-6", Text: "prefer table-driven tests", Strength: "soft", Source: at(path, c, 17, 17)},
			{Key: "R-8", Text: "Soft-delete rows instead of deleting them", Strength: "soft", Source: at(path, c, 18, 18)},
			{Key: "R-11", Text: "UTF-8 everywhere", Strength: "soft", Source: at(path, c, 19, 19)},
			{Key: "R-9", Text: "Keep PRs small", Strength: "hard", Paths: []string{"src/**", "docs/"}, Source: at(path, c, 21, 25)},
			{Key: "R-10", Text: "Answer in the user's language.", Strength: "soft", Source: at(path, c, 27, 29)},
			{Key: "R-12", Text: "Document every exported name", Strength: "soft", Source: at(path, c, 32, 32)},
		}, res.Rules)
		require.Empty(t, res.Issues)
	})

	tests := []recordCase[events.Rule]{
		{
			name: "DefaultSoft",
			file: md("- Small commits", "- (hard) Tests pass", "- Never skip CI [HARD]"),
			want: []events.Rule{{Key: "R-1", Text: "Small commits", Strength: "soft"}, {Key: "R-2", Text: "Tests pass", Strength: "hard"}, {Key: "R-3", Text: "Never skip CI", Strength: "hard"}},
		},
		{
			name: "NestedSections",
			file: md("## Hard constraints", "### Security", "- no secrets", "### Style", "- [soft] short names", "## Guidance", "- be kind"),
			want: []events.Rule{
				{Key: "R-1", Text: "no secrets", Strength: "hard"}, {Key: "R-2", Text: "short names", Strength: "soft"}, {Key: "R-3", Text: "be kind", Strength: "soft"},
			},
		},
		{
			name:   "Duplicate",
			file:   md("- R-1: a", "- R-1: b"),
			want:   []events.Rule{{Key: "R-1", Text: "a", Strength: "soft"}, {Key: "R-1", Text: "b", Strength: "soft"}},
			issues: []string{"duplicate_key@2 R-1"},
		},
		{
			name:   "MissingText",
			file:   md("- [hard]", "- R-2:", "- real"),
			want:   []events.Rule{{Key: "R-1", Text: "real", Strength: "soft"}},
			issues: []string{"missing_title@1", "missing_title@2 R-2"},
		},
		{
			name: "CRLFUnicode",
			file: crlf(md("## Règles strictes (hard)", "- Ne jamais pousser de secrets 🔒", "- R-2: 日本語 OK")),
			want: []events.Rule{{Key: "R-1", Text: "Ne jamais pousser de secrets 🔒", Strength: "hard"}, {Key: "R-2", Text: "日本語 OK", Strength: "hard"}},
		},
		{
			name: "Checkboxes",
			file: md("- [ ] [hard] Sign commits", "- [x] Keep a changelog"),
			want: []events.Rule{{Key: "R-1", Text: "Sign commits", Strength: "hard"}, {Key: "R-2", Text: "Keep a changelog", Strength: "soft"}},
		},
		{name: "OnlyProse", file: md("# Rules", "", "Be reasonable."), issues: []string{"malformed@1"}},
		{name: "Empty", file: nil},
	}
	runRecordCases(t, source.RulesMarkdown, path, tests, func(r source.Result) []events.Rule { return r.Rules },
		func(r *events.Rule) *events.SourceRef { return &r.Source })
}

func TestPlan(t *testing.T) {
	t.Parallel()
	const path = "PLAN.md"

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		c := md(
			"# Plan",
			"",
			"We ship the importer in two milestones.",
			"",
			"| Risk | Mitigation |",
			"|------|------------|",
			"| CSV dialects | sniff the delimiter |",
			"",
			"## Milestone 1",
			"",
			"| Key | Task | Status | Depends on |",
			"|-----|------|--------|------------|",
			"| M-1 | Parse CSV | done | |",
			"| M-2 | Map columns | doing | M-1 |",
			"",
			"### M-3: Import old plans",
			"Status: ready",
			"Depends on: M-2",
			"",
			"## Milestone 2",
			"",
			"- [ ] M-9: a checklist line is prose here",
		)
		res := parse(t, source.PlanMarkdown, path, c, source.Options{})
		require.Equal(t, []events.WorkItem{
			{Key: "M-1", Title: "Parse CSV", Status: "completed", RawStatus: "done", Source: at(path, c, 13, 13)},
			{Key: "M-2", Title: "Map columns", Status: "in_progress", RawStatus: "doing", DependsOn: dep("M-1"), Source: at(path, c, 14, 14)},
			{Key: "M-3", Title: "Import old plans", Status: "ready", DependsOn: dep("M-2"), Source: at(path, c, 16, 18)},
		}, res.Items)
		require.Empty(t, res.Issues)
	})

	tests := []itemCase{
		{
			name:   "TaskColumnIsTheKey",
			file:   md("| Task | Status |", "|---|---|", "| T-1 | done |"),
			keys:   []string{"T-1"},
			issues: []string{"missing_title@3 T-1"},
		},
		{
			name:   "TableWithStatusNoKey",
			file:   md("| Title | Status |", "|---|---|", "| a | done |"),
			issues: []string{"missing_key@1"},
		},
		{
			name:   "DuplicateAcrossForms",
			file:   md("## P-1: heading", "Status: todo", "", "| ID | Title | Status |", "|---|---|---|", "| P-1 | row | done |"),
			keys:   []string{"P-1", "P-1"},
			issues: []string{"duplicate_key@6 P-1"},
		},
		{
			name:   "OrderedByLine",
			file:   md("| ID | Title | Status |", "|---|---|---|", "| P-2 | row | done |", "", "## P-1: heading", "Status: todo", "", "| ID | Title | Status |", "|---|---|---|", "| P-3 | row | done |"),
			keys:   []string{"P-2", "P-1", "P-3"},
			issues: nil,
		},
		{name: "MilestoneStatusIsProse", file: md("## Milestone 1", "Status: done", "", "## M-1: real", "Status: done"), keys: []string{"M-1"}},
		{name: "Prose", file: md("# Plan", "", "Nothing tracked yet.")},
		{name: "Empty", file: nil},
		{name: "Binary", file: []byte{0xff, 0xfe, 'P', 0}, issues: []string{"unreadable@1"}},
	}
	runItemCases(t, source.PlanMarkdown, path, tests)
}

// TestMarkdown_BadInput runs every Markdown adapter over broken files:
// each yields issues naming path and line, and never panics.
func TestMarkdown_BadInput(t *testing.T) {
	t.Parallel()
	files := map[string][]byte{
		"NUL":            []byte("## T-1: x\nStatus: done\x00\n"),
		"UnclosedFence":  md("## T-1: x", "Status: done", "```go", "## T-2: hidden"),
		"UnclosedComent": md("- [ ] T-1: x", "<!-- half", "- [ ] T-2: hidden"),
		"Truncated":      []byte("| ID | Title | Status |\n|---|---|---|\n| T-1 | half"),
		"LoneCR":         []byte("- [ ] T-1: x\r- [ ] T-2: y\r"),
		"Garbage":        []byte("\xff\xfe\xfd## \xc3\n- [\xe2] T-1:"),
	}
	wantLine := map[string]int{"NUL": 2, "UnclosedFence": 3, "UnclosedComent": 2, "Garbage": 1}
	for _, a := range []string{source.MarkdownChecklist, source.MarkdownTable, source.MarkdownHeadings, source.GoalsMarkdown, source.PlanMarkdown, source.RulesMarkdown} {
		for name, c := range files {
			t.Run(a+"/"+name, func(t *testing.T) {
				t.Parallel()
				res := parse(t, a, "x/"+name+".md", c, source.Options{})
				if line, ok := wantLine[name]; ok {
					var lines []int
					for _, is := range res.Issues {
						lines = append(lines, is.Line)
					}
					require.Contains(t, lines, line, "%+v", res.Issues)
				}
			})
		}
	}
}

package source

import (
	"fmt"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/stretchr/testify/require"
)

// TestKeyPattern: a source's key_pattern recognizes its own keys
// (spec-kit tasks keyed TASK12) and reports, with the line, a key that
// does not match it (a beads issue outside the project's prefix).
func TestKeyPattern(t *testing.T) {
	t.Run("spec-kit keys of the team's own form", func(t *testing.T) {
		content := "## Phase 1: Setup\n- [ ] TASK12 Create the layout\n- [ ] T001 Not a key of this register\n"
		res := Parse(SpecKitTasks, "tasks.md", []byte(content), Options{KeyPattern: `TASK[0-9]+`})
		require.Len(t, res.Items, 1)
		require.Equal(t, "TASK12", res.Items[0].Key)
		require.Len(t, res.Issues, 1)
		require.Equal(t, IssueMissingKey, res.Issues[0].Code)
		require.Equal(t, 3, res.Issues[0].Line)
	})
	t.Run("beads keys outside the pattern", func(t *testing.T) {
		content := "{\"id\":\"bd-a1b2\",\"title\":\"a\",\"status\":\"open\"}\n{\"id\":\"xx-9\",\"title\":\"b\",\"status\":\"open\"}\n"
		res := Parse(BeadsJSONL, ".beads/issues.jsonl", []byte(content), Options{KeyPattern: `bd-[0-9a-z]+`})
		require.Len(t, res.Items, 2)
		require.Len(t, res.Issues, 1)
		require.Equal(t, IssueMissingKey, res.Issues[0].Code)
		require.Equal(t, "xx-9", res.Issues[0].Key)
		require.Equal(t, 2, res.Issues[0].Line)
	})
	t.Run("no pattern: the format's built-in keys", func(t *testing.T) {
		res := Parse(BeadsJSONL, ".beads/issues.jsonl", []byte("{\"id\":\"xx-9\",\"title\":\"b\",\"status\":\"open\"}\n"), Options{})
		require.Empty(t, res.Issues)
	})
}

// TestKeyPattern_Markdown: a source's key_pattern applies to the Markdown
// and YAML adapters too. Keys of the team's own form, which the built-in
// KEY does not recognize (TASK.4: a dot; 7/12: digits first), are keys
// in a checklist, a TODO list, a heading register and a depends-on
// value; a key a table's column or a YAML ledger's field names outside
// the pattern is reported with its line.
func TestKeyPattern_Markdown(t *testing.T) {
	keys := func(res Result) []string {
		var out []string
		for _, it := range res.Items {
			out = append(out, it.Key)
		}
		return out
	}
	codes := func(res Result) []string {
		var out []string
		for _, is := range res.Issues {
			out = append(out, fmt.Sprintf("%s@%d %s", is.Code, is.Line, is.Key))
		}
		return out
	}
	t.Run("checklist", func(t *testing.T) {
		content := "# Work\n\n- [ ] TASK.4: Persist the cart (depends on TASK.12)\n- [x] **TASK.12** Model the cart\n- [ ] CART-1: A built-in KEY, not this register's\n"
		res := Parse(MarkdownChecklist, "TODO.md", []byte(content), Options{KeyPattern: `TASK\.[0-9]+`})
		require.Equal(t, []string{"TASK.4", "TASK.12"}, keys(res))
		require.Equal(t, []events.Dependency{{Key: "TASK.12", Required: true}}, res.Items[0].DependsOn)
		require.Equal(t, "Persist the cart", res.Items[0].Title)
		require.Equal(t, []string{"missing_key@5 "}, codes(res), "the line with another register's key has no key here")

		builtin := Parse(MarkdownChecklist, "TODO.md", []byte(content), Options{})
		require.Equal(t, []string{"CART-1"}, keys(builtin), "without the pattern, only the built-in KEY")
	})
	t.Run("todo list", func(t *testing.T) {
		content := "# TODO\n\n- [ ] 7/12 Write the changelog\n  - [x] 7/13 Collect the merged pull requests\n"
		res := Parse(MarkdownTodo, "TODO.md", []byte(content), Options{KeyPattern: `[0-9]+/[0-9]+`})
		require.Equal(t, []string{"7/12", "7/13"}, keys(res))
		require.Equal(t, "7/12", res.Items[1].Parent)
		require.Empty(t, res.Issues)
	})
	t.Run("heading register", func(t *testing.T) {
		content := "# Ledger\n\n## TASK.1 — Rotate the keys\n\nStatus: doing\n\n## TASK.2: Audit log\n\nStatus: todo\nDepends on: TASK.1\n"
		res := Parse(MarkdownHeadings, "work.md", []byte(content), Options{KeyPattern: `TASK\.[0-9]+`})
		require.Equal(t, []string{"TASK.1", "TASK.2"}, keys(res))
		require.Equal(t, "Rotate the keys", res.Items[0].Title)
		require.Equal(t, []events.Dependency{{Key: "TASK.1", Required: true}}, res.Items[1].DependsOn)
	})
	t.Run("table", func(t *testing.T) {
		content := "| ID | Title | Status |\n| --- | --- | --- |\n| TASK.1 | Rotate the keys | todo |\n| CART-2 | Audit log | done |\n"
		res := Parse(MarkdownTable, "TASKS.md", []byte(content), Options{KeyPattern: `TASK\.[0-9]+`})
		require.Equal(t, []string{"TASK.1", "CART-2"}, keys(res))
		require.Equal(t, []string{"missing_key@4 CART-2"}, codes(res))
	})
	t.Run("yaml ledger", func(t *testing.T) {
		content := "version: 1\nitems:\n  - id: TASK.1\n    title: Rotate the keys\n    status: todo\n  - id: CART-2\n    title: Audit log\n    status: done\n"
		res := Parse(YAMLLedger, "ledger.yaml", []byte(content), Options{KeyPattern: `TASK\.[0-9]+`})
		require.Equal(t, []string{"TASK.1", "CART-2"}, keys(res))
		require.Equal(t, []string{"missing_key@6 CART-2"}, codes(res))
		require.Empty(t, Parse(YAMLLedger, "ledger.yaml", []byte(content), Options{}).Issues)
	})
}

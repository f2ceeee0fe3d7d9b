package intake

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/intake/source"
)

// writeFile writes content at rel under dir.
func writeFile(t *testing.T, dir, rel, content string) {
	t.Helper()
	full := filepath.Join(dir, filepath.FromSlash(rel))
	require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
	require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
}

// issueAt finds the issue of code at line.
func issueAt(issues []events.SourceIssue, code string, line int) bool {
	for _, is := range issues {
		if is.Code == code && is.Line == line {
			return true
		}
	}
	return false
}

// TestRegisters_BadInput: a malformed file of each format gets an issue
// naming its path and line, and nothing of what it could not read whole
// is indexed: a truncated JSON document gives no item, a ragged CSV row
// or a broken JSON line is skipped while the others are read.
func TestRegisters_BadInput(t *testing.T) {
	for _, tc := range []struct {
		name, path, adapter, content string
		code                         string
		line                         int
		keys                         []string
	}{
		{"taskmaster truncated", ".taskmaster/tasks/tasks.json", source.TaskmasterJSON,
			"{\"master\": {\"tasks\": [\n{\"id\": 1, \"title\": \"a\", \"status\": \"done\"},\n{\"id\": 2,", source.IssueMalformed, 3, nil},
		{"github truncated", "issues.json", source.GitHubIssuesJSON,
			"[\n{\"number\": 1, \"title\": \"a\", \"state\": \"OPEN\"},\n{\"number\": 2, \"ti", source.IssueMalformed, 3, nil},
		{"beads broken line", ".beads/issues.jsonl", source.BeadsJSONL,
			"{\"id\":\"bd-1\",\"title\":\"a\",\"status\":\"open\"}\n{\"id\":\"bd-2\",\"title\":\n{\"id\":\"bd-3\",\"title\":\"c\",\"status\":\"closed\"}\n", source.IssueMalformed, 2, []string{"bd-1", "bd-3"}},
		{"jira ragged row", "jira.csv", source.JiraCSV,
			"Summary,Issue key,Status\na,P-1,To Do\nb,P-2,Done,extra\nc,P-3,Done\n", source.IssueMalformed, 3, []string{"P-1", "P-3"}},
		{"linear ragged row", "linear.csv", source.LinearCSV,
			"ID,Team,Title,Status\nE-1,T,a,Todo\nE-2,T\n", source.IssueMalformed, 3, []string{"E-1"}},
		{"jira header without status", "jira.csv", source.JiraCSV,
			"Summary,Issue key,State\na,P-1,To Do\n", source.IssueMalformed, 1, nil},
		{"linear header without id", "linear.csv", source.LinearCSV,
			"Key,Team,Title,Status\nE-1,T,a,Todo\n", source.IssueMalformed, 1, nil},
		{"csv quote never closed", "jira.csv", source.JiraCSV,
			"Summary,Issue key,Status\na,P-1,To Do\n\"b,P-2,Done\nc,P-3,Done\n", source.IssueMalformed, 3, []string{"P-1"}},
		{"beads duplicate key", ".beads/issues.jsonl", source.BeadsJSONL,
			"{\"id\":\"bd-1\",\"title\":\"a\",\"status\":\"open\"}\n{\"id\":\"bd-1\",\"title\":\"b\",\"status\":\"open\"}\n", source.IssueDuplicateKey, 2, []string{"bd-1", "bd-1"}},
		{"spec-kit duplicate key", "specs/001-a/tasks.md", source.SpecKitTasks,
			"## Phase 1: Setup\n- [ ] T001 a\n- [ ] T001 b\n", source.IssueDuplicateKey, 3, []string{"T001", "T001"}},
		{"taskmaster duplicate key", ".taskmaster/tasks/tasks.json", source.TaskmasterJSON,
			"{\"tasks\": [\n{\"id\": 1, \"title\": \"a\", \"status\": \"done\"},\n{\"id\": 1, \"title\": \"b\", \"status\": \"pending\"}\n]}", source.IssueDuplicateKey, 3, []string{"1", "1"}},
		{"taskmaster not UTF-8", ".taskmaster/tasks/tasks.json", source.TaskmasterJSON,
			"{\"tasks\": [\n{\"id\": 1, \"title\": \"caf\xe9\", \"status\": \"done\"}\n]}", source.IssueMalformed, 2, nil},
		{"beads not UTF-8", ".beads/issues.jsonl", source.BeadsJSONL,
			"{\"id\":\"bd-1\",\"title\":\"a\",\"status\":\"open\"}\n{\"id\":\"bd-2\",\"title\":\"\xff\",\"status\":\"open\"}\n", source.IssueMalformed, 2, nil},
		{"github not UTF-8", "issues.json", source.GitHubIssuesJSON,
			"[{\"number\": 1, \"title\": \"\xc3\", \"state\": \"OPEN\"}]", source.IssueMalformed, 1, nil},
		{"jira not UTF-8", "jira.csv", source.JiraCSV,
			"Summary,Issue key,Status\na,P-1,To Do\n\xfe,P-2,Done\n", source.IssueMalformed, 3, nil},
		{"linear not UTF-8", "linear.csv", source.LinearCSV,
			"ID,Team,Title,Status\nE-1,T,\xff,Todo\n", source.IssueMalformed, 2, nil},
		{"spec-kit not UTF-8 (read, reported)", "specs/001-a/tasks.md", source.SpecKitTasks,
			"## Phase 1: Setup\n- [ ] T001 caf\xe9\n", source.IssueMalformed, 2, []string{"T001"}},
		{"kanban not UTF-8 (read, reported)", "board.kanban.md", source.ObsidianKanban,
			"---\nkanban-plugin: basic\n---\n## Todo\n- [ ] caf\xe9\n", source.IssueMalformed, 5, []string{"card-"}},
		{"kanban duplicate key", "board.kanban.md", source.ObsidianKanban,
			"---\nkanban-plugin: basic\n---\n## Todo\n- [ ] K-1 a\n- [ ] K-1 b\n", source.IssueDuplicateKey, 6, []string{"K-1", "K-1"}},
		{"github duplicate key", "issues.json", source.GitHubIssuesJSON,
			"[\n{\"number\": 1, \"title\": \"a\", \"state\": \"OPEN\"},\n{\"number\": 1, \"title\": \"b\", \"state\": \"OPEN\"}\n]", source.IssueDuplicateKey, 3, []string{"#1", "#1"}},
		{"jira duplicate key", "jira.csv", source.JiraCSV,
			"Summary,Issue key,Status\na,P-1,To Do\nb,P-1,Done\n", source.IssueDuplicateKey, 3, []string{"P-1", "P-1"}},
		{"linear duplicate key", "linear.csv", source.LinearCSV,
			"ID,Team,Title,Status\nE-1,T,a,Todo\nE-1,T,b,Done\n", source.IssueDuplicateKey, 3, []string{"E-1", "E-1"}},
		{"todo duplicate key", "TODO.md", source.MarkdownTodo,
			"# TODO\n\n- [ ] T-1 a\n- [ ] T-1 b\n", source.IssueDuplicateKey, 4, []string{"T-1", "T-1"}},
		{"todo not UTF-8 (read, reported)", "TODO.md", source.MarkdownTodo,
			"# TODO\n\n- [ ] caf\xe9\n", source.IssueMalformed, 3, []string{"todo-"}},
		{"table ragged row (padded, reported)", "TASKS.md", source.MarkdownTable,
			"| ID | Title | Status |\n| --- | --- | --- |\n| T-1 | a | todo |\n| T-2 | b |\n", source.IssueMalformed, 4, []string{"T-1", "T-2"}},
		{"table duplicate key", "TASKS.md", source.MarkdownTable,
			"| ID | Title | Status |\n| --- | --- | --- |\n| T-1 | a | todo |\n| T-1 | b | done |\n", source.IssueDuplicateKey, 4, []string{"T-1", "T-1"}},
		{"table not UTF-8 (read, reported)", "TASKS.md", source.MarkdownTable,
			"| ID | Title | Status |\n| --- | --- | --- |\n| T-1 | caf\xe9 | todo |\n", source.IssueMalformed, 3, []string{"T-1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, tc.path, tc.content)
			si, missing := Read(dir, ManifestSource{Path: tc.path, Adapter: tc.adapter, Role: RoleTasks})
			require.False(t, missing)
			require.True(t, issueAt(si.Issues, tc.code, tc.line), "want %s at %s:%d, got %+v", tc.code, tc.path, tc.line, si.Issues)
			for _, is := range si.Issues {
				require.Equal(t, tc.path, is.Path)
			}
			var keys []string
			for _, it := range si.Items {
				keys = append(keys, it.Key)
			}
			if len(tc.keys) == 1 && strings.HasSuffix(tc.keys[0], "-") {
				// A key derived from the text: the prefix and 8 hex digits.
				require.Len(t, keys, 1)
				require.Regexp(t, `^`+tc.keys[0]+`[0-9a-f]{8}$`, keys[0])
				return
			}
			require.Equal(t, tc.keys, keys, "only what was read whole is indexed")
		})
	}
}

// TestRegisters_BadGraph: a dependency on a key no source declares and a
// cycle are gaps of the preview's organization naming path:line.
func TestRegisters_BadGraph(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, ".beads/issues.jsonl",
		"{\"id\":\"bd-1\",\"title\":\"a\",\"status\":\"open\",\"dependencies\":[{\"depends_on_id\":\"bd-9\",\"type\":\"blocks\"}]}\n"+
			"{\"id\":\"bd-2\",\"title\":\"b\",\"status\":\"open\",\"dependencies\":[{\"depends_on_id\":\"bd-3\",\"type\":\"blocks\"}]}\n"+
			"{\"id\":\"bd-3\",\"title\":\"c\",\"status\":\"open\",\"dependencies\":[{\"depends_on_id\":\"bd-2\",\"type\":\"blocks\"}]}\n")
	p, err := Plan(dir, InitOptions{Sources: []string{".beads/issues.jsonl"}})
	require.NoError(t, err)
	found := map[string]int{}
	for _, g := range p.Organization.Gaps {
		if g.Code == GapDependencyMissing || g.Code == GapDependencyCycle {
			require.NotNil(t, g.Source)
			require.Equal(t, ".beads/issues.jsonl", g.Source.Path)
			found[g.Code+":"+g.Key] = g.Source.LineStart
		}
	}
	require.Equal(t, map[string]int{"dependency_missing:bd-1": 1, "dependency_cycle:bd-2": 2, "dependency_cycle:bd-3": 3}, found)
}

// TestRegisters_HugeFile: a 100 MB register of any format is refused as
// unreadable, whole, without being read: nothing of it is indexed, and
// discovery counts no item (a file found by its name is listed as
// skipped, unreadable; an export found by its content is not found).
func TestRegisters_HugeFile(t *testing.T) {
	for _, tc := range []struct {
		path, adapter, head string
		byName              bool
	}{
		{".beads/issues.jsonl", source.BeadsJSONL, "{\"id\":\"bd-1\",\"title\":\"a\",\"status\":\"open\"}\n", true},
		{".taskmaster/tasks/tasks.json", source.TaskmasterJSON, "{\"tasks\": [{\"id\": 1, \"title\": \"a\", \"status\": \"done\"}\n", true},
		{"specs/001-a/tasks.md", source.SpecKitTasks, "## Phase 1: Setup\n- [ ] T001 a\n", true},
		{"board.kanban.md", source.ObsidianKanban, "---\nkanban-plugin: basic\n---\n## Todo\n- [ ] a\n", true},
		{"TODO.md", source.MarkdownTodo, "# TODO\n\n- [ ] a\n", true},
		{"TASKS.md", source.MarkdownTable, "| ID | Title | Status |\n| --- | --- | --- |\n| T-1 | a | todo |\n", true},
		{"issues.json", source.GitHubIssuesJSON, "[{\"number\": 1, \"title\": \"a\", \"state\": \"OPEN\"}\n", false},
		{"jira.csv", source.JiraCSV, "Summary,Issue key,Status\na,P-1,To Do\n", false},
		{"linear.csv", source.LinearCSV, "ID,Team,Title,Status\nE-1,T,a,Todo\n", false},
	} {
		t.Run(tc.adapter, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			full := filepath.Join(dir, filepath.FromSlash(tc.path))
			require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
			f, err := os.Create(full)
			require.NoError(t, err)
			_, err = f.WriteString(tc.head)
			require.NoError(t, err)
			require.NoError(t, f.Truncate(100<<20)) // 100 MB, sparse, generated here, never checked in
			require.NoError(t, f.Close())

			si, missing := Read(dir, ManifestSource{Path: tc.path, Adapter: tc.adapter, Role: RoleTasks})
			require.False(t, missing)
			require.Empty(t, si.Items)
			require.Len(t, si.Issues, 1)
			require.Equal(t, source.IssueUnreadable, si.Issues[0].Code)
			require.Equal(t, tc.path, si.Issues[0].Path)
			require.Contains(t, si.Issues[0].Message, "104857600 bytes")

			inv, err := Discover(dir)
			require.NoError(t, err)
			require.Empty(t, inv.TaskRegisters)
			if tc.byName {
				require.Len(t, inv.Skipped, 1)
				require.Equal(t, tc.path, inv.Skipped[0].Path)
				require.Contains(t, inv.Skipped[0].Reason, "unreadable")
			}
		})
	}
}

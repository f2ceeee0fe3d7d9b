package source

import (
	"testing"
)

// fuzzAdapter checks that an adapter never panics and that every item it
// yields has a key and a source line inside the file.
func fuzzAdapter(f *testing.F, adapter string, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, content []byte) {
		res := Parse(adapter, "reg", content, Options{})
		lines := 1
		for _, c := range content {
			if c == '\n' {
				lines++
			}
		}
		for _, it := range res.Items {
			if it.Key == "" {
				t.Fatalf("an item without a key: %+v", it)
			}
			if it.Source.LineStart < 1 || it.Source.LineStart > lines {
				t.Fatalf("item %s at line %d of a %d-line file", it.Key, it.Source.LineStart, lines)
			}
		}
		for _, is := range res.Issues {
			if is.Line < 0 || is.Line > lines {
				t.Fatalf("issue at line %d of a %d-line file: %+v", is.Line, lines, is)
			}
		}
	})
}

func FuzzSpecKit(f *testing.F) {
	fuzzAdapter(f, SpecKitTasks, "## Phase 1: Setup\n- [ ] T001 [P] [US1] Do it\n## Phase 2: B\n- [x] T002 Then\n")
}

func FuzzTaskmaster(f *testing.F) {
	fuzzAdapter(f, TaskmasterJSON, `{"master":{"tasks":[{"id":1,"title":"a","status":"done","dependencies":[2],"subtasks":[{"id":1,"title":"s","status":"pending","dependencies":[]}]},{"id":2,"title":"b","status":"pending"}]}}`, `{"tasks":[]}`)
}

func FuzzBeads(f *testing.F) {
	fuzzAdapter(f, BeadsJSONL, "{\"id\":\"bd-1\",\"title\":\"a\",\"status\":\"open\",\"dependencies\":[{\"depends_on_id\":\"bd-2\",\"type\":\"blocks\"}]}\n{\"id\":\"bd-2\",\"title\":\"b\",\"status\":\"closed\"}\n")
}

func FuzzGitHubIssues(f *testing.F) {
	fuzzAdapter(f, GitHubIssuesJSON, `[{"number":1,"title":"a","state":"OPEN","labels":[],"milestone":null,"body":"depends on #2","assignees":[]},{"number":2,"title":"b","state":"CLOSED"}]`)
}

func FuzzJiraCSV(f *testing.F) {
	fuzzAdapter(f, JiraCSV, "Summary,Issue key,Issue id,Status,Parent,Inward issue link (Blocks)\na,P-1,1,To Do,,\nb,P-2,2,Done,1,P-1\n")
}

func FuzzLinearCSV(f *testing.F) {
	fuzzAdapter(f, LinearCSV, "ID,Team,Title,Status,Parent issue\nE-1,T,a,Todo,\nE-2,T,b,Done,E-1\n")
}

func FuzzKanban(f *testing.F) {
	fuzzAdapter(f, ObsidianKanban, "---\nkanban-plugin: basic\n---\n\n## Doing\n\n- [ ] card\n\t- [x] part\n\n## Done\n\n- [x] old\n\n%% kanban:settings\n```\n{}\n```\n%%\n")
}

func FuzzTodo(f *testing.F) {
	fuzzAdapter(f, MarkdownTodo, "# TODO\n\n### In Progress\n- [ ] a\n  - [ ] b\n    - note\n- [x] ABC-1 keyed\n")
}

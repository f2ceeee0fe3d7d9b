package intake

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/stretchr/testify/require"

	"github.com/awr-dev/awr/fixtures/testkit"
	"github.com/awr-dev/awr/internal/intake/source"
)

// registerSource is a corpus register's source.toml.
type registerSource struct {
	Format     string `toml:"format"`
	Adapter    string `toml:"adapter"`
	File       string `toml:"file"`
	Repository string `toml:"repository"`
	Commit     string `toml:"commit"`
	Path       string `toml:"path"`
	Licence    string `toml:"licence"`
	Note       string `toml:"note"`
	// GoalsFile is the file beside the register that holds its goals
	// (spec-kit's spec.md), read with GoalsAdapter.
	GoalsFile    string `toml:"goals_file"`
	GoalsAdapter string `toml:"goals_adapter"`
}

// registerCounts is a corpus register's expected.toml, counted by hand.
type registerCounts struct {
	Items        int `toml:"items"`
	Completed    int `toml:"completed"`
	Open         int `toml:"open"`
	Blocked      int `toml:"blocked"`
	Cancelled    int `toml:"cancelled"`
	Dependencies int `toml:"dependencies"`
	Goals        int `toml:"goals"`
	Groups       int `toml:"groups"`
	// GoalLinks counts the items that serve a goal the goals file
	// declares, GoalLinksMissing those that name one it does not.
	GoalLinks        int `toml:"goal_links"`
	GoalLinksMissing int `toml:"goal_links_missing"`
}

// TestRegisters_Corpus: every register of fixtures/registers, laid out
// where its tool puts it, is discovered with its adapter and ingested
// exactly as its hand-written expected.toml counts, with no issue.
func TestRegisters_Corpus(t *testing.T) {
	root := testkit.Path("fixtures", "registers")
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	// The issue's corpus: at least 14 registers, at least two of each
	// format (TODO.md and ROADMAP.md are one: nested checklists), counted
	// by the adapter each is read with.
	perAdapter, registers := map[string]int{}, 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		var src registerSource
		_, err := toml.DecodeFile(filepath.Join(root, e.Name(), "source.toml"), &src)
		require.NoError(t, err)
		perAdapter[src.Adapter]++
		registers++
	}
	require.GreaterOrEqual(t, registers, 14)
	for _, a := range []string{source.SpecKitTasks, source.TaskmasterJSON, source.BeadsJSONL, source.GitHubIssuesJSON, source.JiraCSV, source.LinearCSV, source.ObsidianKanban, source.MarkdownTodo, source.MarkdownTable} {
		require.GreaterOrEqual(t, perAdapter[a], 2, "registers read with %s", a)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		name := e.Name()
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(root, name)
			var src registerSource
			_, err := toml.DecodeFile(filepath.Join(dir, "source.toml"), &src)
			require.NoError(t, err)
			require.NotEmpty(t, src.Licence, "licence")
			require.True(t, src.Repository != "" && src.Commit != "" || src.Note != "", "provenance or a note saying why there is none")
			var want registerCounts
			_, err = toml.DecodeFile(filepath.Join(dir, "expected.toml"), &want)
			require.NoError(t, err)

			inv, err := Discover(dir)
			require.NoError(t, err)
			found := candidateAt(inv.TaskRegisters, src.File)
			require.NotNil(t, found, "discovery finds %s (found %+v)", src.File, inv.TaskRegisters)
			require.Equal(t, src.Adapter, found.Adapter)
			require.Equal(t, want.Items, found.Items, "the preview's item count")
			// awr init's preview on the register as it lies: indexed, with
			// its adapter and item count.
			pv, err := Plan(dir, InitOptions{})
			require.NoError(t, err)
			var seen *Candidate
			for i, c := range pv.Inventory.TaskRegisters {
				if c.Path == src.File {
					seen = &pv.Inventory.TaskRegisters[i]
				}
			}
			require.NotNil(t, seen)
			require.True(t, seen.Indexed, "the preview indexes %s: %+v", src.File, seen)
			require.Equal(t, src.Adapter, seen.Adapter)
			require.Equal(t, want.Items, seen.Items)

			si, missing := Read(dir, ManifestSource{Path: src.File, Adapter: src.Adapter, Role: RoleTasks})
			require.False(t, missing)
			var got registerCounts
			groups := map[string]bool{}
			for _, it := range si.Items {
				got.Items++
				switch it.Status {
				case "completed":
					got.Completed++
				case "blocked":
					got.Blocked++
				case "cancelled":
					got.Cancelled++
				default:
					got.Open++
				}
				got.Dependencies += len(it.DependsOn)
				if it.Group != "" {
					groups[it.Group] = true
				}
			}
			got.Goals, got.Groups = len(si.Goals), len(groups)
			if src.GoalsFile != "" {
				g := candidateAt(inv.Goals, src.GoalsFile)
				require.NotNil(t, g, "discovery finds the goals in %s (found %+v)", src.GoalsFile, inv.Goals)
				require.Equal(t, src.GoalsAdapter, g.Adapter)
				gi, _ := Read(dir, ManifestSource{Path: src.GoalsFile, Adapter: src.GoalsAdapter, Role: RoleGoals})
				require.Empty(t, gi.Issues)
				got.Goals = len(gi.Goals)
				keys := map[string]bool{}
				for _, goal := range gi.Goals {
					keys[goal.Key] = true
				}
				for _, it := range si.Items {
					switch {
					case it.Goal == "":
					case keys[it.Goal]:
						got.GoalLinks++
					default:
						got.GoalLinksMissing++
					}
				}
			}
			require.Equal(t, want, got)
			require.Empty(t, si.Issues)
		})
	}
}

// registerExample is `<!-- register: ADAPTER PATH items=N deps=N
// groups=N -->` before a fenced block in docs/intake.md.
var registerExample = regexp.MustCompile("(?m)^<!-- register: (\\S+) (\\S+) items=(\\d+) deps=(\\d+) groups=(\\d+) -->\\n```[a-z]*\\n((?s:.*?))```\\n")

// TestDocs_Registers runs the examples of docs/intake.md's "Registers as
// teams keep them": each file, laid out at its path in an empty project,
// is discovered with the adapter its comment names and yields the items,
// dependencies and groups it states, with no issue.
func TestDocs_Registers(t *testing.T) {
	doc, err := os.ReadFile(testkit.Path("docs", "intake.md"))
	require.NoError(t, err)
	examples := registerExample.FindAllSubmatch(doc, -1)
	adapters := map[string]bool{}
	for _, m := range examples {
		adapter, path, body := string(m[1]), string(m[2]), string(m[6])
		items, _ := strconv.Atoi(string(m[3]))
		deps, _ := strconv.Atoi(string(m[4]))
		groups, _ := strconv.Atoi(string(m[5]))
		adapters[adapter] = true
		t.Run(adapter, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, path, body)
			inv, err := Discover(dir)
			require.NoError(t, err)
			require.Len(t, inv.TaskRegisters, 1, "%+v", inv)
			require.Equal(t, path, inv.TaskRegisters[0].Path)
			require.Equal(t, adapter, inv.TaskRegisters[0].Adapter)
			si, _ := Read(dir, ManifestSource{Path: path, Adapter: adapter, Role: RoleTasks})
			require.Empty(t, si.Issues)
			gotDeps, gotGroups := 0, map[string]bool{}
			for _, it := range si.Items {
				gotDeps += len(it.DependsOn)
				if it.Group != "" {
					gotGroups[it.Group] = true
				}
			}
			require.Equal(t, []int{items, deps, groups}, []int{len(si.Items), gotDeps, len(gotGroups)})
		})
	}
	for _, a := range []string{source.SpecKitTasks, source.TaskmasterJSON, source.BeadsJSONL, source.GitHubIssuesJSON, source.JiraCSV, source.LinearCSV, source.ObsidianKanban, source.MarkdownTodo, source.MarkdownTable} {
		require.True(t, adapters[a], "docs/intake.md has no example of %s", a)
	}
}

// candidateAt is the candidate of list at path (the last, were there
// two), or nil.
func candidateAt(list []Candidate, path string) *Candidate {
	var found *Candidate
	for i, c := range list {
		if c.Path == path {
			found = &list[i]
		}
	}
	return found
}

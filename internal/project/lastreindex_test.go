package project_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/fixtures/testkit"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/project"
	"github.com/stretchr/testify/require"
)

// speckitCorpus copies the corpus's spec-kit register of goaikit/aikit
// (137 tasks, the user stories and success criteria of its spec.md) into
// a new project and accepts what awr init finds.
func speckitCorpus(t *testing.T) (*project.Project, string) {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "proj")
	copyTree(t, testkit.Path("fixtures", "registers", "speckit-aikit-002", "specs"), filepath.Join(dir, "specs"))
	p := opened(t, dir, project.Options{})
	_, err := p.Init(ctx, project.InitRequest{Accept: true})
	require.NoError(t, err)
	return p, filepath.Join(dir, "specs", "002-rust-spec-kit-complete", "tasks.md")
}

// TestStatus_GoalsAndLastReindex_Corpus: on a real spec-kit register,
// status lists the spec's goals, each with the tasks that serve it (the
// counts of the corpus's expected.toml, taken by hand), and after a
// reindex that ticks, renames, deletes and adds one task each (the added
// one above others, so that their lines move) it says exactly those
// changes, from the log, at the revision read; the claim, the loop and
// the decision on an untouched task are kept.
func TestStatus_GoalsAndLastReindex_Corpus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p, tasks := speckitCorpus(t)

	st, err := p.Status(ctx, project.StatusRequest{})
	require.NoError(t, err)
	require.Len(t, st.Goals, 19, "expected.toml: goals = 19")
	links := 0
	for _, g := range st.Goals {
		links += len(g.Work)
	}
	require.Equal(t, 84, links, "expected.toml: goal_links = 84")
	us1 := -1
	for i, g := range st.Goals {
		if g.Key == "US1" {
			us1 = i
		}
	}
	require.GreaterOrEqual(t, us1, 0, "user story 1 is a goal")
	require.Contains(t, st.Goals[us1].Work, "T031")
	require.Nil(t, st.LastReindex, "init indexed the sources for the first time: no reindex yet")

	start, err := p.SessionStart(ctx, project.SessionStartRequest{Work: "T126", Agent: "a", Claim: true})
	require.NoError(t, err)
	cp := project.SessionCheckpointRequest{SessionID: start.Session.ID, Agent: "a", Digest: "listed the commands", NextAction: "word the errors of init"}
	cp.OpenLoops = []string{"which commands print a hint"}
	cp.Decisions = []string{"every error names the flag"}
	_, err = p.SessionCheckpoint(ctx, cp)
	require.NoError(t, err)
	before, err := p.Status(ctx, project.StatusRequest{})
	require.NoError(t, err)

	b := mustReadFile(t, tasks)
	text := string(b)
	edit := func(old, new string) {
		t.Helper()
		require.Equal(t, 1, strings.Count(text, old), old)
		text = strings.Replace(text, old, new, 1)
	}
	edit("- [ ] T133 [P] Run quickstart.md", "- [X] T133 [P] Run quickstart.md")                                   // ticked
	edit("- [ ] T136 [P] Performance optimization (startup time", "- [ ] T136 [P] Speed up startup (startup time") // renamed
	edit("- [ ] T137 [P] Cross-platform testing (Linux, macOS, Windows)\n", "")                                    // deleted
	edit("- [X] T130 [P]", "- [ ] T138 [P] Print the version of every template\n- [X] T130 [P]")                   // added, above T130…T136
	require.NoError(t, os.WriteFile(tasks, []byte(text), 0o600))

	rx, err := p.SourceReindex(ctx, project.SourceReindexRequest{})
	require.NoError(t, err)
	require.Len(t, rx.Changes, 1)
	require.Equal(t, []string{"T138"}, rx.Changes[0].Added)
	require.Equal(t, []string{"T133", "T136"}, rx.Changes[0].Changed, "a task whose lines moved is not changed")
	require.Equal(t, []string{"T137"}, rx.Changes[0].Removed)

	st, err = p.Status(ctx, project.StatusRequest{})
	require.NoError(t, err)
	lr := st.LastReindex
	require.NotNil(t, lr)
	require.Equal(t, rx.ProjectRevision, lr.Seq)
	require.Equal(t, before.ProjectRevision+1, lr.FromSeq)
	require.Equal(t, [3]int{1, 2, 1}, [3]int{lr.ItemsAdded, lr.ItemsChanged, lr.ItemsRemoved})
	require.Len(t, lr.Sources, 1)
	s := lr.Sources[0]
	require.Equal(t, "specs/002-rust-spec-kit-complete/tasks.md", s.Path)
	require.Equal(t, []string{"T138"}, s.Added)
	require.Equal(t, []string{"T133", "T136"}, s.Changed)
	require.Equal(t, []string{"T137"}, s.Removed)
	require.False(t, s.First)
	require.False(t, s.Dropped)

	// At the revision before the reindex, status says what it said then.
	then, err := p.Status(ctx, project.StatusRequest{Read: commands.AtRevision(before.ProjectRevision)})
	require.NoError(t, err)
	require.Nil(t, then.LastReindex)
	require.Len(t, then.Goals, 19)

	// The untouched task keeps its claim, loop and decision.
	require.Equal(t, 1, st.LiveClaims)
	require.Equal(t, "T126", st.Queues.Current[0].Key)
	require.Equal(t, start.Session.ID, st.Queues.Current[0].Holder.SessionID)
	view, err := p.SessionShow(ctx, project.SessionShowRequest{Session: start.Session.ID})
	require.NoError(t, err)
	require.Len(t, view.Knowledge.OpenLoops, 1)
	require.Equal(t, "which commands print a hint", view.Knowledge.OpenLoops[0].Text)
	require.Len(t, view.Knowledge.Decisions, 1)
	require.Equal(t, "every error names the flag", view.Knowledge.Decisions[0].Text)
}

// TestPacket_Goals_Corpus: on the same register, the packet of a task
// tagged [US1] carries its goal (a required chunk) and no list of the
// others; the packet of a task that serves no goal (T126, untagged)
// carries the project's goals with the work serving each (the optional
// chunk goals, those some work serves first), which a budget that only
// fits the required facts drops.
func TestPacket_Goals_Corpus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p, _ := speckitCorpus(t)
	compile := func(work string, budget int) *project.CompileResult {
		t.Helper()
		res, err := p.ContextCompile(ctx, project.ContextCompileRequest{Work: work, Budget: &budget})
		if err != nil {
			require.Equal(t, fault.ContextIncomplete, fault.As(err).Code, "%v", err) // no acceptance criteria
		}
		require.NotNil(t, res)
		return res
	}
	ids := func(res *project.CompileResult) (selected, omitted []string) {
		for _, s := range res.WorkContext.Selected {
			selected = append(selected, s.ID)
		}
		for _, o := range res.WorkContext.Omitted {
			omitted = append(omitted, o.ID)
		}
		return selected, omitted
	}

	own := compile("T031", 20000)
	selected, omitted := ids(own)
	require.Contains(t, selected, "goal")
	require.NotContains(t, selected, "goals")
	require.NotContains(t, omitted, "goals")
	require.Contains(t, own.WorkContext.RenderedContext, "## Goal US1: Initialize New Project\nStatus: active\npriority P1\n")

	none := compile("T126", 20000)
	selected, _ = ids(none)
	require.NotContains(t, selected, "goal")
	require.Contains(t, selected, "goals")
	text := none.WorkContext.RenderedContext
	require.Contains(t, text, "## Goals of the project (19)\n- US1: Initialize New Project (28 items, 28 completed)\n- US2: Check Installed Tools (11 items, 11 completed)\n")
	require.Contains(t, text, "- SC-001: All three CLI commands (`init`, `check`, `version`) produce output that is functionally identical to Python version when given same inputs (no work item)\n")
	require.Contains(t, text, "- … 7 more: awr intake inspect\n")

	tight := compile("T126", none.WorkContext.RequiredTokens+5)
	selected, omitted = ids(tight)
	require.NotContains(t, selected, "goals")
	require.Contains(t, omitted, "goals")
}

// TestStatus_LastReindex_Sources: a first index (init, source add) is no
// reindex; a reindex that drops a source from the manifest says so, with
// the items it removed; a reindex that changes one source of two names
// only that one, and one that edits a source with no item changed says
// none was (a blank line added moves the items, changes none of them).
func TestStatus_LastReindex_Sources(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := initialized(t, []byte("# TODO\n\n- [ ] W-1: Work\n- [ ] W-2: More work\n"))
	p := opened(t, dir, project.Options{})
	last := func() *project.LastReindex {
		t.Helper()
		st, err := p.Status(ctx, project.StatusRequest{})
		require.NoError(t, err)
		return st.LastReindex
	}
	require.Nil(t, last(), "init indexed TODO.md for the first time")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "PLAN.md"), []byte("# Plan\n\n- [ ] P-1: Plan it\n"), 0o644))
	_, err := p.SourceAdd(ctx, project.SourceAddRequest{Path: "PLAN.md", Adapter: "markdown_checklist", Role: "tasks"})
	require.NoError(t, err)
	require.Nil(t, last(), "source add indexed PLAN.md for the first time")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "PLAN.md"), []byte("# Plan\n\n\n- [ ] P-1: Plan it\n"), 0o644))
	_, err = p.SourceReindex(ctx, project.SourceReindexRequest{})
	require.NoError(t, err)
	lr := last()
	require.NotNil(t, lr)
	require.Len(t, lr.Sources, 1)
	require.Equal(t, "PLAN.md", lr.Sources[0].Path)
	require.Equal(t, [3]int{0, 0, 0}, [3]int{lr.ItemsAdded, lr.ItemsChanged, lr.ItemsRemoved}, "P-1 moved a line down, nothing else")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "TODO.md"), []byte("# TODO\n\n- [x] W-1: Work\n- [ ] W-2: More work\n"), 0o644))
	manifest := filepath.Join(dir, ".awr", "project.toml")
	m := mustReadFile(t, manifest)
	i := strings.Index(string(m), "[[sources]]\n  path = \"PLAN.md\"")
	require.GreaterOrEqual(t, i, 0, "%s", m)
	rest := string(m[i+len("[[sources]]"):])
	if j := strings.Index(rest, "[[sources]]"); j >= 0 {
		rest = rest[j:]
	} else {
		rest = ""
	}
	require.NoError(t, os.WriteFile(manifest, []byte(string(m[:i])+rest), 0o644))
	_, err = p.SourceReindex(ctx, project.SourceReindexRequest{})
	require.NoError(t, err)
	lr = last()
	require.NotNil(t, lr)
	require.Equal(t, [3]int{0, 1, 1}, [3]int{lr.ItemsAdded, lr.ItemsChanged, lr.ItemsRemoved}, "%+v", lr)
	require.Len(t, lr.Sources, 2)
	require.Equal(t, "PLAN.md", lr.Sources[0].Path)
	require.True(t, lr.Sources[0].Dropped)
	require.Equal(t, []string{"P-1"}, lr.Sources[0].Removed)
	require.Equal(t, "TODO.md", lr.Sources[1].Path)
	require.False(t, lr.Sources[1].Dropped)
	require.Equal(t, []string{"W-1"}, lr.Sources[1].Changed)
	require.Equal(t, lr.Seq-1, lr.FromSeq, "one transaction: the index of TODO.md, then the removal of PLAN.md")
}

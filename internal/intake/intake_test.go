package intake_test

import (
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fixtures/testkit"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/intake"
	awr "github.com/awr-dev/awr/internal/project"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
)

// project copies a fixture project, read from the source tree (only the
// demo's is embedded in the binary), into a fresh directory.
func project(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS(testkit.Path("fixtures", "projects", name))))
	return dir
}

// tree lists every file under dir with its size, to prove a preview wrote
// nothing.
func tree(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	require.NoError(t, filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = fi.Size()
		return nil
	}))
	return out
}

type opened struct {
	stores []*events.Store
}

func (o *opened) open(dir string) func(bool) (*events.Store, error) {
	return func(create bool) (*events.Store, error) {
		st, err := events.Open(context.Background(), events.DBPath(dir), events.Options{Create: create, Projectors: projections.Projectors()})
		if err == nil {
			o.stores = append(o.stores, st)
		}
		return st, err
	}
}

func (o *opened) close() {
	for _, s := range o.stores {
		s.Close()
	}
}

func env(st *events.Store) *commands.Env {
	now := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	return &commands.Env{Store: st, Now: func() time.Time { return now }, Entropy: rand.New(rand.NewSource(1))}
}

// accept previews and accepts, returning the open store.
func accept(t *testing.T, dir string, opts intake.InitOptions) (*intake.Preview, *events.Store) {
	t.Helper()
	p, err := intake.Plan(dir, opts)
	require.NoError(t, err)
	o := &opened{}
	t.Cleanup(o.close)
	res, err := intake.Accept(context.Background(), p, o.open(dir), env)
	require.NoError(t, err)
	st, err := o.open(dir)(false)
	require.NoError(t, err)
	return res, st
}

func mapping(p *intake.Preview) [][3]string {
	var out [][3]string
	for _, m := range p.Mapping {
		out = append(out, [3]string{m.Path, m.Adapter, m.Role})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

func readyKeys(t *testing.T, st *events.Store) []string {
	t.Helper()
	res, err := door(t, st, time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)).Ready(context.Background(), awr.ReadyRequest{})
	require.NoError(t, err)
	keys := []string{}
	for _, it := range res.Ready {
		keys = append(keys, it.Key)
	}
	return keys
}

func gapCodes(org intake.Organization) map[string]bool {
	out := map[string]bool{}
	for _, g := range org.Gaps {
		out[g.Code] = true
	}
	return out
}

// TestFixtures pins, for each sample project, what discovery maps, the
// organization state, and the ready set after accepting.
func TestFixtures(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		sources []string
		mapping [][3]string
		state   string
		exec    []string
		ready   []string
		gaps    []string
	}{
		{name: "blank", mapping: nil, state: intake.StateNeedsOrganization, exec: []string{}, ready: []string{}, gaps: []string{"goal_missing", "work_missing"}},
		{name: "checklist", mapping: [][3]string{{"GOALS.md", "goals_markdown", "goals"}, {"TODO.md", "markdown_checklist", "tasks"}},
			state: intake.StateNeedsOrganization, exec: []string{}, ready: []string{"NOTE-2"}, gaps: []string{"goal_missing", "next_action_missing", "missing_key"}},
		{name: "plan-table", mapping: [][3]string{{"GOALS.md", "goals_markdown", "goals"}, {"PLAN.md", "plan_markdown", "plan"}},
			state: intake.StateNeedsOrganization, exec: []string{}, ready: []string{}, gaps: []string{"goal_missing", "acceptance_missing"}},
		{name: "headings", mapping: [][3]string{{"GOALS.md", "goals_markdown", "goals"}, {"RULES.md", "rules_markdown", "rules"}, {"work-ledger.md", "markdown_headings", "tasks"}},
			state: intake.StateBlocked, exec: []string{}, ready: []string{}},
		{name: "yaml-ledger", mapping: [][3]string{{"ledger/work-ledger.yaml", "yaml_ledger", "tasks"}},
			state: intake.StateReady, exec: []string{"ONB-2", "ONB-4"}, ready: []string{"ONB-2", "ONB-4"}},
		{name: "mixed", sources: []string{"GOALS.md", "TODO.md"}, mapping: [][3]string{{"GOALS.md", "goals_markdown", "goals"}, {"TODO.md", "markdown_checklist", "tasks"}},
			state: intake.StateNeedsOrganization, exec: []string{}, ready: []string{"WEB-1", "WEB-2"}, gaps: []string{"goal_missing", "acceptance_missing", "next_action_missing"}},
		{name: "bad-files", sources: []string{"TODO.md", "ledger.yaml", "GOALS.md"},
			mapping: [][3]string{{"GOALS.md", "goals_markdown", "goals"}, {"TODO.md", "markdown_checklist", "tasks"}, {"ledger.yaml", "yaml_ledger", "tasks"}},
			state:   intake.StateNeedsOrganization, exec: []string{}, ready: []string{},
			gaps: []string{"status_unmapped", "malformed", "duplicate_key", "dependency_missing", "goal_missing"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := project(t, tc.name)
			before := tree(t, dir)
			p, err := intake.Plan(dir, intake.InitOptions{Sources: tc.sources})
			require.NoError(t, err)
			require.Equal(t, before, tree(t, dir), "a preview writes nothing")
			require.Equal(t, tc.mapping, mapping(p))
			require.Equal(t, tc.state, p.Organization.State)

			res, st := accept(t, dir, intake.InitOptions{Sources: tc.sources})
			require.Equal(t, "initialized", res.Status)
			require.EqualValues(t, 1+len(tc.mapping), res.ProjectRevision, "project_initialized and one source_indexed per source")
			require.Equal(t, tc.ready, readyKeys(t, st))
			in, err := door(t, st, time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)).IntakeInspect(context.Background(), awr.IntakeInspectRequest{})
			require.NoError(t, err)
			require.Equal(t, tc.state, in.Organization.State)
			require.Equal(t, tc.exec, in.ExecutableWork)
			codes := gapCodes(in.Organization)
			for _, g := range tc.gaps {
				require.True(t, codes[g], "gap %s expected, got %v", g, in.Organization.Gaps)
			}
			require.NotEmpty(t, in.Organization.Actions)
			require.NotEmpty(t, in.NextAction)
		})
	}
}

func TestDiscover(t *testing.T) {
	t.Parallel()
	t.Run("Ambiguous", func(t *testing.T) {
		dir := project(t, "mixed")
		p, err := intake.Plan(dir, intake.InitOptions{})
		require.NoError(t, err)
		require.Equal(t, []intake.Ambiguity{{Role: "tasks", Candidates: []string{"TODO.md", "docs/tasks.md"}}}, p.Ambiguous)
		_, err = intake.Accept(context.Background(), p, (&opened{}).open(dir), env)
		require.True(t, fault.Is(err, fault.SourceConflict), "%v", err)
		require.Contains(t, fault.As(err).Hint, "--source TODO.md")
		_, statErr := os.Stat(filepath.Join(dir, ".awr"))
		require.True(t, os.IsNotExist(statErr), "a refused accept writes nothing")
	})
	t.Run("SkipsSecretsAndBuildOutput", func(t *testing.T) {
		dir := t.TempDir()
		for _, f := range []string{"TODO.md", ".env", "node_modules/x/TODO.md", "dist/tasks.md", ".hidden/TODO.md", "secrets-ledger.yaml"} {
			require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte("- [ ] A-1: a\n"), 0o644))
		}
		inv, err := intake.Discover(dir)
		require.NoError(t, err)
		var paths []string
		for _, c := range inv.All() {
			paths = append(paths, c.Path)
		}
		require.Equal(t, []string{"TODO.md"}, paths)
		skipped := map[string]string{}
		for _, s := range inv.Skipped {
			skipped[s.Path] = s.Reason
		}
		require.Contains(t, skipped, ".env")
		require.Contains(t, skipped, "secrets-ledger.yaml")
		require.Contains(t, skipped, "node_modules/")
	})
}

func TestAccept(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("TwiceIsANoOp", func(t *testing.T) {
		dir := project(t, "yaml-ledger")
		accept(t, dir, intake.InitOptions{})
		manifest, err := os.ReadFile(intake.ManifestPath(dir))
		require.NoError(t, err)
		p, err := intake.Plan(dir, intake.InitOptions{})
		require.NoError(t, err)
		o := &opened{}
		defer o.close()
		res, err := intake.Accept(ctx, p, o.open(dir), env)
		require.NoError(t, err)
		require.Equal(t, "unchanged", res.Status)
		require.EqualValues(t, 2, res.ProjectRevision)
		again, err := os.ReadFile(intake.ManifestPath(dir))
		require.NoError(t, err)
		require.Equal(t, manifest, again)
	})
	t.Run("ErrDifferentManifest", func(t *testing.T) {
		dir := project(t, "mixed")
		accept(t, dir, intake.InitOptions{Sources: []string{"GOALS.md", "TODO.md"}})
		p, err := intake.Plan(dir, intake.InitOptions{Sources: []string{"GOALS.md", "docs/tasks.md"}})
		require.NoError(t, err)
		o := &opened{}
		defer o.close()
		_, err = intake.Accept(ctx, p, o.open(dir), env)
		require.True(t, fault.Is(err, fault.SourceConflict), "%v", err)
	})
	t.Run("GoalForABlankProject", func(t *testing.T) {
		dir := project(t, "blank")
		require.NoError(t, os.Mkdir(filepath.Join(dir, ".git"), 0o755))
		res, st := accept(t, dir, intake.InitOptions{Goal: "Ship the notes app"})
		require.Equal(t, intake.StateReady, res.Organization.State)
		require.Equal(t, []string{"INTAKE-001"}, readyKeys(t, st), "INTAKE-001 is ready immediately")
		items, err := itemsOf(st)
		require.NoError(t, err)
		require.Equal(t, "intake", items["INTAKE-001"].Kind)
		require.Equal(t, "G-1", items["INTAKE-001"].Goal)
		require.NotEmpty(t, items["INTAKE-001"].Acceptance)
		require.NotEmpty(t, items["INTAKE-001"].NextAction)
		ignore, err := os.ReadFile(filepath.Join(dir, ".gitignore"))
		require.NoError(t, err)
		require.Contains(t, string(ignore), ".awr/")
		fi, err := os.Stat(filepath.Join(dir, ".awr"))
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	})
	t.Run("NeverOverwrites", func(t *testing.T) {
		dir := project(t, "blank")
		require.NoError(t, os.MkdirAll(filepath.Join(dir, ".awr", "intake"), 0o700))
		mine := []byte("items:\n  - id: OWN-1\n    title: Our own first task\n    status: planned\n")
		require.NoError(t, os.WriteFile(filepath.Join(dir, ".awr", "intake", "work-ledger.yaml"), mine, 0o644))
		res, _ := accept(t, dir, intake.InitOptions{Goal: "something else"})
		require.Contains(t, res.Writes, intake.Write{Path: ".awr/intake/work-ledger.yaml", Action: "keep: the existing file is used as it is"})
		got, err := os.ReadFile(filepath.Join(dir, ".awr", "intake", "work-ledger.yaml"))
		require.NoError(t, err)
		require.Equal(t, mine, got)
	})
}

func itemsOf(st *events.Store) (map[string]projections.WorkItem, error) {
	out := map[string]projections.WorkItem{}
	err := st.Read(context.Background(), func(r *events.Reader) error {
		items, err := projections.WorkItemsAt(r.Conn, r.Head, true)
		for _, it := range items {
			out[it.Key] = it
		}
		return err
	})
	return out, err
}

// TestReindex: only changed sources are appended; freshness follows the
// files; a removed file is missing; read-only listing writes nothing.
func TestReindex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := project(t, "yaml-ledger")
	_, st := accept(t, dir, intake.InitOptions{})
	m, ok, err := intake.ReadManifest(dir)
	require.NoError(t, err)
	require.True(t, ok)
	list := func() map[string]string {
		res, err := door(t, st, time.Now()).SourceList(ctx, awr.SourceListRequest{})
		require.NoError(t, err)
		out := map[string]string{}
		for _, s := range res.Sources {
			out[s.Path] = s.Freshness
		}
		return out
	}
	reindex := func() *commands.IndexSourcesResult {
		var req commands.IndexSourcesRequest
		for _, ms := range m.Sources {
			si, missing := intake.Read(dir, ms)
			if !missing {
				req.Sources = append(req.Sources, si)
			}
		}
		res, err := commands.IndexSources(ctx, env(st), req)
		require.NoError(t, err)
		return res
	}
	require.Equal(t, map[string]string{"ledger/work-ledger.yaml": intake.Fresh}, list())
	res := reindex()
	require.Empty(t, res.Indexed, "nothing changed, nothing appended")
	require.EqualValues(t, 2, res.ProjectRevision)

	path := filepath.Join(dir, "ledger", "work-ledger.yaml")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, append(b, []byte("  - id: ONB-5\n    title: Invite teammates\n    status: planned\n")...), 0o644))
	require.Equal(t, map[string]string{"ledger/work-ledger.yaml": intake.Stale}, list())
	res = reindex()
	require.Len(t, res.Indexed, 1)
	require.EqualValues(t, 3, res.ProjectRevision)
	require.Equal(t, map[string]string{"ledger/work-ledger.yaml": intake.Fresh}, list())
	items, err := itemsOf(st)
	require.NoError(t, err)
	require.Contains(t, items, "ONB-5")

	require.NoError(t, os.Remove(path))
	require.Equal(t, map[string]string{"ledger/work-ledger.yaml": intake.Missing}, list())
	in, err := door(t, st, time.Now()).IntakeInspect(ctx, awr.IntakeInspectRequest{})
	require.NoError(t, err)
	require.Equal(t, intake.StateSourceUnreadable, in.Organization.State)
}

// TestReindex_ManifestChange: a changed status_map re-indexes a file whose
// content did not change, and the new mapping applies.
func TestReindex_ManifestChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := project(t, "bad-files")
	_, st := accept(t, dir, intake.InitOptions{Sources: []string{"TODO.md", "GOALS.md"}})
	m, _, err := intake.ReadManifest(dir)
	require.NoError(t, err)
	for i := range m.Sources {
		if m.Sources[i].Path == "TODO.md" {
			m.Sources[i].StatusMap = map[string]string{"[?]": "blocked"}
		}
	}
	require.NoError(t, intake.WriteManifest(dir, m))
	var req commands.IndexSourcesRequest
	for _, ms := range m.Sources {
		si, missing := intake.Read(dir, ms)
		require.False(t, missing)
		req.Sources = append(req.Sources, si)
	}
	res, err := commands.IndexSources(ctx, env(st), req)
	require.NoError(t, err)
	require.Len(t, res.Indexed, 1)
	require.Equal(t, "TODO.md", res.Indexed[0].Path)
	items, err := itemsOf(st)
	require.NoError(t, err)
	require.Equal(t, "blocked", items["API-2"].Status)
}

// door opens the project of st through the project door, on clock now.
func door(tb testing.TB, st *events.Store, now time.Time) *awr.Project {
	tb.Helper()
	p, err := awr.Open(context.Background(), filepath.Dir(filepath.Dir(st.Path())), awr.Options{Now: func() time.Time { return now }})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { p.Close() })
	return p
}

package bench

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/awr-dev/awr/events/pgstore/pgtest"
	"github.com/awr-dev/awr/fixtures/testkit"
	"github.com/awr-dev/awr/internal/project"
	"github.com/stretchr/testify/require"
)

// TestSharedAgainstFile (issue #40, item 4): with a baseline twin whose
// log is on the other store, bench run's comparison times each command
// on both projects, paired, and reports what the shared one adds in
// milliseconds; the commands run where they say (each twin's checkpoints
// are in its own log), whichever of the two is the shared one.
func TestSharedAgainstFile(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	t.Parallel()
	ctx := context.Background()
	exe := testkit.Program(t, testkit.AWR)
	twin := func(name, store string) (*project.Project, string) {
		dir := filepath.Join(t.TempDir(), name)
		require.NoError(t, os.MkdirAll(dir, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "TODO.md"), []byte("# TODO\n\n- [ ] W-1: One\n- [ ] W-2: Two\n"), 0o644))
		p, err := project.Open(ctx, dir, project.Options{})
		require.NoError(t, err)
		t.Cleanup(func() { p.Close() })
		_, err = p.Init(ctx, project.InitRequest{Accept: true, Name: name, Store: store})
		require.NoError(t, err)
		res, err := p.SessionStart(ctx, project.SessionStartRequest{Work: "W-1", Agent: "bench-run"})
		require.NoError(t, err)
		return p, res.Session.ID
	}
	shared, sharedSession := twin("shared", dbURL)
	file, fileSession := twin("file", "")
	procOn := func(dir string) func(args ...string) func() error {
		return func(args ...string) func() error {
			full := append([]string{"--project", dir}, args...)
			return func() error { return runChild(ctx, exe, full) }
		}
	}
	checkpoints := func(p *project.Project, session string) int {
		v, err := p.SessionShow(ctx, project.SessionShowRequest{Session: session})
		require.NoError(t, err)
		return len(v.Checkpoints)
	}
	const pairs = 2
	for _, sharedHere := range []bool{true, false} {
		here, there := shared, file
		hereSession, thereSession := sharedSession, fileSession
		if !sharedHere {
			here, there, hereSession, thereSession = file, shared, fileSession, sharedSession
		}
		before := [2]int{checkpoints(shared, sharedSession), checkpoints(file, fileSession)}
		c := &compareEnv{ctx: ctx, p: here, opts: RunOptions{Exe: exe, Pairs: pairs}, proc: procOn(here.Dir()), session: hereSession, work: "W-1",
			base: &baseline{dir: there.Dir(), session: thereSession, shared: !sharedHere, proc: procOn(there.Dir())}}
		ts, err := c.sharedAgainstFile(sharedHere)
		require.NoError(t, err)
		require.Len(t, ts, 4)
		for i, name := range []string{"status", "ready", "work show", "session checkpoint"} {
			tg := ts[i]
			require.Equal(t, 40, tg.Issue)
			require.Equal(t, 4, tg.ID)
			require.Equal(t, "ms", tg.Unit)
			require.Equal(t, name+" on the shared log − on the file (p50 and p95)", tg.Name)
			require.Equal(t, pairs, tg.Pairs)
			require.Equal(t, name+" on "+shared.Dir(), tg.Of.Name, "the shared side is the shared project")
			require.Equal(t, name+" on "+file.Dir(), tg.Over.Name)
			require.NotNil(t, tg.Measured)
			require.InDelta(t, tg.Of.Median-tg.Over.Median, *tg.Measured, 0.02)
			require.NotNil(t, tg.Met)
		}
		after := [2]int{checkpoints(shared, sharedSession), checkpoints(file, fileSession)}
		require.Equal(t, [2]int{before[0] + pairs, before[1] + pairs}, after, "each twin's checkpoints are in its own log")
	}
}

package project_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awr-dev/awr/internal/project"
	"github.com/stretchr/testify/require"
)

// hygieneProject is a git repository holding a task register, initialised
// by awr through the door.
func hygieneProject(t *testing.T, todo string) (*project.Project, string, func(args ...string)) {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "proj")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=colleague", "GIT_AUTHOR_EMAIL=c@example.invalid",
			"GIT_COMMITTER_NAME=colleague", "GIT_COMMITTER_EMAIL=c@example.invalid", "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	git("init", "-q", "-b", "main")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "TODO.md"), []byte(todo), 0o644))
	p := opened(t, dir, project.Options{})
	_, err := p.Init(ctx, project.InitRequest{Accept: true})
	require.NoError(t, err)
	git("add", "-A")
	git("commit", "-q", "-m", "the register")
	return p, dir, git
}

// TestHygiene_ByEvidence: on a project where some items are known dead
// (a commit closed a loop, a ticked register item closed another, a later
// fact names one, a fact settled a hypothesis, a work item was ticked
// done under its loop and decision) and others are alive though open for
// five sessions, hygiene flags the dead ones with their evidence quoted
// and none of the living: precision and recall are at least 0.9 (they
// are 1 here; age-based hygiene had 0.2 and 0). Before any evidence,
// after five sessions, it reports nothing; an item confirmed is no longer
// flagged for the evidence seen, and once the dead are retired nothing
// is left to prune.
func TestHygiene_ByEvidence(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	todo := "# TODO\n\n- [ ] W-1: Persist orders\n- [ ] W-2: Add the cache\n- [ ] W-3: Write the migration for the orders table\n- [ ] W-4: Write the docs\n"
	p, dir, git := hygieneProject(t, todo)

	start := func(work, agent string) string {
		s, err := p.SessionStart(ctx, project.SessionStartRequest{Work: work, Agent: agent, Claim: true})
		require.NoError(t, err)
		return s.Session.ID
	}
	checkpoint := func(session string, set func(r *project.SessionCheckpointRequest)) {
		t.Helper()
		req := project.SessionCheckpointRequest{SessionID: session, Agent: "agent", Digest: "Worked", NextAction: "Keep going"}
		if set != nil {
			set(&req)
		}
		_, err := p.SessionCheckpoint(ctx, req)
		require.NoError(t, err)
	}
	hygiene := func() *project.HygieneReport {
		t.Helper()
		h, err := p.ContextHygiene(ctx, project.HygieneRequest{})
		require.NoError(t, err)
		return h
	}

	w1 := start("W-1", "a1")
	checkpoint(w1, func(r *project.SessionCheckpointRequest) {
		r.OpenLoops = []string{
			"Benchmark the writes",                     // L-1: dead, a commit
			"Decide the cache TTL",                     // L-2: alive
			"Write the migration for the orders table", // L-3: dead, W-3 ticked
			"Handle the retry on conflict",             // L-4: dead, a later fact names it
			"Check the error messages",                 // L-5: alive
			"Fix the login",                            // L-6: alive (a commit fixes the logout)
			"Decide whether orders need a soft delete", // L-7: alive
		}
		r.Hypotheses = []string{"Timeouts come from the pool size", "The flaky test depends on the clock"} // H-1 dead, H-2 alive
		r.Decisions = []string{"Use SQLite for the store", "Keep one row per order"}                       // alive
		r.Facts = []string{"The API returns JSON"}                                                         // alive
	})
	w2 := start("W-2", "b1")
	checkpoint(w2, func(r *project.SessionCheckpointRequest) {
		r.OpenLoops = []string{"Measure the hit rate"}           // dead: W-2 ticked done
		r.Decisions = []string{"Cache entries for five minutes"} // dead: W-2 ticked done
	})
	w4 := start("W-4", "c1")
	checkpoint(w4, func(r *project.SessionCheckpointRequest) {
		r.Facts = []string{"The docs live in docs/"} // alive: W-2's edit is another item's
	})
	// Four more sessions on W-1: the living items are old now.
	for i := 2; i <= 5; i++ {
		res, err := p.SessionResume(ctx, project.SessionResumeRequest{FromSession: w1, Agent: "a" + string(rune('0'+i))})
		require.NoError(t, err)
		w1 = res.Resumed.Session.ID
		checkpoint(w1, nil)
	}
	h := hygiene()
	require.Empty(t, h.Findings, "age alone flags nothing")
	require.Equal(t, "checked", h.Repository)

	// The evidence.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "store.go"), []byte("package store\n"), 0o644))
	git("add", "store.go")
	git("commit", "-q", "-m", "Benchmarked the writes: 3x the floor")
	git("commit", "-q", "--allow-empty", "-m", "Fix the logout")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "TODO.md"), []byte(strings.NewReplacer(
		"- [ ] W-2:", "- [x] W-2:", "- [ ] W-3:", "- [x] W-3:").Replace(todo)), 0o644))
	_, err := p.SourceReindex(ctx, project.SourceReindexRequest{})
	require.NoError(t, err)
	checkpoint(w1, func(r *project.SessionCheckpointRequest) {
		r.Facts = []string{"L-4 is moot: the store never conflicts", "Timeouts come from DNS, not the pool size"}
	})

	dead := map[string]bool{"W-1 L-1": true, "W-1 L-3": true, "W-1 L-4": true, "W-1 H-1": true, "W-2 L-1": true, "W-2 D-1": true}
	h = hygiene()
	flagged := map[string]project.Finding{}
	for _, f := range h.Findings {
		require.NotEqual(t, project.FindingHeadNotAncestor, f.Kind, "%+v", f)
		require.NotNil(t, f.Evidence, "%+v", f)
		require.NotEmpty(t, f.Evidence.Quote, "%+v", f)
		require.Contains(t, f.Confirm, "awr context confirm "+f.ID+" --work "+f.Work+" ", "%+v", f)
		flagged[f.Work+" "+f.ID] = f
	}
	hits := 0
	for k := range flagged {
		if dead[k] {
			hits++
		}
	}
	precision, recall := float64(hits)/float64(max(len(flagged), 1)), float64(hits)/float64(len(dead))
	t.Logf("precision %.2f, recall %.2f (%d flagged, %d dead)", precision, recall, len(flagged), len(dead))
	for k, f := range flagged {
		t.Logf("%s %s: %s", k, f.Kind, f.Reason)
	}
	require.GreaterOrEqual(t, precision, 0.9)
	require.GreaterOrEqual(t, recall, 0.9)

	// Each finding says what killed the item.
	require.Equal(t, project.FindingLoopCommitted, flagged["W-1 L-1"].Kind)
	require.Equal(t, "Benchmarked the writes: 3x the floor", flagged["W-1 L-1"].Evidence.Quote)
	require.Contains(t, flagged["W-1 L-1"].Reason, "by colleague")
	require.Equal(t, project.FindingLoopTicked, flagged["W-1 L-3"].Kind)
	require.Contains(t, flagged["W-1 L-3"].Reason, `register item W-3 ("Write the migration for the orders table") was ticked completed`)
	require.Equal(t, project.FindingAnswered, flagged["W-1 L-4"].Kind)
	require.Contains(t, flagged["W-1 L-4"].Evidence.Quote, "L-4 is moot")
	require.Equal(t, project.FindingAnswered, flagged["W-1 H-1"].Kind)
	require.Contains(t, flagged["W-1 H-1"].Reason, "Timeouts come from DNS, not the pool size")
	require.Equal(t, project.FindingLoopTicked, flagged["W-2 L-1"].Kind)
	require.Contains(t, flagged["W-2 L-1"].Reason, "its work item W-2 was ticked completed")
	require.Equal(t, project.FindingSourceChangedAfter, flagged["W-2 D-1"].Kind)

	// Confirmed: L-3 still holds (the migration needs a second pass);
	// hygiene no longer flags it for the ticked W-3, nor L-1 for the
	// commit its HEAD reaches.
	c, err := p.ContextConfirm(ctx, project.ContextConfirmRequest{ID: "l-3", Work: "W-1", Agent: "a5", Note: "the migration needs a second pass"})
	require.NoError(t, err)
	require.Equal(t, "L-3", c.Item.ID)
	require.NotEmpty(t, c.Head)
	_, err = p.ContextConfirm(ctx, project.ContextConfirmRequest{ID: "L-1", Work: "W-1", Agent: "a5"})
	require.NoError(t, err)
	for _, f := range hygiene().Findings {
		require.False(t, f.Work == "W-1" && (f.ID == "L-1" || f.ID == "L-3"), "%+v", f)
	}
	// A commit after the confirmation is evidence again.
	git("commit", "-q", "--allow-empty", "-m", "W-1 L-1: the benchmark in CI")
	again := false
	for _, f := range hygiene().Findings {
		again = again || (f.Work == "W-1" && f.ID == "L-1" && f.Kind == project.FindingLoopCommitted && strings.Contains(f.Reason, "the benchmark in CI"))
	}
	require.True(t, again, "a new commit naming the loop flags it again")

	// Confirming a closed item or an unknown one is refused.
	_, err = p.ContextConfirm(ctx, project.ContextConfirmRequest{ID: "L-9", Work: "W-1", Agent: "a5"})
	require.ErrorContains(t, err, "W-1 has no loop, decision, fact or hypothesis L-9")

	// Retiring the dead with the commands hygiene printed leaves nothing.
	checkpoint(w1, func(r *project.SessionCheckpointRequest) {
		r.ResolveLoops = []string{"L-1=benchmarked", "L-4=moot"}
		r.Retract = []string{"H-1=it was DNS"}
	})
	w2r, err := p.SessionResume(ctx, project.SessionResumeRequest{FromSession: w2, Agent: "b2"})
	require.NoError(t, err)
	checkpoint(w2r.Resumed.Session.ID, func(r *project.SessionCheckpointRequest) {
		r.ResolveLoops = []string{"L-1=measured"}
		r.Retract = []string{"D-1=the work is done"}
	})
	_, err = p.ContextConfirm(ctx, project.ContextConfirmRequest{ID: "L-3", Work: "W-1", Agent: "a5"})
	require.NoError(t, err)
	_, err = p.ContextConfirm(ctx, project.ContextConfirmRequest{ID: "L-1", Work: "W-1", Agent: "a5"})
	require.ErrorContains(t, err, "L-1 of W-1 was resolved at seq")
	h = hygiene()
	require.Empty(t, h.Findings, "%+v", h.Findings)
}

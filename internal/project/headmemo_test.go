package project_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fixtures/logkit"
	"github.com/awr-dev/awr/internal/project"
	"github.com/stretchr/testify/require"
)

// TestWarmStatus_FollowsTheClock: a warm door keeps, at one head, the
// stale sessions and the lapsed claims for the span of clocks they hold
// for; as its clock crosses a lease's end or a session's lease of
// silence, with no write, each status equals a cold door's at the same
// clock (a project opened afresh). A manifest that changes the lease is
// read again, by status and by every command's environment.
func TestWarmStatus_FollowsTheClock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	now := t0
	clock := func() time.Time { return now }
	env := logkit.Seeded(t, dir, clock, 1,
		events.WorkItem{Key: "W-1", Title: "one", Status: "planned"},
		events.WorkItem{Key: "W-2", Title: "two", Status: "planned"},
		events.WorkItem{Key: "W-3", Title: "three", Status: "planned"})
	require.NoError(t, env.Store.Close())
	// A manifest that names the default lease, an hour.
	manifest := filepath.Join(dir, ".awr", "project.toml")
	require.NoError(t, os.WriteFile(manifest, []byte("version = 1\nname = \"shop\"\n\n[continuity]\nclaim_ttl_ms = 3600000\n"), 0o644))
	warm := opened(t, dir, project.Options{Now: clock})

	// A lapses at +60 s; B (no claim) goes stale a lease after its start;
	// C holds its claim until +220 s, then lapses too.
	short, long := int64(60_000), int64(200_000)
	_, err := warm.SessionStart(ctx, project.SessionStartRequest{Work: "W-1", Agent: "a", Claim: true, TTLms: &short})
	require.NoError(t, err)
	now = t0.Add(10 * time.Second)
	_, err = warm.SessionStart(ctx, project.SessionStartRequest{Work: "W-2", Agent: "b"})
	require.NoError(t, err)
	now = t0.Add(20 * time.Second)
	_, err = warm.SessionStart(ctx, project.SessionStartRequest{Work: "W-3", Agent: "c", Claim: true, TTLms: &long})
	require.NoError(t, err)

	compare := func(at time.Duration) *project.StatusResult {
		t.Helper()
		now = t0.Add(at)
		got, err := warm.Status(ctx, project.StatusRequest{})
		require.NoError(t, err)
		cold := opened(t, dir, project.Options{Now: clock})
		want, err := cold.Status(ctx, project.StatusRequest{})
		require.NoError(t, err)
		require.Equal(t, want, got, "at +%s", at)
		return got
	}
	lease := time.Hour // the default lease: no manifest sets one
	seen := map[string]bool{}
	for _, at := range []time.Duration{30 * time.Second, 59 * time.Second, 60 * time.Second, 61 * time.Second,
		219 * time.Second, 220 * time.Second, 10*time.Second + lease - time.Millisecond, 10*time.Second + lease,
		20*time.Second + lease, 2 * lease} {
		s := compare(at)
		seen[sessionsSeen(s)] = true
	}
	// The clocks above did cross: the answers were not all the same.
	require.GreaterOrEqual(t, len(seen), 4, "%v", seen)

	// The manifest now sets a lease of 100 s: the stale sessions follow,
	// and so does every command's environment.
	require.NoError(t, os.WriteFile(manifest, []byte("version = 1\nname = \"shop\"\n\n[continuity]\nclaim_ttl_ms = 100000\n"), 0o644))
	s := compare(150 * time.Second)
	wenv, err := warm.Env(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(100_000), wenv.Policy.ClaimTTLms)
	require.Equal(t, "W-2", sessionsSeen(s)[len(sessionsSeen(s))-3:], "%+v", s.StaleSessions)
}

// sessionsSeen is what a status says of idle sessions, in short.
func sessionsSeen(s *project.StatusResult) string {
	out := ""
	for _, l := range s.LapsedSessions {
		out += "L" + l.Work
	}
	for _, st := range s.StaleSessions {
		out += "S" + st.Work
	}
	return out
}

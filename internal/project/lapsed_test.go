package project_test

import (
	"context"
	"testing"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fixtures/logkit"
	"github.com/awr-dev/awr/internal/project"
	"github.com/stretchr/testify/require"
)

// A seat's session whose claim lapsed (its agent gone, no rig down) is
// resumed by relaunching the seat: status, doctor and recovery inspect all
// lead with `awr rig up RIG`, never a resume by hand (which would leave
// the seat a session to reconcile) nor a renewal. The clock is the
// project's own, moved past the lease.
func TestLapsed_SeatSessionLeadsToRigUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	env := logkit.Seeded(t, dir, clock, 1, events.WorkItem{Key: "W-1", Title: "one", Status: "planned"})
	_, err := commands.DeclareSeat(ctx, env, commands.SeatRequest{Address: "build@portal", Runtime: "generic", Command: "agent {context_file}", Work: "W-1"})
	require.NoError(t, err)
	l, err := commands.LaunchSeat(ctx, env, commands.LaunchRequest{Address: "build@portal", Mode: events.LaunchStart, TmuxSession: "awr-x-build@portal",
		ContextFile: dir + "/ctx.md", RestoreID: "R1", TTLms: 60_000})
	require.NoError(t, err)
	require.NoError(t, env.Store.Close())

	p := opened(t, dir, project.Options{Now: clock})

	// Within the lease: nothing lapsed.
	s, err := p.Status(ctx, project.StatusRequest{})
	require.NoError(t, err)
	require.Empty(t, s.LapsedSessions)

	now = now.Add(61 * time.Second)
	s, err = p.Status(ctx, project.StatusRequest{})
	require.NoError(t, err)
	require.Len(t, s.LapsedSessions, 1)
	require.Equal(t, l.SessionID, s.LapsedSessions[0].ID)
	require.Equal(t, "build@portal", s.LapsedSessions[0].Seat)
	require.Equal(t, "awr rig up portal", s.LapsedSessions[0].ResumeCommand)
	require.Equal(t, "awr rig up portal", s.NextAction)

	d, err := p.Doctor(ctx, project.DoctorRequest{})
	require.NoError(t, err)
	require.NotEmpty(t, d.Findings)
	require.Equal(t, project.FindingClaimLapsed, d.Findings[0].Code, "%+v", d.Findings)
	require.Equal(t, "awr rig up portal", d.Findings[0].Repair)

	rep, err := p.RecoveryInspect(ctx, project.RecoveryInspectRequest{Session: l.SessionID})
	require.NoError(t, err)
	require.Equal(t, "awr rig up portal", rep.NextStep)
}

// A successor that never checkpointed and whose claim lapsed is listed
// with the checkpoint it inherited (its predecessor's), so the unsaved
// work it names starts after that one.
func TestLapsed_InheritedCheckpoint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	env := logkit.Seeded(t, dir, clock, 1, events.WorkItem{Key: "W-1", Title: "one", Status: "planned"}, events.WorkItem{Key: "W-2", Title: "two", Status: "planned"})
	require.NoError(t, env.Store.Close())
	p := opened(t, dir, project.Options{Now: clock})

	ttl := int64(60_000)
	a, err := p.SessionStart(ctx, project.SessionStartRequest{Work: "W-1", Agent: "alice", Claim: true, TTLms: &ttl})
	require.NoError(t, err)
	cp, err := p.SessionCheckpoint(ctx, project.SessionCheckpointRequest{SessionID: a.Session.ID, Agent: "alice", Digest: "Parser half done.", NextAction: "Wire the parser"})
	require.NoError(t, err)
	res, err := p.SessionResume(ctx, project.SessionResumeRequest{FromSession: a.Session.ID, Agent: "bob"})
	require.NoError(t, err)
	b := res.Resumed.Session.ID
	// Another session with a checkpoint of its own lapses too.
	c, err := p.SessionStart(ctx, project.SessionStartRequest{Work: "W-2", Agent: "carol", Claim: true, TTLms: &ttl})
	require.NoError(t, err)
	cp2, err := p.SessionCheckpoint(ctx, project.SessionCheckpointRequest{SessionID: c.Session.ID, Agent: "carol", Digest: "Docs begun.", NextAction: "Write the rest"})
	require.NoError(t, err)

	now = now.Add(61 * time.Second)
	s, err := p.Status(ctx, project.StatusRequest{})
	require.NoError(t, err)
	require.Len(t, s.LapsedSessions, 2, "%+v", s.LapsedSessions)
	got := map[string]int64{}
	for _, l := range s.LapsedSessions {
		got[l.ID] = l.LastCheckpointSeq
	}
	require.Equal(t, map[string]int64{b: cp.Checkpoint.Seq, c.Session.ID: cp2.Checkpoint.Seq}, got)
	require.NotContains(t, got, a.Session.ID, "the predecessor was resumed: not lapsed")
}

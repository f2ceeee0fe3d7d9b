package project_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/project"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
)

// TestCompile_LatestSession: without --session a packet follows the
// chain of the session that started last on the item at the revision
// read (read from the sessions projection since issue #17), at the head
// and at a revision before that session started.
func TestCompile_LatestSession(t *testing.T) {
	ctx := context.Background()
	p := openW1(t)
	checkpoint := func(session, digest string) {
		_, err := p.SessionCheckpoint(ctx, project.SessionCheckpointRequest{SessionID: session, Agent: "a0", Digest: digest, NextAction: "Go on"})
		require.NoError(t, err)
	}
	first, err := p.SessionStart(ctx, project.SessionStartRequest{Work: "W-1", Agent: "a0", Claim: true})
	require.NoError(t, err)
	for range 3 {
		checkpoint(first.Session.ID, "Did a step in the first session")
	}
	_, err = p.SessionEnd(ctx, project.SessionEndRequest{SessionID: first.Session.ID, Agent: "a0", Outcome: events.OutcomeIncomplete})
	require.NoError(t, err)
	second, err := p.SessionStart(ctx, project.SessionStartRequest{Work: "W-1", Agent: "a1"})
	require.NoError(t, err)
	before := second.ProjectRevision - 1
	checkpoint(second.Session.ID, "Did a step in the second session")

	compile := func(at *int64) string {
		res, err := p.ContextCompile(ctx, project.ContextCompileRequest{Work: "W-1", Budget: new(100000), Read: commands.Read{At: at}})
		if err != nil {
			require.Equal(t, fault.ContextIncomplete, fault.As(err).Code, "%v", err)
		}
		return res.WorkContext.RenderedContext
	}
	head := compile(nil)
	require.Contains(t, head, "session "+second.Session.ID)
	require.Contains(t, head, "Did a step in the second session")
	past := compile(&before)
	require.Contains(t, past, "session "+first.Session.ID)
	require.NotContains(t, past, second.Session.ID)
}

// TestStatus_StaleSessions: status counts every stale session and lists
// the latest MaxStaleListed of them, oldest first, the same ones and in
// the same order as the tail of session list --stale; a session with an
// event within the lease is not stale, at the head and at past
// revisions, whether status reads the log's tail (fewer recent events
// than active sessions) or each session's last event (more).
func TestStatus_StaleSessions(t *testing.T) {
	ctx := context.Background()
	dir := openW1Dir(t)
	clock := time.Now()
	p := opened(t, dir, project.Options{Now: func() time.Time { return clock }})
	const idle = project.MaxStaleListed + 7
	for i := range idle {
		_, err := p.SessionStart(ctx, project.SessionStartRequest{Work: "W-1", Agent: fmt.Sprintf("a%d", i)})
		require.NoError(t, err)
		clock = clock.Add(time.Millisecond)
	}
	clock = clock.Add(2 * time.Hour) // past the lease (an hour at most)
	fresh, err := p.SessionStart(ctx, project.SessionStartRequest{Work: "W-1", Agent: "fresh"})
	require.NoError(t, err)
	tail := fresh.ProjectRevision // one recent event: status reads the log's tail
	for i := range idle + 3 {
		_, err := p.SessionCheckpoint(ctx, project.SessionCheckpointRequest{SessionID: fresh.Session.ID, Agent: "fresh", Digest: fmt.Sprintf("step %d", i), NextAction: "Go on"})
		require.NoError(t, err)
	}
	st, err := p.Status(ctx, project.StatusRequest{})
	require.NoError(t, err)
	mid := st.ProjectRevision // more recent events than sessions: status asks each session

	check := func(at *int64, active, stale int) {
		st, err := p.Status(ctx, project.StatusRequest{Read: commands.Read{At: at}})
		require.NoError(t, err)
		require.Equal(t, active, st.Sessions.Active)
		require.Equal(t, stale, st.Sessions.Stale)
		list, err := p.SessionList(ctx, project.SessionListRequest{Stale: true, All: true, Read: commands.Read{At: at}})
		require.NoError(t, err)
		require.Len(t, list.Sessions, stale)
		want := list.Sessions[max(0, stale-project.MaxStaleListed):]
		require.Len(t, st.StaleSessions, len(want))
		for i, s := range st.StaleSessions {
			require.Equal(t, want[i].ID, s.ID)
			require.Equal(t, want[i].IdleSince, s.IdleSince)
			require.NotEqual(t, fresh.Session.ID, s.ID)
		}
	}
	check(&tail, idle+1, idle)
	check(nil, idle+1, idle)
	// Ending idle sessions later does not change the answer at mid.
	clock = clock.Add(time.Second)
	list, err := p.SessionList(ctx, project.SessionListRequest{Stale: true, All: true})
	require.NoError(t, err)
	for _, s := range list.Sessions[:3] {
		_, err := p.SessionEnd(ctx, project.SessionEndRequest{SessionID: s.ID, Agent: s.Agent, Outcome: events.OutcomeAbandoned})
		require.NoError(t, err)
	}
	check(&mid, idle+1, idle)
	check(nil, idle-2, idle-3)
}

// openW1Dir is openW1's project directory, for a test that opens it with
// its own options.
func openW1Dir(tb testing.TB) string {
	ctx := context.Background()
	dir := tb.TempDir()
	st, err := events.Open(ctx, events.DBPath(dir), events.Options{Create: true, Projectors: projections.Projectors()})
	require.NoError(tb, err)
	env := commands.NewEnv(st)
	_, err = commands.Init(ctx, env, commands.InitRequest{Name: "growth"})
	require.NoError(tb, err)
	_, err = commands.IndexSource(ctx, env, commands.IndexRequest{Source: events.SourceIndexed{Path: "todo.md", Adapter: "markdown_checklist", ContentHash: "h",
		Items: []events.WorkItem{{Key: "W-1", Title: "Persist orders", Status: "planned", NextAction: "Write the store", Acceptance: []string{"Orders survive a restart"}}}}}, false)
	require.NoError(tb, err)
	require.NoError(tb, st.Close())
	return dir
}

// TestResume_ManyClosedSinceCheckpoint: a session resumed long after its
// checkpoint, on a work item another session went on with and closed 60
// loops of, gets its packet: the 20 latest closes, and a line that counts
// the other 40 with the command that lists them (before, every close was
// in the packet's required part, and the resume went without a packet:
// BudgetExceeded); the resume's JSON and the packet's list the latest 50
// of the 60 and count the other 10, and recovery inspect, which pages
// them, the first 50.
func TestResume_ManyClosedSinceCheckpoint(t *testing.T) {
	ctx := context.Background()
	p := openW1(t)
	first, cp, other := loopsLeft(t, p, 60, func(i int) string {
		return fmt.Sprintf("Open question %d about the order store, with enough words to cost tokens", i)
	})
	for i := range 60 { // one checkpoint per close: 60 closes at 60 seqs
		_, err := p.SessionCheckpoint(ctx, project.SessionCheckpointRequest{SessionID: other.Session.ID, Agent: "a1", Digest: "Answered", NextAction: "Go on",
			KnowledgeFlags: commands.KnowledgeFlags{ResolveLoops: []string{fmt.Sprintf("L-%d=answered", i+1)}}})
		require.NoError(t, err)
	}
	_, err := p.SessionEnd(ctx, project.SessionEndRequest{SessionID: other.Session.ID, Agent: "a1", Outcome: events.OutcomeIncomplete})
	require.NoError(t, err)

	// recovery inspect pages the closes in the order they came: the
	// first 50, the other 10 counted, the cursor of the next page.
	rep, err := p.RecoveryInspect(ctx, project.RecoveryInspectRequest{Session: first.Session.ID})
	require.NoError(t, err)
	require.Equal(t, 60-project.DefaultRecoveryLimit, rep.Knowledge.ClosedMore)
	require.Len(t, rep.Knowledge.Closed, project.DefaultRecoveryLimit)
	for i, k := range rep.Knowledge.Closed {
		require.Equal(t, fmt.Sprintf("L-%d", i+1), k.ID)
	}
	require.Equal(t, rep.Knowledge.Closed[project.DefaultRecoveryLimit-1].ClosedSeq, rep.ClosedNextSince)

	res, err := p.SessionResume(ctx, project.SessionResumeRequest{FromSession: first.Session.ID, Agent: "a2"})
	require.NoError(t, err)
	require.NotNil(t, res.Context, "recovery gaps: %v", res.RecoveryGaps)
	text := res.Context.RenderedContext
	var at int64 // the revision the packet was compiled at (its compile is recorded after)
	_, err = fmt.Sscanf(text[strings.Index(text, "As of project_revision "):], "As of project_revision %d", &at)
	require.NoError(t, err)
	require.Contains(t, text, fmt.Sprintf("- 40 closed before the 20 below (every close: awr log --work W-1 --kind checkpoint_recorded --since %d --until %d --json)", cp.Checkpoint.Seq-1, at))
	require.Len(t, res.Context.Knowledge.Closed, projections.MaxClosedListed, "the packet's JSON lists the latest 50 too")
	require.Equal(t, 10, res.Context.Knowledge.ClosedMore)
	require.Len(t, res.Knowledge.Closed, projections.MaxClosedListed, "and so does the resume's")
	for i := 1; i <= 60; i++ {
		line := fmt.Sprintf("- L-%d: ", i)
		if i <= 40 {
			require.NotContains(t, text, line, "L-%d closed among the first 40", i)
		} else {
			require.Contains(t, text, line, "L-%d closed among the latest 20", i)
		}
	}
}

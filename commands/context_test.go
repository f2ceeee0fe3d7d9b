package commands_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/workcontext"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
)

// kinds returns the kinds of the events after seq from, in order.
func kinds(t *testing.T, st *events.Store, from int64) []events.Kind {
	t.Helper()
	var out []events.Kind
	require.NoError(t, st.Read(context.Background(), func(r *events.Reader) error {
		return events.ScanEvents(r.Conn, from+1, r.Head, func(e *events.Event) error {
			out = append(out, e.Kind)
			return nil
		})
	}))
	return out
}

// recorded returns the seq at which hash was recorded for session, 0 when
// it never was.
func recorded(t *testing.T, st *events.Store, session, hash string) int64 {
	t.Helper()
	var seq int64
	require.NoError(t, st.Read(context.Background(), func(r *events.Reader) error {
		var err error
		seq, err = projections.ContextCompiledFor(r.Conn, session, hash, r.Head)
		return err
	}))
	return seq
}

// compiledAt reports whether the packet says it reflects revision rev.
func compiledAt(p *workcontext.Packet, rev int64) bool {
	return strings.Contains(p.RenderedContext, fmt.Sprintf("As of project_revision %d\n", rev))
}

// withGoal indexes the goal the sample's T-1 serves, so its packet is
// complete.
func withGoal(t *testing.T, te *testEnv) *testEnv {
	t.Helper()
	_, err := commands.IndexSources(context.Background(), te.Env, commands.IndexSourcesRequest{Sources: []events.SourceIndexed{{
		Path: "GOALS.md", Adapter: "markdown_goals", Role: "goals", ContentHash: "g1",
		Goals: []events.Goal{{Key: "G-1", Title: "the goal", Status: "active"}},
	}}})
	require.NoError(t, err)
	return te
}

func TestCompileContext(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("OK_RecordsWhatItCompiled", func(t *testing.T) {
		t.Parallel()
		te := withGoal(t, newTestEnv(t))
		start := te.session(t, commands.StartRequest{Work: "T-1", Agent: "a", Claim: true})
		res, err := commands.CompileContext(ctx, te.Env, commands.CompileRequest{Work: "T-1", Session: start.Session.ID})
		require.NoError(t, err)
		// The packet was compiled at the revision right before its record,
		// inside the same transaction: nothing came between.
		require.True(t, compiledAt(res.WorkContext, start.ProjectRevision), res.WorkContext.RenderedContext)
		require.Equal(t, start.ProjectRevision+1, res.RecordedSeq)
		require.Equal(t, res.RecordedSeq, res.ProjectRevision)
		require.Equal(t, []events.Kind{events.KindContextCompiled}, kinds(t, te.Store, start.ProjectRevision))
		require.Equal(t, res.RecordedSeq, recorded(t, te.Store, start.Session.ID, res.WorkContext.ContextHash))
		// A checkpoint naming that hash is verified against the record.
		cp, err := commands.RecordCheckpoint(ctx, te.Env, commands.CheckpointRequest{SessionID: start.Session.ID, Agent: "a",
			ContextHash: res.WorkContext.ContextHash, Digest: "d", NextAction: "n"})
		require.NoError(t, err)
		require.True(t, cp.Checkpoint.ContextHashVerified)
	})
	t.Run("OK_IncompleteIsRecordedAndSaid", func(t *testing.T) {
		t.Parallel()
		te := newTestEnv(t) // T-1's goal G-1 is not declared
		start := te.session(t, commands.StartRequest{Work: "T-1", Agent: "a"})
		res, err := commands.CompileContext(ctx, te.Env, commands.CompileRequest{Work: "T-1", Session: start.Session.ID})
		require.True(t, fault.Is(err, fault.ContextIncomplete), "%v", err)
		require.NotNil(t, res)
		require.False(t, res.Completeness.Complete)
		require.Equal(t, res.RecordedSeq, recorded(t, te.Store, start.Session.ID, res.WorkContext.ContextHash))
	})
	t.Run("OK_WithoutSessionWritesNothing", func(t *testing.T) {
		t.Parallel()
		te := withGoal(t, newTestEnv(t))
		before := kinds(t, te.Store, 0)
		res, err := commands.CompileContext(ctx, te.Env, commands.CompileRequest{Work: "T-1"})
		require.NoError(t, err)
		require.Zero(t, res.RecordedSeq)
		require.Equal(t, before, kinds(t, te.Store, 0))
		// At revision 2 the goal was not indexed yet: the past packet says so.
		past, err := commands.CompileContext(ctx, te.Env, commands.CompileRequest{Work: "T-1", Read: commands.AtRevision(2)})
		require.True(t, fault.Is(err, fault.ContextIncomplete), "%v", err)
		require.EqualValues(t, 2, past.ProjectRevision)
		require.True(t, compiledAt(past.WorkContext, 2))
		require.Equal(t, before, kinds(t, te.Store, 0))
	})
	t.Run("ErrEndedSessionWritesNothing", func(t *testing.T) {
		t.Parallel()
		te := newTestEnv(t)
		start := te.session(t, commands.StartRequest{Work: "T-1", Agent: "a"})
		end, err := commands.EndSession(ctx, te.Env, commands.EndRequest{SessionID: start.Session.ID, Outcome: "completed"})
		require.NoError(t, err)
		_, err = commands.CompileContext(ctx, te.Env, commands.CompileRequest{Work: "T-1", Session: start.Session.ID})
		require.True(t, fault.Is(err, fault.InvalidTransition), "%v", err)
		require.Empty(t, kinds(t, te.Store, end.ProjectRevision))
	})
	t.Run("ErrUsage", func(t *testing.T) {
		t.Parallel()
		te := newTestEnv(t)
		_, err := commands.CompileContext(ctx, te.Env, commands.CompileRequest{Work: "T-1", Session: "S", Read: commands.AtRevision(1)})
		require.True(t, fault.Is(err, fault.Usage), "%v", err)
		_, err = commands.CompileContext(ctx, te.Env, commands.CompileRequest{})
		require.True(t, fault.Is(err, fault.InvalidInput), "%v", err)
		_, err = commands.CompileContext(ctx, te.Env, commands.CompileRequest{Work: "T-1", Read: commands.AtRevision(99)})
		require.True(t, fault.Is(err, fault.InvalidInput), "%v", err)
		_, err = commands.CompileContext(ctx, te.Env, commands.CompileRequest{Work: "T-1", Read: commands.AtRevision(-1)})
		require.True(t, fault.Is(err, fault.InvalidInput), "%v", err)
	})
}

func TestResumeWithContext(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("OK_OneTransaction", func(t *testing.T) {
		t.Parallel()
		te := withGoal(t, newTestEnv(t))
		start := te.session(t, commands.StartRequest{Work: "T-1", Agent: "a", Claim: true})
		cp, err := commands.RecordCheckpoint(ctx, te.Env, commands.CheckpointRequest{SessionID: start.Session.ID, Agent: "a", Digest: "did", NextAction: "next"})
		require.NoError(t, err)
		req := commands.ResumeRequest{FromSession: start.Session.ID, Agent: "b", WriteMeta: commands.WriteMeta{RequestID: "r-1"}}
		res, err := commands.ResumeWithContext(ctx, te.Env, req, nil)
		require.NoError(t, err)
		require.True(t, res.ContextReady)
		require.Equal(t, cp.Checkpoint.ID, res.Checkpoint.ID)
		require.Empty(t, res.RecoveryGaps)
		// The resume's events and the successor's context record form one
		// commit, the record last.
		got := kinds(t, te.Store, cp.ProjectRevision)
		require.Equal(t, events.KindSessionStarted, got[0])
		require.Equal(t, []events.Kind{events.KindSessionResumed, events.KindContextCompiled}, got[len(got)-2:])
		require.Equal(t, res.ProjectRevision, cp.ProjectRevision+int64(len(got)))
		require.Equal(t, res.ProjectRevision, recorded(t, te.Store, res.Resumed.Session.ID, res.Context.ContextHash))
		require.True(t, compiledAt(res.Context, res.ProjectRevision-1), res.Context.RenderedContext)

		// A retry answers exactly the first answer and appends nothing.
		again, err := commands.ResumeWithContext(ctx, te.Env, req, nil)
		require.NoError(t, err)
		require.True(t, again.Replayed)
		require.Equal(t, res.Context.ContextHash, again.Context.ContextHash)
		require.Equal(t, res.Resumed.Session.ID, again.Resumed.Session.ID)
		require.Len(t, kinds(t, te.Store, cp.ProjectRevision), len(got))

		// The context record is awr's, not the successor agent's.
		require.NoError(t, te.Store.Read(ctx, func(r *events.Reader) error {
			return events.ScanEvents(r.Conn, res.ProjectRevision, res.ProjectRevision, func(e *events.Event) error {
				require.Equal(t, events.KindContextCompiled, e.Kind)
				require.Equal(t, "awr", e.Actor)
				return nil
			})
		}))

		// Sources changed since: a new resume that would move a claim is
		// refused, but the retry still gets its first answer.
		stale := []string{"ledger.yaml"}
		again, err = commands.ResumeWithContext(ctx, te.Env, req, stale)
		require.NoError(t, err)
		require.True(t, again.Replayed)
		_, err = commands.ResumeWithContext(ctx, te.Env, commands.ResumeRequest{FromSession: res.Resumed.Session.ID, Agent: "c"}, stale)
		require.True(t, fault.Is(err, fault.SourceStale), "%v", err)
		require.Len(t, kinds(t, te.Store, cp.ProjectRevision), len(got))
	})
	t.Run("OK_StaleSourcesLeaveAGap", func(t *testing.T) {
		t.Parallel()
		te := newTestEnv(t)
		start := te.session(t, commands.StartRequest{Work: "T-1", Agent: "a"})
		res, err := commands.ResumeWithContext(ctx, te.Env, commands.ResumeRequest{FromSession: start.Session.ID, Agent: "b", Claim: new(false)}, []string{"ledger.yaml"})
		require.NoError(t, err)
		require.False(t, res.ContextReady)
		require.Nil(t, res.Context)
		require.Contains(t, res.RecoveryGaps, "context not compiled: context compile: sources changed since they were indexed: ledger.yaml")
		require.Contains(t, res.RecoveryGaps, "the predecessor recorded no checkpoint: there is no digest, next action or open loops to inherit")
		require.NotContains(t, kinds(t, te.Store, start.ProjectRevision), events.KindContextCompiled)
	})
	t.Run("ErrConflictWritesNothing", func(t *testing.T) {
		t.Parallel()
		te := newTestEnv(t)
		start := te.session(t, commands.StartRequest{Work: "T-1", Agent: "a"})
		_, err := commands.ResumeWithContext(ctx, te.Env, commands.ResumeRequest{FromSession: start.Session.ID, Agent: "b"}, nil)
		require.NoError(t, err)
		head := kinds(t, te.Store, 0)
		_, err = commands.ResumeWithContext(ctx, te.Env, commands.ResumeRequest{FromSession: start.Session.ID, Agent: "c"}, nil)
		require.True(t, fault.Is(err, fault.InvalidTransition), "%v", err)
		require.Equal(t, head, kinds(t, te.Store, 0))
	})
}

func TestIndexSources_Prune(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	te := newTestEnv(t)
	other := events.SourceIndexed{Path: "notes.md", Adapter: "markdown_checklist", Role: "tasks", ContentHash: "h2",
		Items: []events.WorkItem{{Key: "N-1", Title: "note", Status: "planned"}}}
	_, err := commands.IndexSources(ctx, te.Env, commands.IndexSourcesRequest{Sources: []events.SourceIndexed{other}})
	require.NoError(t, err)
	// Without Prune nothing is removed, whatever Listed says.
	res, err := commands.IndexSources(ctx, te.Env, commands.IndexSourcesRequest{Sources: []events.SourceIndexed{other}, Listed: []string{"notes.md"}})
	require.NoError(t, err)
	require.Empty(t, res.Removed)
	require.Equal(t, []string{"notes.md"}, res.Unchanged)
	// With Prune, the indexed source the manifest no longer lists goes, in
	// the same transaction that compared the others.
	res, err = commands.IndexSources(ctx, te.Env, commands.IndexSourcesRequest{Sources: []events.SourceIndexed{other}, Listed: []string{"notes.md"}, Prune: true})
	require.NoError(t, err)
	require.Equal(t, []string{"ledger.yaml"}, res.Removed)
	require.Equal(t, []string{"notes.md"}, res.Unchanged)
	again, err := commands.IndexSources(ctx, te.Env, commands.IndexSourcesRequest{Sources: []events.SourceIndexed{other}, Listed: []string{"notes.md"}, Prune: true})
	require.NoError(t, err)
	require.Empty(t, again.Removed)
	require.Equal(t, res.ProjectRevision, again.ProjectRevision)
}

func TestStartSession_StaleSources(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	te := newTestEnv(t)
	stale := []string{"ledger.yaml"}
	first := te.session(t, commands.StartRequest{Work: "T-1", Agent: "a", Claim: true, WriteMeta: commands.WriteMeta{RequestID: "s-1"}})
	// A retry answers first, stale or not.
	again := te.session(t, commands.StartRequest{Work: "T-1", Agent: "a", Claim: true, Stale: stale, WriteMeta: commands.WriteMeta{RequestID: "s-1"}})
	require.True(t, again.Replayed)
	require.Equal(t, first.Session.ID, again.Session.ID)
	// A new claim on stale sources is refused and writes nothing; a
	// session without a claim does not depend on them.
	_, err := commands.StartSession(ctx, te.Env, commands.StartRequest{Work: "T-2", Agent: "b", Claim: true, Stale: stale})
	require.True(t, fault.Is(err, fault.SourceStale), "%v", err)
	require.Empty(t, kinds(t, te.Store, first.ProjectRevision))
	te.session(t, commands.StartRequest{Work: "T-2", Agent: "b", Stale: stale})
}

func TestRenewClaim_DefaultIsTheSameRequest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	te := newTestEnv(t)
	start := te.session(t, commands.StartRequest{Work: "T-1", Agent: "a", Claim: true, TTLms: new(int64(1000))})
	meta := commands.WriteMeta{RequestID: "renew-1"}
	first, err := commands.RenewClaim(ctx, te.Env, commands.RenewRequest{SessionID: start.Session.ID, WriteMeta: meta})
	require.NoError(t, err)
	again, err := commands.RenewClaim(ctx, te.Env, commands.RenewRequest{SessionID: start.Session.ID, TTLms: new(commands.DefaultClaimTTLms), WriteMeta: meta})
	require.NoError(t, err)
	require.True(t, again.Replayed)
	require.Equal(t, first.Claim.ExpiresAt, again.Claim.ExpiresAt)
	_, err = commands.RenewClaim(ctx, te.Env, commands.RenewRequest{SessionID: start.Session.ID, TTLms: new(int64(5)), WriteMeta: meta})
	require.True(t, fault.Is(err, fault.InvalidInput), "%v", err)
}

func TestLaunchSeat_RecordsContextInTheLaunch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	te := withGoal(t, newTestEnv(t))
	decl, err := commands.DeclareSeat(ctx, te.Env, commands.SeatRequest{Address: "build@portal", Runtime: "generic", Command: "agent {context_file}", Work: "T-1"})
	require.NoError(t, err)
	l, err := commands.LaunchSeat(ctx, te.Env, commands.LaunchRequest{Address: "build@portal", Mode: "fresh", Conversation: "c-1", TmuxSession: "t", ContextFile: "f"})
	require.NoError(t, err)
	require.NoError(t, l.ContextError)
	require.NotNil(t, l.Context)
	// The session, its claim, the launch and the session's context record
	// are one commit.
	require.Equal(t, []events.Kind{events.KindSessionStarted, events.KindClaimAcquired, events.KindSeatLaunched, events.KindContextCompiled},
		kinds(t, te.Store, decl.ProjectRevision))
	require.Equal(t, l.ProjectRevision, l.Context.RecordedSeq)
	require.Equal(t, l.Context.RecordedSeq, recorded(t, te.Store, l.SessionID, l.Context.WorkContext.ContextHash))
	require.True(t, compiledAt(l.Context.WorkContext, l.Seq), l.Context.WorkContext.RenderedContext)
}

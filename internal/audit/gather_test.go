package audit_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fixtures/logkit"
	"github.com/awr-dev/awr/internal/audit"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/project"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
)

// chain: on W-1, a is resumed by b, b by c; d starts afresh on W-1 after c
// ended; e works on W-2.
func chain(t *testing.T) (p *project.Project, a, b, c, d string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	env := logkit.Seeded(t, dir, logkit.Ticking(time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)), 7,
		events.WorkItem{Key: "W-1", Title: "one", Status: "planned"}, events.WorkItem{Key: "W-2", Title: "two", Status: "planned"})
	p, err := project.Open(ctx, dir, project.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	sa, err := commands.StartSession(ctx, env, commands.StartRequest{Work: "W-1", Agent: "a", Claim: true})
	require.NoError(t, err)
	_, err = commands.StartSession(ctx, env, commands.StartRequest{Work: "W-2", Agent: "e", Claim: true})
	require.NoError(t, err)
	_, err = commands.RecordCheckpoint(ctx, env, commands.CheckpointRequest{SessionID: sa.Session.ID, Agent: "a", Digest: "d1", NextAction: "n1", KnowledgeFlags: commands.KnowledgeFlags{OpenLoops: []string{"loop one"}}})
	require.NoError(t, err)
	sb, err := commands.ResumeSession(ctx, env, commands.ResumeRequest{FromSession: sa.Session.ID, Agent: "b"})
	require.NoError(t, err)
	sc, err := commands.ResumeSession(ctx, env, commands.ResumeRequest{FromSession: sb.Session.ID, Agent: "c"})
	require.NoError(t, err)
	_, err = commands.EndSession(ctx, env, commands.EndRequest{SessionID: sc.Session.ID, Agent: "c", Outcome: events.OutcomeCompleted})
	require.NoError(t, err)
	sd, err := commands.StartSession(ctx, env, commands.StartRequest{Work: "W-1", Agent: "d", Claim: true})
	require.NoError(t, err)
	return p, sa.Session.ID, sb.Session.ID, sc.Session.ID, sd.Session.ID
}

func sessionIDs(r *project.AuditResult) []string {
	var out []string
	for _, s := range r.Sessions {
		out = append(out, s.ID)
	}
	return out
}

func TestAudit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p, a, b, c, d := chain(t)

	t.Run("SessionChain", func(t *testing.T) {
		// From the middle of the chain: back to a, on to c, not d.
		res, err := p.Audit(ctx, project.AuditRequest{Session: b})
		require.NoError(t, err)
		require.Equal(t, []string{a, b, c}, sessionIDs(res))
		require.Equal(t, audit.Subject{Kind: audit.SubjectSession, ID: b}, res.Subject)
		require.Len(t, res.Resumes, 2)
		require.Equal(t, a, res.Resumes[0].FromSession)
		require.NotNil(t, res.Resumes[0].ClaimMoved)
		require.Equal(t, int64(2), res.Resumes[0].ClaimMoved.FencingToken)
		require.Equal(t, int64(3), res.Resumes[1].ClaimMoved.FencingToken)
		require.Equal(t, []audit.Item{{ID: "L-1", Text: "loop one"}}, res.Resumes[1].Carried.OpenLoops)
		for _, cl := range res.Claims {
			require.NotEqual(t, d, cl.Session, "d is not in b's chain")
		}
		first, err := p.Audit(ctx, project.AuditRequest{Session: a})
		require.NoError(t, err)
		require.Equal(t, []string{a, b, c}, sessionIDs(first))
		last, err := p.Audit(ctx, project.AuditRequest{Session: d})
		require.NoError(t, err)
		require.Equal(t, []string{d}, sessionIDs(last))
	})

	t.Run("Work", func(t *testing.T) {
		res, err := p.Audit(ctx, project.AuditRequest{Work: "W-1"})
		require.NoError(t, err)
		require.Equal(t, []string{a, b, c, d}, sessionIDs(res))
		var tokens []int64
		for _, cl := range res.Claims {
			if cl.Event == audit.ClaimAcquired {
				tokens = append(tokens, cl.FencingToken)
			}
		}
		require.Equal(t, []int64{1, 2, 3, 4}, tokens)
		require.True(t, res.Chain.Verified)
		require.Equal(t, res.ProjectRevision, res.Chain.Through)
	})

	t.Run("Deterministic", func(t *testing.T) {
		at := int64(9)
		one, err := p.Audit(ctx, project.AuditRequest{Work: "W-1", Read: project.Read{At: &at}, Format: audit.FormatHTML})
		require.NoError(t, err)
		two, err := p.Audit(ctx, project.AuditRequest{Work: "W-1", Read: project.Read{At: &at}, Format: audit.FormatHTML})
		require.NoError(t, err)
		require.Equal(t, one.Text, two.Text)
		require.EqualValues(t, 9, one.ProjectRevision)
		head, err := p.Audit(ctx, project.AuditRequest{Work: "W-1", Format: audit.FormatHTML})
		require.NoError(t, err)
		require.Less(t, len(one.Text), len(head.Text))
	})

	t.Run("Errors", func(t *testing.T) {
		for _, c := range []struct {
			req  project.AuditRequest
			code fault.Code
		}{
			{project.AuditRequest{}, fault.Usage},
			{project.AuditRequest{Work: "W-1", Session: a}, fault.Usage},
			{project.AuditRequest{Work: "W-1", Format: "pdf"}, fault.Usage},
			{project.AuditRequest{Work: "NOPE"}, fault.NotFound},
			{project.AuditRequest{Session: "nope"}, fault.NotFound},
			{project.AuditRequest{Work: "W-1", Read: project.Read{At: new(int64(999))}}, fault.InvalidInput},
		} {
			_, err := p.Audit(ctx, c.req)
			require.Equal(t, c.code, fault.As(err).Code, "%+v", c.req)
		}
	})
}

// TestAudit_KeptAtEachCheckpoint: what each checkpoint of a work item
// kept in force is the item's live knowledge right after it, as the
// knowledge projection reads it at that revision (an item opened, one
// resolved, one superseded and one retracted over four checkpoints;
// the audit reads only the live items, never every item with its
// sessions counted).
func TestAudit_KeptAtEachCheckpoint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	env := logkit.Seeded(t, dir, logkit.Ticking(time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)), 7,
		events.WorkItem{Key: "W-1", Title: "one", Status: "planned"})
	s, err := commands.StartSession(ctx, env, commands.StartRequest{Work: "W-1", Agent: "a", Claim: true})
	require.NoError(t, err)
	steps := []commands.KnowledgeFlags{
		{OpenLoops: []string{"loop one", "loop two"}, Decisions: []string{"use sqlite"}, Facts: []string{"fact one"}},
		{ResolveLoops: []string{"L-1=done"}, Facts: []string{"fact two"}},
		{Supersede: []string{"D-1=use postgres"}, OpenLoops: []string{"loop three"}},
		{Retract: []string{"F-1"}},
	}
	var seqs []int64
	for i, k := range steps {
		cp, err := commands.RecordCheckpoint(ctx, env, commands.CheckpointRequest{SessionID: s.Session.ID, Agent: "a", Digest: fmt.Sprintf("d%d", i), NextAction: "n", KnowledgeFlags: k})
		require.NoError(t, err)
		seqs = append(seqs, cp.Checkpoint.Seq)
	}
	p, err := project.Open(ctx, dir, project.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	res, err := p.Audit(ctx, project.AuditRequest{Work: "W-1"})
	require.NoError(t, err)
	require.Len(t, res.Checkpoints, len(steps))
	st, err := p.EventLog(ctx)
	require.NoError(t, err)
	ids := func(items []audit.Item) (out []string) {
		for _, it := range items {
			out = append(out, it.ID+" "+it.Text)
		}
		return out
	}
	// Kept is what the checkpoint kept: in force after it, less what it
	// opened.
	names := func(ks []projections.Knowledge, seq int64) (out []string) {
		for _, k := range ks {
			if k.OpenedSeq != seq {
				out = append(out, k.ID+" "+k.Text)
			}
		}
		return out
	}
	require.NoError(t, st.Read(ctx, func(r *events.Reader) error {
		for i, cp := range res.Checkpoints {
			all, err := projections.KnowledgeAt(r.Conn, "W-1", seqs[i])
			require.NoError(t, err)
			want := projections.SortKnowledge(all, seqs[i])
			require.Equal(t, names(want.OpenLoops, seqs[i]), ids(cp.Kept.OpenLoops), "checkpoint %d", i)
			require.Equal(t, names(want.Decisions, seqs[i]), ids(cp.Kept.Decisions), "checkpoint %d", i)
			require.Equal(t, names(want.Facts, seqs[i]), ids(cp.Kept.Facts), "checkpoint %d", i)
		}
		return nil
	}))
	last := res.Checkpoints[len(steps)-1].Kept
	require.Equal(t, []string{"L-2 loop two", "L-3 loop three"}, ids(last.OpenLoops))
	require.Equal(t, []string{"F-2 fact two"}, ids(last.Facts), "F-1 retracted")
	require.Equal(t, []string{"D-2 use postgres"}, ids(last.Decisions), "D-1 superseded by D-2")
}

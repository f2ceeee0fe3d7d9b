package project_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/project"
	"github.com/stretchr/testify/require"
)

// loopsLeft starts a session on W-1 of p (agent a0, with the claim) whose
// checkpoint opens n loops, the i-th worded text(i), ends it incomplete
// and starts another session on W-1 (agent a1) to go on: it returns the
// first session, its checkpoint and the other.
func loopsLeft(t *testing.T, p *project.Project, n int, text func(i int) string) (first *project.SessionStartResult, cp *project.CheckpointResult, other *project.SessionStartResult) {
	t.Helper()
	ctx := context.Background()
	first, err := p.SessionStart(ctx, project.SessionStartRequest{Work: "W-1", Agent: "a0", Claim: true})
	require.NoError(t, err)
	var loops []string
	for i := range n {
		loops = append(loops, text(i))
	}
	cp, err = p.SessionCheckpoint(ctx, project.SessionCheckpointRequest{SessionID: first.Session.ID, Agent: "a0", Digest: "Asked", NextAction: "Answer them",
		KnowledgeFlags: commands.KnowledgeFlags{OpenLoops: loops}})
	require.NoError(t, err)
	_, err = p.SessionEnd(ctx, project.SessionEndRequest{SessionID: first.Session.ID, Agent: "a0", Outcome: events.OutcomeIncomplete})
	require.NoError(t, err)
	other, err = p.SessionStart(ctx, project.SessionStartRequest{Work: "W-1", Agent: "a1"})
	require.NoError(t, err)
	return first, cp, other
}

// TestRecoveryInspect_Pages: on a real project where the events changed
// and the items closed since a session's checkpoint are longer than a
// page, recovery inspect holds a page of each with the count of what
// follows and the cursor of the next page; paging with the cursors lists
// every event and every item exactly once, in the log's order (a
// checkpoint's closes never split across pages), the same as
// RecoveryInspectEach (the CLI's --all), at the head and at a past
// revision; a cursor outside its list is InvalidInput with the command
// of the list's first page.
func TestRecoveryInspect_Pages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := openW1(t)
	first, cp, other := loopsLeft(t, p, 40, func(i int) string { return fmt.Sprintf("Open question %d", i+1) })
	// Checkpoints closing 3 loops each (the last one 1): a page of 7
	// holds two of them, never part of a third.
	var past int64
	for n := 1; n <= 40; n += 3 {
		var flags commands.KnowledgeFlags
		for i := n; i < n+3 && i <= 40; i++ {
			if i%2 == 0 {
				flags.DropLoops = append(flags.DropLoops, fmt.Sprintf("L-%d=moot", i))
			} else {
				flags.ResolveLoops = append(flags.ResolveLoops, fmt.Sprintf("L-%d=answered", i))
			}
		}
		res, err := p.SessionCheckpoint(ctx, project.SessionCheckpointRequest{SessionID: other.Session.ID, Agent: "a1", Digest: "Answered", NextAction: "Go on", KnowledgeFlags: flags})
		require.NoError(t, err)
		if n == 19 {
			past = res.ProjectRevision
		}
	}
	_, err := p.SessionEnd(ctx, project.SessionEndRequest{SessionID: other.Session.ID, Agent: "a1", Outcome: events.OutcomeIncomplete})
	require.NoError(t, err)

	for _, read := range []struct {
		name string
		at   *int64
	}{{"head", nil}, {"past", &past}} {
		t.Run(read.name, func(t *testing.T) {
			req := project.RecoveryInspectRequest{Session: first.Session.ID, Read: commands.Read{At: read.at}}
			// What the lists hold, read apart: the events on W-1 after
			// the checkpoint, and the items closed from it on.
			var wantEvents []int64
			err := p.LogEach(ctx, project.LogRequest{Read: req.Read, Work: "W-1", Since: cp.Checkpoint.Seq}, func(int64) error { return nil }, func(e project.LogEvent) error {
				wantEvents = append(wantEvents, e.Seq)
				return nil
			})
			require.NoError(t, err)
			whole, err := p.RecoveryInspect(ctx, project.RecoveryInspectRequest{Session: first.Session.ID, Read: req.Read, Limit: new(project.MaxRecoveryLimit)})
			require.NoError(t, err)
			var wantClosed []string
			for _, k := range whole.Knowledge.Closed {
				wantClosed = append(wantClosed, k.ID)
			}
			wantLoops := 40
			if read.at != nil {
				wantLoops = 21 // the checkpoints up to the one that closed L-19..L-21
			}
			require.Len(t, wantClosed, wantLoops)
			require.Greater(t, len(wantEvents), 7, "longer than a page of 7")

			// The default page: the first 50 of each, or all of them.
			rep, err := p.RecoveryInspect(ctx, req)
			require.NoError(t, err)
			require.Equal(t, cp.Checkpoint.Seq, rep.ChangedSinceSeq)
			require.Equal(t, cp.Checkpoint.Seq-1, rep.Knowledge.Since)
			require.Equal(t, len(wantEvents), len(rep.ChangedSince)+rep.ChangedMore)
			require.Equal(t, wantLoops, len(rep.Knowledge.Closed)+rep.Knowledge.ClosedMore)

			// Pages of 7, following the cursors.
			limit := 7
			var gotEvents []int64
			for cursor := (*int64)(nil); ; {
				rep, err := p.RecoveryInspect(ctx, project.RecoveryInspectRequest{Session: first.Session.ID, Read: req.Read, ChangedSince: cursor, Limit: &limit})
				require.NoError(t, err)
				require.LessOrEqual(t, len(rep.ChangedSince), limit)
				for _, e := range rep.ChangedSince {
					gotEvents = append(gotEvents, e.Seq)
				}
				require.Equal(t, len(wantEvents)-len(gotEvents), rep.ChangedMore, "the count of the events after the page")
				if rep.ChangedNextSince == 0 {
					break
				}
				require.Len(t, rep.ChangedSince, limit)
				cursor = new(rep.ChangedNextSince)
			}
			require.Equal(t, wantEvents, gotEvents)

			var gotClosed []string
			var lastSeq int64
			for cursor := (*int64)(nil); ; {
				rep, err := p.RecoveryInspect(ctx, project.RecoveryInspectRequest{Session: first.Session.ID, Read: req.Read, ClosedSince: cursor, Limit: &limit})
				require.NoError(t, err)
				k := rep.Knowledge
				require.NotEmpty(t, k.Closed)
				if rep.ClosedNextSince != 0 {
					require.Len(t, k.Closed, 6, "whole checkpoints of 3: 6 of 7")
				}
				require.Greater(t, k.Closed[0].ClosedSeq, lastSeq, "a checkpoint's closes split across pages")
				for _, c := range k.Closed {
					gotClosed = append(gotClosed, c.ID)
					lastSeq = c.ClosedSeq
				}
				require.Equal(t, wantLoops-len(gotClosed), k.ClosedMore, "the count of the items after the page")
				if rep.ClosedNextSince == 0 {
					break
				}
				require.Equal(t, lastSeq, rep.ClosedNextSince)
				cursor = new(rep.ClosedNextSince)
			}
			require.Equal(t, wantClosed, gotClosed)
			for i := 1; i < len(gotClosed); i++ {
				require.NotEqual(t, gotClosed[i-1], gotClosed[i])
			}

			// Each: both lists whole, the report's other fields as the
			// page's.
			var eachEvents []int64
			var eachClosed []string
			var head *project.RecoveryReport
			err = p.RecoveryInspectEach(ctx, req, func(r *project.RecoveryReport) error {
				head = r
				require.Empty(t, r.ChangedSince)
				require.Empty(t, r.Knowledge.Closed)
				return nil
			}, func(e project.LogEvent) error {
				eachEvents = append(eachEvents, e.Seq)
				return nil
			}, func(k *project.KnowledgeItem) error {
				eachClosed = append(eachClosed, k.ID)
				return nil
			})
			require.NoError(t, err)
			require.Equal(t, wantEvents, eachEvents)
			require.Equal(t, wantClosed, eachClosed)
			require.Equal(t, rep.NextStep, head.NextStep)
			require.Equal(t, rep.ProjectRevision, head.ProjectRevision)
			require.Equal(t, rep.Knowledge.OpenLoops, head.Knowledge.OpenLoops)
		})
	}

	t.Run("ErrCursor", func(t *testing.T) {
		head, err := p.RecoveryInspect(ctx, project.RecoveryInspectRequest{Session: first.Session.ID})
		require.NoError(t, err)
		id := first.Session.ID
		bad := func(req project.RecoveryInspectRequest, flag, hint string) {
			t.Helper()
			req.Session = id
			_, err := p.RecoveryInspect(ctx, req)
			require.Equal(t, fault.InvalidInput, fault.CodeOf(err), "%v", err)
			require.Equal(t, flag, fault.As(err).Details["flag"])
			require.Equal(t, hint, fault.As(err).Hint)
			require.Equal(t, 1, fault.ExitCode(err))
		}
		firstPage := fmt.Sprintf("awr recovery inspect --session %s --changed-since %d", id, cp.Checkpoint.Seq)
		bad(project.RecoveryInspectRequest{ChangedSince: new(cp.Checkpoint.Seq - 1)}, "--changed-since", firstPage)
		bad(project.RecoveryInspectRequest{ChangedSince: new(head.ProjectRevision + 1)}, "--changed-since", firstPage)
		bad(project.RecoveryInspectRequest{ChangedSince: new(int64(-1))}, "--changed-since", "awr status")
		bad(project.RecoveryInspectRequest{ClosedSince: new(cp.Checkpoint.Seq - 2)}, "--closed-since",
			fmt.Sprintf("awr recovery inspect --session %s --closed-since %d", id, cp.Checkpoint.Seq-1))
		bad(project.RecoveryInspectRequest{ChangedSince: new(past + 1), Read: commands.Read{At: &past}}, "--changed-since",
			fmt.Sprintf("awr recovery inspect --session %s --at %d --changed-since %d", id, past, cp.Checkpoint.Seq))
		bad(project.RecoveryInspectRequest{Limit: new(0)}, "--limit", fmt.Sprintf("awr recovery inspect --session %s --all", id))
		bad(project.RecoveryInspectRequest{Limit: new(project.MaxRecoveryLimit + 1)}, "--limit", fmt.Sprintf("awr recovery inspect --session %s --all", id))
		// Before its checkpoint the session lists no closes to page.
		_, err = p.RecoveryInspect(ctx, project.RecoveryInspectRequest{Session: id, ClosedSince: new(int64(1)), Read: commands.Read{At: &first.ProjectRevision}})
		require.Equal(t, fault.InvalidInput, fault.CodeOf(err), "%v", err)
		require.Equal(t, fmt.Sprintf("awr recovery inspect --session %s --at %d", id, first.ProjectRevision), fault.As(err).Hint)
	})
}

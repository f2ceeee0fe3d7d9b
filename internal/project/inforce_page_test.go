package project_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/project"
	"github.com/stretchr/testify/require"
)

// inForce lists the ids of the items in force k holds, in the paged
// order: open loops, decisions, facts, hypotheses.
func inForce(k *project.KnowledgeState) []string {
	var out []string
	if k == nil {
		return out
	}
	for _, list := range [][]project.KnowledgeItem{k.OpenLoops, k.Decisions, k.Facts, k.Hypotheses} {
		for _, it := range list {
			out = append(out, it.ID)
		}
	}
	return out
}

// ids is "P-from" to "P-to", skipping those in skip.
func ids(prefix string, from, to int, skip ...int) []string {
	var out []string
next:
	for i := from; i <= to; i++ {
		for _, s := range skip {
			if s == i {
				continue next
			}
		}
		out = append(out, fmt.Sprintf("%s-%d", prefix, i))
	}
	return out
}

// TestKnowledgeInForce_Paged: on a real project whose work item has more
// items in force than a page (55 loops, decisions, facts, hypotheses, one
// hypothesis confirmed into a fact), recovery inspect, session show and
// work show list a page of them (50 by default), open loops first, with
// knowledge_total and the cursor of the next page; following the cursors
// lists every item in force exactly once, in order, at the head and at a
// past revision; --all (All, or a limit as large as the list) lists them
// whole; a cursor awr did not give is InvalidInput naming
// --knowledge-cursor, with the command of the first page.
func TestKnowledgeInForce_Paged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := openW1(t)
	s, err := p.SessionStart(ctx, project.SessionStartRequest{Work: "W-1", Agent: "a0", Claim: true})
	require.NoError(t, err)
	texts := func(what string, n int) (out []string) {
		for i := 1; i <= n; i++ {
			out = append(out, fmt.Sprintf("%s %d", what, i))
		}
		return out
	}
	cp := func(flags commands.KnowledgeFlags) int64 {
		res, err := p.SessionCheckpoint(ctx, project.SessionCheckpointRequest{SessionID: s.Session.ID, Agent: "a0", Digest: "Went on", NextAction: "Go on", KnowledgeFlags: flags})
		require.NoError(t, err)
		return res.ProjectRevision
	}
	past := cp(commands.KnowledgeFlags{OpenLoops: texts("Open question", 55), Decisions: texts("Decided", 5), Facts: texts("Known", 4), Hypotheses: texts("Maybe", 4)})
	cp(commands.KnowledgeFlags{ResolveLoops: []string{"L-2=answered", "L-5=answered"}, Retract: []string{"D-3=reversed"}, Confirm: []string{"H-2"},
		OpenLoops: []string{"Open question 56", "Open question 57"}, Decisions: []string{"Decided 6", "Decided 7"}})

	head := append(append(append(ids("L", 1, 57, 2, 5), ids("D", 1, 7, 3)...), "F-1", "F-2", "H-2", "F-3", "F-4"), ids("H", 1, 4, 2)...)
	then := append(append(append(ids("L", 1, 55), ids("D", 1, 5)...), ids("F", 1, 4)...), ids("H", 1, 4)...)

	// The three reads, each of one page after a cursor of a size (nil:
	// the default; 0: all), giving the page's items in force, the total
	// and the next cursor.
	type page struct {
		items []string
		total int
		next  string
	}
	reads := map[string]func(at *int64, cursor string, limit *int) (page, error){
		"recovery inspect": func(at *int64, cursor string, limit *int) (page, error) {
			req := project.RecoveryInspectRequest{Session: s.Session.ID, Read: commands.Read{At: at}, KnowledgeCursor: cursor, Limit: limit}
			if limit != nil && *limit == 0 {
				req.Limit = new(project.MaxRecoveryLimit)
			}
			rep, err := p.RecoveryInspect(ctx, req)
			if err != nil {
				return page{}, err
			}
			return page{inForce(rep.Knowledge), rep.KnowledgeTotal, rep.KnowledgeNextCursor}, nil
		},
		"session show": func(at *int64, cursor string, limit *int) (page, error) {
			req := project.SessionShowRequest{Session: s.Session.ID, Read: commands.Read{At: at}, KnowledgeCursor: cursor, Limit: limit}
			if limit != nil && *limit == 0 {
				req.Limit, req.All = nil, true
			}
			v, err := p.SessionShow(ctx, req)
			if err != nil {
				return page{}, err
			}
			return page{inForce(v.Knowledge), v.KnowledgeTotal, v.KnowledgeNextCursor}, nil
		},
		"work show": func(at *int64, cursor string, limit *int) (page, error) {
			req := project.WorkShowRequest{Key: "W-1", Read: commands.Read{At: at}, KnowledgeCursor: cursor, Limit: limit}
			if limit != nil && *limit == 0 {
				req.Limit, req.All = nil, true
			}
			v, err := p.WorkShow(ctx, req)
			if err != nil {
				return page{}, err
			}
			return page{inForce(v.Knowledge), v.KnowledgeTotal, v.KnowledgeNextCursor}, nil
		},
	}
	for name, read := range reads {
		t.Run(name, func(t *testing.T) {
			for _, at := range []struct {
				name string
				at   *int64
				want []string
			}{{"head", nil, head}, {"past", &past, then}} {
				t.Run(at.name, func(t *testing.T) {
					first, err := read(at.at, "", nil)
					require.NoError(t, err)
					require.Equal(t, at.want[:commands.DefaultPage], first.items, "the default page: the first 50, open loops first")
					require.Equal(t, len(at.want), first.total)
					require.NotEmpty(t, first.next)

					whole, err := read(at.at, "", new(0))
					require.NoError(t, err)
					require.Equal(t, at.want, whole.items)
					require.Empty(t, whole.next)

					var got []string
					cursor, pages := "", 0
					for {
						pg, err := read(at.at, cursor, new(7))
						require.NoError(t, err)
						require.Equal(t, len(at.want), pg.total)
						require.LessOrEqual(t, len(pg.items), 7)
						got = append(got, pg.items...)
						pages++
						if pg.next == "" {
							break
						}
						require.Len(t, pg.items, 7)
						cursor = pg.next
					}
					require.Equal(t, at.want, got, "every item in force once, in order")
					require.Equal(t, (len(at.want)+6)/7, pages)
					if name == "recovery inspect" {
						// --all: every item in force, after the cursor.
						for _, c := range []string{"", first.next} {
							var all []string
							err := p.RecoveryInspectEach(ctx, project.RecoveryInspectRequest{Session: s.Session.ID, Read: commands.Read{At: at.at}, KnowledgeCursor: c},
								func(rep *project.RecoveryReport) error {
									all = inForce(rep.Knowledge)
									require.Equal(t, len(at.want), rep.KnowledgeTotal)
									require.Empty(t, rep.KnowledgeNextCursor)
									return nil
								}, func(project.LogEvent) error { return nil }, func(*project.KnowledgeItem) error { return nil })
							require.NoError(t, err)
							if c == "" {
								require.Equal(t, at.want, all)
							} else {
								require.Equal(t, at.want[commands.DefaultPage:], all)
							}
						}
					}
				})
			}
			t.Run("ErrCursor", func(t *testing.T) {
				for _, bad := range []string{"not-a-cursor", commandsCursorOfAnotherList(t, p)} {
					_, err := read(nil, bad, nil)
					require.Equal(t, fault.InvalidInput, fault.CodeOf(err), "%v", err)
					require.Equal(t, "--knowledge-cursor", fault.As(err).Details["flag"])
					require.Equal(t, 1, fault.ExitCode(err))
					want := map[string]string{"recovery inspect": "awr recovery inspect --session " + s.Session.ID,
						"session show": "awr session show " + s.Session.ID, "work show": "awr work show W-1"}[name]
					require.Equal(t, want, fault.As(err).Hint)
					_, err = read(&past, bad, nil)
					require.Equal(t, fmt.Sprintf("%s --at %d", want, past), fault.As(err).Hint)
				}
			})
		})
	}
}

// commandsCursorOfAnotherList is a cursor awr gave for another list (a
// page of sessions): not one of the knowledge in force.
func commandsCursorOfAnotherList(t *testing.T, p *project.Project) string {
	t.Helper()
	list, err := p.SessionList(context.Background(), project.SessionListRequest{Limit: new(1)})
	require.NoError(t, err)
	if list.NextCursor != "" {
		return list.NextCursor
	}
	return "aWQ6eA" // base64 of "id:x", a session cursor's form
}

// TestSessionShow_CheckpointsPaged: a session with more checkpoints than
// a page shows its latest 50, oldest first, with checkpoints_total and
// the cursor of the older ones; following the cursors lists every
// checkpoint exactly once, at the head and at a past revision; All lists
// them whole; a cursor awr did not give, or one from beyond the revision
// read, is InvalidInput naming --checkpoints-cursor.
func TestSessionShow_CheckpointsPaged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := openW1(t)
	s, err := p.SessionStart(ctx, project.SessionStartRequest{Work: "W-1", Agent: "a0", Claim: true})
	require.NoError(t, err)
	var seqs []int64
	var past int64
	n := commands.DefaultPage + 5
	for i := range n {
		res, err := p.SessionCheckpoint(ctx, project.SessionCheckpointRequest{SessionID: s.Session.ID, Agent: "a0", Digest: fmt.Sprintf("Step %d", i+1), NextAction: "Go on"})
		require.NoError(t, err)
		seqs = append(seqs, res.Checkpoint.Seq)
		if i == 11 {
			past = res.ProjectRevision
		}
	}
	show := func(at *int64, cursor string, limit *int, all bool) (*project.SessionView, error) {
		return p.SessionShow(ctx, project.SessionShowRequest{Session: s.Session.ID, Read: commands.Read{At: at}, CheckpointsCursor: cursor, Limit: limit, All: all})
	}
	seqsOf := func(v *project.SessionView) (out []int64) {
		for _, c := range v.Checkpoints {
			out = append(out, c.Seq)
		}
		return out
	}
	for _, at := range []struct {
		name string
		at   *int64
		want []int64
	}{{"head", nil, seqs}, {"past", &past, seqs[:12]}} {
		t.Run(at.name, func(t *testing.T) {
			v, err := show(at.at, "", nil, false)
			require.NoError(t, err)
			require.Equal(t, len(at.want), v.CheckpointsTotal)
			page := min(len(at.want), commands.DefaultPage)
			require.Equal(t, at.want[len(at.want)-page:], seqsOf(v), "the latest, oldest first")
			require.Equal(t, len(at.want) > page, v.CheckpointsNextCursor != "")

			whole, err := show(at.at, "", nil, true)
			require.NoError(t, err)
			require.Equal(t, at.want, seqsOf(whole))
			require.Empty(t, whole.CheckpointsNextCursor)

			var got []int64
			for cursor := ""; ; {
				v, err := show(at.at, cursor, new(5), false)
				require.NoError(t, err)
				require.Equal(t, len(at.want), v.CheckpointsTotal)
				got = append(seqsOf(v), got...)
				if v.CheckpointsNextCursor == "" {
					break
				}
				require.Len(t, v.Checkpoints, 5)
				cursor = v.CheckpointsNextCursor
			}
			require.Equal(t, at.want, got, "every checkpoint once, in order")

			// Each (the CLI's --all): every one, one at a time.
			got = nil
			err = p.SessionShowEach(ctx, project.SessionShowRequest{Session: s.Session.ID, Read: commands.Read{At: at.at}, Limit: new(3)}, func(v *project.SessionView) error {
				require.Empty(t, v.Checkpoints)
				require.Equal(t, len(at.want), v.CheckpointsTotal)
				require.Empty(t, v.CheckpointsNextCursor)
				return nil
			}, func(c project.Checkpoint) error {
				got = append(got, c.Seq)
				return nil
			})
			require.NoError(t, err)
			require.Equal(t, at.want, got)
		})
	}
	t.Run("ErrCursor", func(t *testing.T) {
		head, err := show(nil, "", new(5), false)
		require.NoError(t, err)
		first := "awr session show " + s.Session.ID
		for _, c := range []struct {
			at     *int64
			cursor string
			hint   string
		}{
			{nil, "not-a-cursor", first},
			{nil, "aWQ6eA", first}, // a session cursor's form
			{&past, head.CheckpointsNextCursor, fmt.Sprintf("%s --at %d", first, past)}, // from beyond the revision read
		} {
			_, err := show(c.at, c.cursor, nil, false)
			require.Equal(t, fault.InvalidInput, fault.CodeOf(err), "%v", err)
			require.Equal(t, "--checkpoints-cursor", fault.As(err).Details["flag"])
			require.Equal(t, c.hint, fault.As(err).Hint)
			require.Equal(t, 1, fault.ExitCode(err))
		}
	})
}

// TestWorkShow_EvidencePaged: an item with more evidence than a page
// shows its latest 50 pieces, oldest first, with evidence_total and the
// cursor of the older ones; following the cursors lists every piece
// exactly once, at the head and at a past revision; the completion is
// judged on every piece, the page's or not (an older page does not hold
// the latest piece its criterion is judged by); a cursor awr did not give, or
// one from beyond the revision read, is InvalidInput naming
// --evidence-cursor.
func TestWorkShow_EvidencePaged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := openW1(t)
	var seqs []int64
	var past int64
	n := commands.DefaultPage + 6
	for i := range n {
		res, err := p.EvidenceAdd(ctx, project.EvidenceAddRequest{Work: "W-1", Criterion: "1", Command: "make test", ExitCode: new(i % 2)})
		require.NoError(t, err)
		seqs = append(seqs, res.Seq)
		if i == 8 {
			past = res.ProjectRevision
		}
	}
	show := func(at *int64, cursor string, limit *int, all bool) (*project.WorkShowResult, error) {
		return p.WorkShow(ctx, project.WorkShowRequest{Key: "W-1", Read: commands.Read{At: at}, EvidenceCursor: cursor, Limit: limit, All: all})
	}
	seqsOf := func(r *project.WorkShowResult) (out []int64) {
		for _, e := range r.Evidence {
			out = append(out, e.Seq)
		}
		return out
	}
	for _, at := range []struct {
		name string
		at   *int64
		want []int64
	}{{"head", nil, seqs}, {"past", &past, seqs[:9]}} {
		t.Run(at.name, func(t *testing.T) {
			r, err := show(at.at, "", nil, false)
			require.NoError(t, err)
			require.Equal(t, len(at.want), r.EvidenceTotal)
			page := min(len(at.want), commands.DefaultPage)
			require.Equal(t, at.want[len(at.want)-page:], seqsOf(r), "the latest, oldest first")
			require.Equal(t, len(at.want) > page, r.EvidenceNextCursor != "")
			require.Len(t, r.Completion.Criteria, 1)
			require.Equal(t, at.want[len(at.want)-1], r.Completion.Criteria[0].Seq, "judged on the latest piece")

			whole, err := show(at.at, "", nil, true)
			require.NoError(t, err)
			require.Equal(t, at.want, seqsOf(whole))
			require.Equal(t, r.Completion, whole.Completion)

			var got []int64
			for cursor := ""; ; {
				r, err := show(at.at, cursor, new(4), false)
				require.NoError(t, err)
				require.Equal(t, len(at.want), r.EvidenceTotal)
				require.Equal(t, whole.Completion, r.Completion, "judged on every piece, the page's or not")
				got = append(seqsOf(r), got...)
				if r.EvidenceNextCursor == "" {
					break
				}
				require.Len(t, r.Evidence, 4)
				cursor = r.EvidenceNextCursor
			}
			require.Equal(t, at.want, got, "every piece once, in order")
		})
	}
	t.Run("ErrCursor", func(t *testing.T) {
		head, err := show(nil, "", new(4), false)
		require.NoError(t, err)
		for _, c := range []struct {
			at     *int64
			cursor string
			hint   string
		}{
			{nil, "not-a-cursor", "awr work show W-1"},
			{&past, head.EvidenceNextCursor, fmt.Sprintf("awr work show W-1 --at %d", past)},
		} {
			_, err := show(c.at, c.cursor, nil, false)
			require.Equal(t, fault.InvalidInput, fault.CodeOf(err), "%v", err)
			require.Equal(t, "--evidence-cursor", fault.As(err).Details["flag"])
			require.Equal(t, c.hint, fault.As(err).Hint)
		}
	})
}
